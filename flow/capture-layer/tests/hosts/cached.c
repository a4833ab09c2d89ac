/* A small OpenCL application with a kernel cache of its own, as real ones
 * have: it builds its program from source once and keeps the device binary,
 * then makes the program it launches from that binary. Where the runtime
 * refuses the binary, it builds from source again, as well-behaved caches
 * do. */
#include "check.h"
#include <stdio.h>
#include <stdlib.h>

static const char *source =
    "__kernel void square(__global uint *x) {\n"
    "  size_t i = get_global_id(0);\n"
    "  x[i] = x[i] * x[i];\n"
    "}\n";

#define N 32

int main(void) {
  cl_int status;
  cl_device_id device;
  cl_context context;
  CHECK("opening the device", open_device(&device, &context));
  cl_command_queue queue = clCreateCommandQueue(context, device, 0, &status);
  CHECK("clCreateCommandQueue", status);

  /* The first run's build, kept as the cache. */
  cl_program built = clCreateProgramWithSource(context, 1, &source, NULL, &status);
  CHECK("clCreateProgramWithSource", status);
  CHECK("clBuildProgram", clBuildProgram(built, 1, &device, "", NULL, NULL));
  size_t size;
  CHECK("clGetProgramInfo", clGetProgramInfo(built, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, NULL));
  unsigned char *binary = malloc(size);
  CHECK("clGetProgramInfo", clGetProgramInfo(built, CL_PROGRAM_BINARIES, sizeof binary, &binary, NULL));
  clReleaseProgram(built);

  /* A later run loads the cache. */
  cl_int loaded;
  const unsigned char *binaries[1] = {binary};
  cl_program program =
      clCreateProgramWithBinary(context, 1, &device, &size, binaries, &loaded, &status);
  if (status == CL_SUCCESS) {
    printf("cache: loaded the binary\n");
  } else {
    printf("cache: binary refused (%d), building from source\n", (int)status);
    program = clCreateProgramWithSource(context, 1, &source, NULL, &status);
    CHECK("clCreateProgramWithSource", status);
  }
  free(binary);
  CHECK("clBuildProgram", clBuildProgram(program, 1, &device, "", NULL, NULL));
  cl_kernel square = clCreateKernel(program, "square", &status);
  CHECK("clCreateKernel", status);

  cl_uint x[N];
  for (int i = 0; i < N; i++) x[i] = i;
  cl_mem buffer =
      clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof x, x, &status);
  CHECK("clCreateBuffer", status);
  size_t global = N;
  CHECK("clSetKernelArg", clSetKernelArg(square, 0, sizeof(cl_mem), &buffer));
  CHECK("square", clEnqueueNDRangeKernel(queue, square, 1, NULL, &global, NULL, 0, NULL, NULL));
  CHECK("clEnqueueReadBuffer",
        clEnqueueReadBuffer(queue, buffer, CL_TRUE, 0, sizeof x, x, 0, NULL, NULL));
  cl_uint sum = 0;
  for (int i = 0; i < N; i++) sum += x[i];
  printf("cache: sum of squares %u\n", (unsigned)sum);
  clReleaseMemObject(buffer);
  clReleaseKernel(square);
  clReleaseProgram(program);
  clReleaseCommandQueue(queue);
  clReleaseContext(context);
  return 0;
}
