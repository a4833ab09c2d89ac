/* A small OpenCL application, unaware of clflow, doing four things the
 * OpenCL specification allows and real applications do:
 * - a filter's weights in a buffer the host may not touch after creating it
 *   (CL_MEM_HOST_NO_ACCESS, filled by CL_MEM_COPY_HOST_PTR), read as
 *   __constant memory;
 * - an optional buffer argument left out by a null cl_mem passed by value;
 * - a buffer of 24,588 bytes, no whole number of the uint4 a kernel zeroes
 *   it with (the last 12 bytes are never touched);
 * - an image the host may not read either (CL_MEM_HOST_NO_ACCESS), read by
 *   a kernel through a sampler.
 * Every value is exact, so any device computes the very same bytes. */
#define CL_USE_DEPRECATED_OPENCL_1_1_APIS
#include "check.h"
#include <stdio.h>
#include <string.h>

static const char *source =
    "__kernel void blur(__global const float *in, __global float *out,\n"
    "                   __constant float *weights, int taps) {\n"
    "  int i = get_global_id(0), n = get_global_size(0);\n"
    "  float sum = 0.0f;\n"
    "  for (int t = 0; t < taps; t++) sum += weights[t] * in[(i + t) % n];\n"
    "  out[i] = sum;\n"
    "}\n"
    "__kernel void offset(__global float *out, __global const float *bias, float k) {\n"
    "  size_t i = get_global_id(0);\n"
    "  out[i] = k * (float)i + (bias ? bias[0] : 0.0f);\n"
    "}\n"
    "__kernel void bzero4(__global uint4 *buf, ulong n) {\n"
    "  size_t i = get_global_id(0);\n"
    "  if (i < n) buf[i] = (uint4)(0u);\n"
    "}\n"
    "__kernel void invert(__read_only image2d_t img, sampler_t s, __global uint *out) {\n"
    "  int i = get_global_id(0);\n"
    "  out[i] = 255u - read_imageui(img, s, (int2)(i, 0)).x;\n"
    "}\n";

#define N 64
#define TAPS 3
#define ODD_BYTES 24588

