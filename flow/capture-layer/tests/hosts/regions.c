/* A small OpenCL application, unaware of clflow: its kernels made all at
 * once (clCreateKernelsInProgram), one launched on a sub-buffer (the second
 * half of a buffer), and one reading an image through a sampler. */
#define CL_USE_DEPRECATED_OPENCL_1_1_APIS
#include "check.h"
#include <stdio.h>
#include <string.h>

static const char *source =
    "__kernel void twice(__global float *x) {\n"
    "  size_t i = get_global_id(0);\n"
    "  x[i] = 2.0f * x[i];\n"
    "}\n"
    "__kernel void sample(__read_only image2d_t img, sampler_t s, __global float *out) {\n"
    "  int i = get_global_id(0);\n"
    "  out[i] = read_imagef(img, s, (int2)(i, 0)).x;\n"
    "}\n";

#define N 512

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

  float x[N];
  for (int i = 0; i < N; i++) x[i] = (float)i;
  cl_mem whole = clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof x, x,
                                &status);
  CHECK("clCreateBuffer", status);
  cl_buffer_region half = {N / 2 * sizeof(float), N / 2 * sizeof(float)};
  cl_mem upper = clCreateSubBuffer(whole, 0, CL_BUFFER_CREATE_TYPE_REGION, &half, &status);
  CHECK("clCreateSubBuffer", status);
  cl_kernel kernels[2], twice = NULL, sample = NULL;
  CHECK("clCreateKernelsInProgram", clCreateKernelsInProgram(program, 2, kernels, NULL));
  for (int k = 0; k < 2; k++) {
    char name[32] = {0};
    CHECK("clGetKernelInfo",
          clGetKernelInfo(kernels[k], CL_KERNEL_FUNCTION_NAME, sizeof name - 1, name, NULL));
    if (strcmp(name, "twice") == 0) twice = kernels[k];
    if (strcmp(name, "sample") == 0) sample = kernels[k];
  }
  CHECK("clSetKernelArg", clSetKernelArg(twice, 0, sizeof(cl_mem), &upper));
  size_t global = N / 2;
  CHECK("twice", clEnqueueNDRangeKernel(queue, twice, 1, NULL, &global, NULL, 0, NULL, NULL));

  cl_image_format format = {CL_R, CL_FLOAT};
  float pixels[16];
  for (int i = 0; i < 16; i++) pixels[i] = (float)i;
  cl_mem image = clCreateImage2D(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, &format, 16, 1,
                                 0, pixels, &status);
  CHECK("clCreateImage2D", status);
  cl_sampler sampler =
      clCreateSampler(context, CL_FALSE, CL_ADDRESS_CLAMP_TO_EDGE, CL_FILTER_NEAREST, &status);
  CHECK("clCreateSampler", status);
  cl_mem out = clCreateBuffer(context, CL_MEM_WRITE_ONLY, 16 * sizeof(float), NULL, &status);
  CHECK("clCreateBuffer out", status);
  CHECK("clSetKernelArg", clSetKernelArg(sample, 0, sizeof(cl_mem), &image));
  CHECK("clSetKernelArg", clSetKernelArg(sample, 1, sizeof(cl_sampler), &sampler));
  CHECK("clSetKernelArg", clSetKernelArg(sample, 2, sizeof(cl_mem), &out));
  size_t pixels_n = 16;
  CHECK("sample", clEnqueueNDRangeKernel(queue, sample, 1, NULL, &pixels_n, NULL, 0, NULL, NULL));

  CHECK("clEnqueueReadBuffer",
        clEnqueueReadBuffer(queue, whole, CL_TRUE, 0, sizeof x, x, 0, NULL, NULL));
  double sum = 0;
  for (int i = 0; i < N; i++) sum += x[i];
  printf("regions: checksum %.1f\n", sum);
  return 0;
}
