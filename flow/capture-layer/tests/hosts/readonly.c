/* An application with a bug the device forgives: it creates its input
 * CL_MEM_READ_ONLY, and the kernel writes it back in place (clamping
 * negative values). Devices run it; OpenCL leaves the result undefined.
 * It prints the sum of its output. */
#include "check.h"

static const char *source =
    "__kernel void clamp_half(__global float *in, __global float *out) {\n"
    "  size_t i = get_global_id(0);\n"
    "  float x = in[i];\n"
    "  if (x < 0.0f) in[i] = x = 0.0f;\n"
    "  out[i] = 0.5f * x;\n"
    "}\n";

#define N 128

int main(void) {
  cl_int status;
  cl_device_id device;
  cl_context context;
  CHECK("opening the device", open_device(&device, &context));
  cl_command_queue queue = clCreateCommandQueue(context, device, 0, &status);
  CHECK("clCreateCommandQueue", status);
  cl_kernel kernel;
  CHECK("building clamp_half", build_kernel(context, device, source, "", "clamp_half", &kernel));
  float in[N];
  for (int i = 0; i < N; i++) in[i] = (float)(i % 5) - 2.0f;
  cl_mem in_buf = clCreateBuffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof in,
                                 in, &status);
  CHECK("clCreateBuffer in", status);
  cl_mem out_buf = clCreateBuffer(context, CL_MEM_WRITE_ONLY, sizeof in, NULL, &status);
  CHECK("clCreateBuffer out", status);
  CHECK("clSetKernelArg", clSetKernelArg(kernel, 0, sizeof(cl_mem), &in_buf));
  CHECK("clSetKernelArg", clSetKernelArg(kernel, 1, sizeof(cl_mem), &out_buf));
  size_t global = N;
  CHECK("clEnqueueNDRangeKernel",
        clEnqueueNDRangeKernel(queue, kernel, 1, NULL, &global, NULL, 0, NULL, NULL));
  float out[N];
  CHECK("clEnqueueReadBuffer",
        clEnqueueReadBuffer(queue, out_buf, CL_TRUE, 0, sizeof out, out, 0, NULL, NULL));
  float sum = 0.0f;
  for (int i = 0; i < N; i++) sum += out[i];
  printf("clamp_half: sum %g\n", sum);
  return 0;
}
