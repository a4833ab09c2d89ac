/* Separate compilation, unaware of clflow: a header given to
 * clCompileProgram as a program of its own (included by name), a helper
 * and a kernel compiled apart, and clLinkProgram joining them. Prints a
 * checksum of the result. */
#include "check.h"
#include <stdio.h>

static const char *header = "#define SCALE 3.0f\n";
static const char *helper =
    "#include \"params/scale.h\"\n"
    "float scaled(float x) { return SCALE * x + OFFSET; }\n";
static const char *kernel =
    "float scaled(float x);\n"
    "__kernel void apply(__global float *a) {\n"
    "  size_t i = get_global_id(0);\n"
    "  a[i] = scaled(a[i]);\n"
    "}\n";

#define N 64

int main(void) {
  cl_int status;
  cl_device_id device;
  cl_context context;
  CHECK("opening the device", open_device(&device, &context));
  cl_command_queue queue = clCreateCommandQueue(context, device, 0, &status);
  CHECK("clCreateCommandQueue", status);
  cl_program h = clCreateProgramWithSource(context, 1, &header, NULL, &status);
  CHECK("header", status);
  cl_program p1 = clCreateProgramWithSource(context, 1, &helper, NULL, &status);
  CHECK("helper", status);
  cl_program p2 = clCreateProgramWithSource(context, 1, &kernel, NULL, &status);
  CHECK("kernel", status);
  const char *names[] = {"params/scale.h"};
  CHECK("clCompileProgram helper",
        clCompileProgram(p1, 1, &device, "-DOFFSET=0.5f", 1, &h, names, NULL, NULL));
  CHECK("clCompileProgram kernel", clCompileProgram(p2, 1, &device, "", 0, NULL, NULL, NULL, NULL));
  cl_program inputs[] = {p1, p2};
  cl_program linked = clLinkProgram(context, 1, &device, "", 2, inputs, NULL, NULL, &status);
  CHECK("clLinkProgram", status);
  cl_kernel apply = clCreateKernel(linked, "apply", &status);
  CHECK("clCreateKernel", status);
  float a[N];
  for (int i = 0; i < N; i++) a[i] = (float)i;
  cl_mem buf = clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof a, a, &status);
  CHECK("clCreateBuffer", status);
  CHECK("clSetKernelArg", clSetKernelArg(apply, 0, sizeof buf, &buf));
  size_t global = N;
  CHECK("launch", clEnqueueNDRangeKernel(queue, apply, 1, NULL, &global, NULL, 0, NULL, NULL));
  CHECK("read", clEnqueueReadBuffer(queue, buf, CL_TRUE, 0, sizeof a, a, 0, NULL, NULL));
  double sum = 0;
  for (int i = 0; i < N; i++) sum += a[i];
  printf("separate: checksum %.1f\n", sum);
  return 0;
}
