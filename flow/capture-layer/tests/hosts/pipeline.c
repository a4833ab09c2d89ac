/* A small OpenCL application, unaware of clflow: two kernels in a loop, the
 * second consuming the first's output, one launched with a NULL local size
 * and one with a __local argument, on a queue without profiling. It prints
 * a checksum of its result; `pipeline N crash` aborts after the loop. */
#include "check.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *source =
    "__kernel void square(__global const float *in, __global float *out, uint n) {\n"
    "  size_t i = get_global_id(0);\n"
    "  if (i < n) out[i] = in[i] * in[i] * SCALE;\n"
    "}\n"
    "__kernel void accumulate(__global float *acc, __global const float *x,\n"
    "                         __local float *scratch) {\n"
    "  size_t i = get_global_id(0), l = get_local_id(0);\n"
    "  scratch[l] = x[i];\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  acc[i] += scratch[l] + 1.0f;\n"
    "}\n";

#define N 256

int main(int argc, char **argv) {
  int iterations = argc > 1 ? atoi(argv[1]) : 3;
  cl_int status;
  cl_device_id device;
  cl_context context;
  CHECK("opening the device", open_device(&device, &context));
  cl_command_queue queue = clCreateCommandQueue(context, device, 0, &status);
  CHECK("clCreateCommandQueue", status);
  cl_program program = clCreateProgramWithSource(context, 1, &source, NULL, &status);
  CHECK("clCreateProgramWithSource", status);
  CHECK("clBuildProgram", clBuildProgram(program, 1, &device, "-DSCALE=0.5f", NULL, NULL));
  cl_kernel square = clCreateKernel(program, "square", &status);
  CHECK("clCreateKernel square", status);
  cl_kernel accumulate = clCreateKernel(program, "accumulate", &status);
  CHECK("clCreateKernel accumulate", status);

  float acc[N];
  for (int i = 0; i < N; i++) acc[i] = (float)(i % 7) * 0.25f;
  cl_mem acc_buf = clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                                  sizeof acc, acc, &status);
  CHECK("clCreateBuffer acc", status);
  cl_mem tmp_buf = clCreateBuffer(context, CL_MEM_READ_WRITE, sizeof acc, NULL, &status);
  CHECK("clCreateBuffer tmp", status);
  cl_uint n = N;
  size_t global = N, local = 64;
  for (int it = 0; it < iterations; it++) {
    CHECK("clSetKernelArg", clSetKernelArg(square, 0, sizeof(cl_mem), &acc_buf));
    CHECK("clSetKernelArg", clSetKernelArg(square, 1, sizeof(cl_mem), &tmp_buf));
    CHECK("clSetKernelArg", clSetKernelArg(square, 2, sizeof n, &n));
    CHECK("square", clEnqueueNDRangeKernel(queue, square, 1, NULL, &global, NULL, 0, NULL, NULL));
    CHECK("clSetKernelArg", clSetKernelArg(accumulate, 0, sizeof(cl_mem), &acc_buf));
    CHECK("clSetKernelArg", clSetKernelArg(accumulate, 1, sizeof(cl_mem), &tmp_buf));
    CHECK("clSetKernelArg", clSetKernelArg(accumulate, 2, local * sizeof(float), NULL));
    CHECK("accumulate",
          clEnqueueNDRangeKernel(queue, accumulate, 1, NULL, &global, &local, 0, NULL, NULL));
  }
  if (argc > 2 && strcmp(argv[2], "crash") == 0) {
    clFinish(queue);
    abort();
  }
  CHECK("clEnqueueReadBuffer",
        clEnqueueReadBuffer(queue, acc_buf, CL_TRUE, 0, sizeof acc, acc, 0, NULL, NULL));
  double sum = 0;
  for (int i = 0; i < N; i++) sum += acc[i];
  printf("pipeline: %d iterations, checksum %.6e\n", iterations, sum);
  clReleaseMemObject(acc_buf);
  clReleaseMemObject(tmp_buf);
  clReleaseKernel(square);
  clReleaseKernel(accumulate);
  clReleaseProgram(program);
  clReleaseCommandQueue(queue);
  clReleaseContext(context);
  return 0;
}
