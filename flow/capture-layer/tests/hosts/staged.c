/* An application with a bug the device hides: its kernel reads, for odd
 * work-items, a scratch buffer nobody wrote (created without host data,
 * never written, filled or mapped). It runs the kernel twice: on such a
 * buffer, then on one it filled with clEnqueueFillBuffer first. It prints
 * the sum of each output. */
#include "check.h"

static const char *source =
    "__kernel void stage(__global const int *in, __global int *tmp, __global int *out) {\n"
    "  size_t i = get_global_id(0);\n"
    "  if (i % 2 == 0) tmp[i] = in[i];\n"
    "  out[i] = 100 / (tmp[i] + 1);\n"
    "}\n";

#define N 64

int main(void) {
  cl_int status;
  cl_device_id device;
  cl_context context;
  CHECK("opening the device", open_device(&device, &context));
  cl_command_queue queue = clCreateCommandQueue(context, device, 0, &status);
  CHECK("clCreateCommandQueue", status);
  cl_kernel kernel;
  CHECK("building stage", build_kernel(context, device, source, "", "stage", &kernel));
  int in[N];
  for (int i = 0; i < N; i++) in[i] = i;
  cl_mem in_buf = clCreateBuffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof in,
                                 in, &status);
  CHECK("clCreateBuffer in", status);
  cl_mem scratch[2];
  for (int k = 0; k < 2; k++) {
    scratch[k] = clCreateBuffer(context, CL_MEM_READ_WRITE, sizeof in, NULL, &status);
    CHECK("clCreateBuffer scratch", status);
  }
  int zero = 0;
  CHECK("clEnqueueFillBuffer", clEnqueueFillBuffer(queue, scratch[1], &zero, sizeof zero, 0,
                                                   sizeof in, 0, NULL, NULL));
  cl_mem out_buf = clCreateBuffer(context, CL_MEM_WRITE_ONLY, sizeof in, NULL, &status);
  CHECK("clCreateBuffer out", status);
  for (int k = 0; k < 2; k++) {
    CHECK("clSetKernelArg", clSetKernelArg(kernel, 0, sizeof(cl_mem), &in_buf));
    CHECK("clSetKernelArg", clSetKernelArg(kernel, 1, sizeof(cl_mem), &scratch[k]));
    CHECK("clSetKernelArg", clSetKernelArg(kernel, 2, sizeof(cl_mem), &out_buf));
    size_t global = N;
    CHECK("clEnqueueNDRangeKernel",
          clEnqueueNDRangeKernel(queue, kernel, 1, NULL, &global, NULL, 0, NULL, NULL));
    int out[N];
    CHECK("clEnqueueReadBuffer",
          clEnqueueReadBuffer(queue, out_buf, CL_TRUE, 0, sizeof out, out, 0, NULL, NULL));
    long sum = 0;
    for (int i = 0; i < N; i++) sum += out[i];
    printf("stage %d: sum %ld\n", k, sum);
  }
  return 0;
}
