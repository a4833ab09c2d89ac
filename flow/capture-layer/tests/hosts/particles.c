/* A small OpenCL application, unaware of clflow: particles held as an array
 * of structs, advanced by their velocity on one command queue (created with
 * profiling, which it reads itself) and slowed on another (created without),
 * two steps of each. Its kernels name the struct by its tag and by a
 * typedef. Every value is exact in float, with or without fused
 * multiply-adds, so any device computes the very same bytes. */
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include "check.h"
#include <stdio.h>

static const char *source =
    "struct Particle { float4 pos; float4 vel; uint steps; };\n"
    "typedef struct Particle particle_t;\n"
    "__kernel void advance(__global struct Particle *ps, float dt) {\n"
    "  size_t i = get_global_id(0);\n"
    "  ps[i].pos += ps[i].vel * dt;\n"
    "  ps[i].steps += 1;\n"
    "}\n"
    "__kernel void damp(__global particle_t *ps, float factor) {\n"
    "  size_t i = get_global_id(0);\n"
    "  ps[i].vel *= factor;\n"
    "}\n";

/* The host's view of struct Particle: 16 + 16 + 4 bytes, padded to 48 as
 * the float4 members align it. */
typedef struct {
  cl_float4 pos;
  cl_float4 vel;
  cl_uint steps;
} Particle;
_Static_assert(sizeof(Particle) == 48, "struct Particle is 48 bytes in OpenCL C");

#define N 256
#define STEPS 2

int main(void) {
  cl_int status;
  cl_device_id device;
  cl_context context;
  CHECK("opening the device", open_device(&device, &context));
  cl_command_queue timed =
      clCreateCommandQueue(context, device, CL_QUEUE_PROFILING_ENABLE, &status);
  CHECK("clCreateCommandQueue (profiling)", status);
  cl_command_queue plain = clCreateCommandQueue(context, device, 0, &status);
  CHECK("clCreateCommandQueue", status);
  cl_program program = clCreateProgramWithSource(context, 1, &source, NULL, &status);
  CHECK("clCreateProgramWithSource", status);
  CHECK("clBuildProgram", clBuildProgram(program, 1, &device, "", NULL, NULL));
  cl_kernel advance = clCreateKernel(program, "advance", &status);
  CHECK("clCreateKernel advance", status);
  cl_kernel damp = clCreateKernel(program, "damp", &status);
  CHECK("clCreateKernel damp", status);

  static Particle ps[N];
  for (int i = 0; i < N; i++) {
    ps[i].pos = (cl_float4){{(float)i, (float)-i, 0.5f, 1.0f}};
    ps[i].vel = (cl_float4){{1.0f, 2.0f, -0.25f, 0.0f}};
    ps[i].steps = 0;
  }
  cl_mem buffer =
      clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof ps, ps, &status);
  CHECK("clCreateBuffer", status);
  cl_float dt = 0.5f, factor = 0.5f;
  size_t global = N;
  cl_ulong timed_ns = 0;
  for (int step = 0; step < STEPS; step++) {
    cl_event done;
    CHECK("clSetKernelArg", clSetKernelArg(advance, 0, sizeof(cl_mem), &buffer));
    CHECK("clSetKernelArg", clSetKernelArg(advance, 1, sizeof dt, &dt));
    CHECK("advance",
          clEnqueueNDRangeKernel(timed, advance, 1, NULL, &global, NULL, 0, NULL, &done));
    CHECK("clWaitForEvents", clWaitForEvents(1, &done));
    cl_ulong start, end;
    CHECK("clGetEventProfilingInfo",
          clGetEventProfilingInfo(done, CL_PROFILING_COMMAND_START, sizeof start, &start, NULL));
    CHECK("clGetEventProfilingInfo",
          clGetEventProfilingInfo(done, CL_PROFILING_COMMAND_END, sizeof end, &end, NULL));
    timed_ns += end - start;
    clReleaseEvent(done);
    CHECK("clSetKernelArg", clSetKernelArg(damp, 0, sizeof(cl_mem), &buffer));
    CHECK("clSetKernelArg", clSetKernelArg(damp, 1, sizeof factor, &factor));
    CHECK("damp", clEnqueueNDRangeKernel(plain, damp, 1, NULL, &global, NULL, 0, NULL, NULL));
    CHECK("clFinish", clFinish(plain));
  }
  CHECK("clEnqueueReadBuffer",
        clEnqueueReadBuffer(plain, buffer, CL_TRUE, 0, sizeof ps, ps, 0, NULL, NULL));
  double x = 0;
  cl_uint steps = 0;
  for (int i = 0; i < N; i++) {
    x += ps[i].pos.s[0];
    steps += ps[i].steps;
  }
  printf("particles: %d steps, sum of x %.3f, %u particle steps, timed %s\n", STEPS, x, steps,
         timed_ns > 0 ? "yes" : "no");
  clReleaseMemObject(buffer);
  clReleaseKernel(advance);
  clReleaseKernel(damp);
  clReleaseProgram(program);
  clReleaseCommandQueue(timed);
  clReleaseCommandQueue(plain);
  clReleaseContext(context);
  return 0;
}
