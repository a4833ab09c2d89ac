/* A small OpenCL application, unaware of clflow, doing three things the
 * OpenCL specification allows and real applications do:
 * - a filter's weights in a buffer the host may not touch after creating it
 *   (CL_MEM_HOST_NO_ACCESS, filled by CL_MEM_COPY_HOST_PTR), read as
 *   __constant memory;
 * - an optional buffer argument left out by a null cl_mem passed by value;
 * - a buffer of 24,588 bytes, no whole number of the uint4 a kernel zeroes
 *   it with (the last 12 bytes are never touched).
 * Every value is exact, so any device computes the very same bytes. */
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

  printf("quirks: blurred %.2f, offsets %.2f, %d bytes left\n", blurred, offsets, left);
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