int main(void) {
  cl_int status;
  cl_device_id device;
  cl_context context;
  CHECK("opening the device", open_device(&device, &context));
  cl_command_queue queue = clCreateCommandQueue(context, device, 0, &status);
  CHECK("clCreateCommandQueue", status);
  cl_program program = clCreateProgramWithSource(context, 1, &source, NULL, &status);
  CHECK("clCreateProgramWithSource", status);
  CHECK("clBuildProgram", clBuildProgram(program, 1, &device, "", NULL, NULL));
  cl_kernel blur = clCreateKernel(program, "blur", &status);
  CHECK("clCreateKernel blur", status);
  cl_kernel offset = clCreateKernel(program, "offset", &status);
  CHECK("clCreateKernel offset", status);
  cl_kernel bzero4 = clCreateKernel(program, "bzero4", &status);
  CHECK("clCreateKernel bzero4", status);
  cl_kernel invert = clCreateKernel(program, "invert", &status);
  CHECK("clCreateKernel invert", status);

  float in[N], out[N], weights[TAPS] = {0.25f, 0.5f, 0.25f};
  for (int i = 0; i < N; i++) in[i] = (float)(i % 8);
  cl_mem in_buf =
      clCreateBuffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof in, in, &status);
  CHECK("clCreateBuffer in", status);
  cl_mem out_buf = clCreateBuffer(context, CL_MEM_WRITE_ONLY, sizeof out, NULL, &status);
  CHECK("clCreateBuffer out", status);
  cl_mem weights_buf =
      clCreateBuffer(context, CL_MEM_READ_ONLY | CL_MEM_HOST_NO_ACCESS | CL_MEM_COPY_HOST_PTR,
                     sizeof weights, weights, &status);
  CHECK("clCreateBuffer weights", status);
  cl_int taps = TAPS;
  size_t global = N;
  CHECK("clSetKernelArg", clSetKernelArg(blur, 0, sizeof(cl_mem), &in_buf));
  CHECK("clSetKernelArg", clSetKernelArg(blur, 1, sizeof(cl_mem), &out_buf));
  CHECK("clSetKernelArg", clSetKernelArg(blur, 2, sizeof(cl_mem), &weights_buf));
  CHECK("clSetKernelArg", clSetKernelArg(blur, 3, sizeof taps, &taps));
  CHECK("blur", clEnqueueNDRangeKernel(queue, blur, 1, NULL, &global, NULL, 0, NULL, NULL));
  CHECK("clEnqueueReadBuffer",
        clEnqueueReadBuffer(queue, out_buf, CL_TRUE, 0, sizeof out, out, 0, NULL, NULL));
  double blurred = 0;
  for (int i = 0; i < N; i++) blurred += out[i];

  cl_mem none = NULL;
  cl_float k = 0.5f;
  CHECK("clSetKernelArg", clSetKernelArg(offset, 0, sizeof(cl_mem), &out_buf));
  CHECK("clSetKernelArg", clSetKernelArg(offset, 1, sizeof(cl_mem), &none));
  CHECK("clSetKernelArg", clSetKernelArg(offset, 2, sizeof k, &k));
  CHECK("offset", clEnqueueNDRangeKernel(queue, offset, 1, NULL, &global, NULL, 0, NULL, NULL));
  CHECK("clEnqueueReadBuffer",
        clEnqueueReadBuffer(queue, out_buf, CL_TRUE, 0, sizeof out, out, 0, NULL, NULL));
  double offsets = 0;
  for (int i = 0; i < N; i++) offsets += out[i];

  static unsigned char odd[ODD_BYTES];
  memset(odd, 0xAB, sizeof odd);
  cl_mem odd_buf =
      clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof odd, odd, &status);
  CHECK("clCreateBuffer odd", status);
  cl_ulong vectors = ODD_BYTES / 16;
  size_t zeroed = vectors;
  CHECK("clSetKernelArg", clSetKernelArg(bzero4, 0, sizeof(cl_mem), &odd_buf));
  CHECK("clSetKernelArg", clSetKernelArg(bzero4, 1, sizeof vectors, &vectors));
  CHECK("bzero4", clEnqueueNDRangeKernel(queue, bzero4, 1, NULL, &zeroed, NULL, 0, NULL, NULL));
  CHECK("clEnqueueReadBuffer",
        clEnqueueReadBuffer(queue, odd_buf, CL_TRUE, 0, sizeof odd, odd, 0, NULL, NULL));
  int left = 0;
  for (int i = 0; i < ODD_BYTES; i++) left += odd[i] != 0;

  cl_image_format format = {CL_R, CL_UNSIGNED_INT8};
  unsigned char pixels[N];
  for (int i = 0; i < N; i++) pixels[i] = (unsigned char)(3 * i);
  cl_mem image = clCreateImage2D(context, CL_MEM_READ_ONLY | CL_MEM_HOST_NO_ACCESS | CL_MEM_COPY_HOST_PTR,
                                 &format, N, 1, 0, pixels, &status);
  CHECK("clCreateImage2D", status);
  cl_sampler sampler =
      clCreateSampler(context, CL_FALSE, CL_ADDRESS_CLAMP_TO_EDGE, CL_FILTER_NEAREST, &status);
  CHECK("clCreateSampler", status);
  cl_uint inverted[N];
  cl_mem inverted_buf = clCreateBuffer(context, CL_MEM_WRITE_ONLY, sizeof inverted, NULL, &status);
  CHECK("clCreateBuffer inverted", status);
  CHECK("clSetKernelArg", clSetKernelArg(invert, 0, sizeof(cl_mem), &image));
  CHECK("clSetKernelArg", clSetKernelArg(invert, 1, sizeof(cl_sampler), &sampler));
  CHECK("clSetKernelArg", clSetKernelArg(invert, 2, sizeof(cl_mem), &inverted_buf));
  CHECK("invert", clEnqueueNDRangeKernel(queue, invert, 1, NULL, &global, NULL, 0, NULL, NULL));
  CHECK("clEnqueueReadBuffer", clEnqueueReadBuffer(queue, inverted_buf, CL_TRUE, 0, sizeof inverted,
                                                   inverted, 0, NULL, NULL));
  long inverse = 0;
  for (int i = 0; i < N; i++) inverse += inverted[i];

  printf("quirks: blurred %.2f, offsets %.2f, %d bytes left, inverse %ld\n", blurred, offsets, left,
         inverse);
  clReleaseMemObject(image);
  clReleaseMemObject(inverted_buf);
  clReleaseSampler(sampler);
  clReleaseKernel(invert);
  clReleaseMemObject(in_buf);
  clReleaseMemObject(out_buf);
  clReleaseMemObject(weights_buf);
  clReleaseMemObject(odd_buf);
  clReleaseKernel(blur);
  clReleaseKernel(offset);
  clReleaseKernel(bzero4);
  clReleaseProgram(program);
  clReleaseCommandQueue(queue);
  clReleaseContext(context);
  return 0;
}
