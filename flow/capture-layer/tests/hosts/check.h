/* What the test hosts share: a call that must succeed, and the first
 * device of the first platform with a context and a queue (created
 * without profiling, as applications often do). */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdio.h>

#define CHECK(what, status)                                                 \
  if ((status) != CL_SUCCESS) {                                             \
    fprintf(stderr, "%s: %s failed (%d)\n", __FILE__, what, (int)(status)); \
    return 1;                                                               \
  }

/* A kernel built from one source on the device. */
static inline cl_int build_kernel(cl_context context, cl_device_id device, const char *source,
                                  const char *options, const char *name, cl_kernel *kernel) {
  cl_int status;
  cl_program program = clCreateProgramWithSource(context, 1, &source, NULL, &status);
  if (status == CL_SUCCESS) status = clBuildProgram(program, 1, &device, options, NULL, NULL);
  if (status == CL_SUCCESS) *kernel = clCreateKernel(program, name, &status);
  return status;
}

/* The first device of the first platform, and a context on it. */
static cl_int open_device(cl_device_id *device, cl_context *context) {
  cl_platform_id platform;
  cl_int status = clGetPlatformIDs(1, &platform, NULL);
  if (status == CL_SUCCESS) status = clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, device, NULL);
  if (status == CL_SUCCESS) *context = clCreateContext(NULL, 1, device, NULL, NULL, &status);
  return status;
}
