/* A small OpenCL application with a kernel cache on disk, kept as the XDG
 * convention says ($XDG_CACHE_HOME, else $HOME/.cache) and trusted as some
 * real ones trust theirs: with a cached binary it makes its program from
 * that binary and gives up (exit 1) where the runtime refuses it; with
 * none it builds from source and keeps the binary for the next run. */
#include "check.h"
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

static const char *source =
    "__kernel void cube(__global uint *x) {\n"
    "  size_t i = get_global_id(0);\n"
    "  x[i] = x[i] * x[i] * x[i];\n"
    "}\n";

#define N 16

/* $XDG_CACHE_HOME/strict_cache/cube.bin, or under $HOME/.cache. */
static void cache_path(char *path, size_t size) {
  const char *xdg = getenv("XDG_CACHE_HOME");
  char dir[4096];
  if (xdg && *xdg) {
    snprintf(dir, sizeof dir, "%s", xdg);
  } else {
    snprintf(dir, sizeof dir, "%s/.cache", getenv("HOME"));
  }
  mkdir(dir, 0755);
  snprintf(path, size, "%s/strict_cache", dir);
  mkdir(path, 0755);
  snprintf(path, size, "%s/strict_cache/cube.bin", dir);
}

static cl_program from_cache(cl_context context, cl_device_id device, const char *path) {
  FILE *file = fopen(path, "rb");
  if (!file) return NULL;
  static unsigned char binary[1 << 20];
  size_t size = fread(binary, 1, sizeof binary, file);
  fclose(file);
  const unsigned char *binaries[1] = {binary};
  cl_int loaded, status;
  cl_program program =
      clCreateProgramWithBinary(context, 1, &device, &size, binaries, &loaded, &status);
  if (status != CL_SUCCESS) {
    printf("strict_cache: cached binary refused (%d); giving up\n", (int)status);
    exit(1);
  }
  printf("strict_cache: loaded the cached binary\n");
  return program;
}

/* Builds *program from source and keeps its binary at `path`. */
static cl_int from_source(cl_context context, cl_device_id device, const char *path,
                          cl_program *built) {
  cl_int status;
  cl_program program = clCreateProgramWithSource(context, 1, &source, NULL, &status);
  CHECK("clCreateProgramWithSource", status);
  CHECK("clBuildProgram", clBuildProgram(program, 1, &device, "", NULL, NULL));
  size_t size;
  CHECK("clGetProgramInfo",
        clGetProgramInfo(program, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, NULL));
  unsigned char *binary = malloc(size);
  CHECK("clGetProgramInfo",
        clGetProgramInfo(program, CL_PROGRAM_BINARIES, sizeof binary, &binary, NULL));
  FILE *file = fopen(path, "wb");
  if (file) {
    fwrite(binary, 1, size, file);
    fclose(file);
  }
  free(binary);
  printf("strict_cache: built from source, binary kept\n");
  *built = program;
  return CL_SUCCESS;
}

int main(void) {
  cl_int status;
  cl_device_id device;
  cl_context context;
  CHECK("opening the device", open_device(&device, &context));
  cl_command_queue queue = clCreateCommandQueue(context, device, 0, &status);
  CHECK("clCreateCommandQueue", status);
  char path[8192];
  cache_path(path, sizeof path);
  cl_program program = from_cache(context, device, path);
  if (program) {
    CHECK("clBuildProgram", clBuildProgram(program, 1, &device, "", NULL, NULL));
  } else {
    CHECK("building from source", from_source(context, device, path, &program));
  }
  cl_kernel cube = clCreateKernel(program, "cube", &status);
  CHECK("clCreateKernel", status);

  cl_uint x[N];
  for (int i = 0; i < N; i++) x[i] = i;
  cl_mem buffer =
      clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof x, x, &status);
  CHECK("clCreateBuffer", status);
  size_t global = N;
  CHECK("clSetKernelArg", clSetKernelArg(cube, 0, sizeof(cl_mem), &buffer));
  CHECK("cube", clEnqueueNDRangeKernel(queue, cube, 1, NULL, &global, NULL, 0, NULL, NULL));
  CHECK("clEnqueueReadBuffer",
        clEnqueueReadBuffer(queue, buffer, CL_TRUE, 0, sizeof x, x, 0, NULL, NULL));
  cl_uint sum = 0;
  for (int i = 0; i < N; i++) sum += x[i];
  printf("strict_cache: sum of cubes %u\n", (unsigned)sum);
  clReleaseMemObject(buffer);
  clReleaseKernel(cube);
  clReleaseProgram(program);
  clReleaseCommandQueue(queue);
  clReleaseContext(context);
  return 0;
}
