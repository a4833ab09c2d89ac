/* A small OpenCL application, unaware of clflow, with three bugs real
 * image filters have, which OpenCL leaves undefined:
 * - `pad` runs on an NDRange rounded up to whole 8x8 work-groups (16x8 for
 *   a 10x6 image) and writes every work-item's texel, with no bounds check;
 * - `blend` reads an alpha mask through a sampler with no address mode at
 *   coordinates shifted by an offset, so the work-items left of the offset
 *   read outside the mask;
 * - `ridge` takes the larger of each value and its right neighbour from a
 *   tile in local memory one wider than the work-group, whose last element
 *   no work-item writes.
 * Devices drop such writes and read such texels as (0,0,0,0) (PoCL) or as
 * the edge (other runtimes); every value in range is exact. What `ridge`
 * computes for the last work-item of each group is whatever the device's
 * local memory held: it is not printed. */
#define CL_USE_DEPRECATED_OPENCL_1_1_APIS
#include "check.h"
#include <stdio.h>

static const char *source =
    "__kernel void pad(__write_only image2d_t dst, uint4 colour) {\n"
    "  int2 at = (int2)(get_global_id(0), get_global_id(1));\n"
    "  write_imageui(dst, at, colour + (uint4)(at.x + at.y));\n"
    "}\n"
    "__kernel void blend(__read_only image2d_t mask, __global uint *out, int2 offset) {\n"
    "  const sampler_t s = CLK_NORMALIZED_COORDS_FALSE | CLK_FILTER_NEAREST;\n"
    "  int x = get_global_id(0), y = get_global_id(1);\n"
    "  float4 alpha = read_imagef(mask, s, (int2)(x, y) - offset);\n"
    "  out[y * get_global_size(0) + x] = (uint)(alpha.w * 100.0f);\n"
    "}\n"
    "__kernel void ridge(__global const uint *in, __global uint *out) {\n"
    "  __local uint tile[9];\n"
    "  int l = get_local_id(0), i = get_global_id(0);\n"
    "  tile[l] = in[i];\n"
    "  barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  out[i] = max(tile[l], tile[l + 1]);\n"
    "}\n";

#define W 10
#define H 6

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
  cl_kernel pad = clCreateKernel(program, "pad", &status);
  CHECK("clCreateKernel pad", status);
  cl_kernel blend = clCreateKernel(program, "blend", &status);
  CHECK("clCreateKernel blend", status);
  cl_kernel ridge = clCreateKernel(program, "ridge", &status);
  CHECK("clCreateKernel ridge", status);

  cl_image_format rgba8 = {CL_RGBA, CL_UNSIGNED_INT8};
  cl_mem padded = clCreateImage2D(context, CL_MEM_WRITE_ONLY, &rgba8, W, H, 0, NULL, &status);
  CHECK("clCreateImage2D padded", status);
  cl_uint colour[4] = {10, 20, 30, 40};
  size_t rounded[2] = {16, 8}, group[2] = {8, 8};
  CHECK("clSetKernelArg", clSetKernelArg(pad, 0, sizeof(cl_mem), &padded));
  CHECK("clSetKernelArg", clSetKernelArg(pad, 1, sizeof colour, colour));
  CHECK("pad", clEnqueueNDRangeKernel(queue, pad, 2, NULL, rounded, group, 0, NULL, NULL));
  unsigned char texels[H][W][4];
  size_t origin[3] = {0, 0, 0}, region[3] = {W, H, 1};
  CHECK("clEnqueueReadImage", clEnqueueReadImage(queue, padded, CL_TRUE, origin, region, 0, 0,
                                                 texels, 0, NULL, NULL));
  long padded_sum = 0;
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++)
      for (int c = 0; c < 4; c++) padded_sum += texels[y][x][c];

  cl_image_format alpha8 = {CL_RGBA, CL_UNORM_INT8};
  unsigned char mask[H][W][4];
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++)
      for (int c = 0; c < 4; c++) mask[y][x][c] = 255;
  cl_mem mask_image = clCreateImage2D(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, &alpha8,
                                      W, H, 0, mask, &status);
  CHECK("clCreateImage2D mask", status);
  cl_uint blended[H * W];
  cl_mem out = clCreateBuffer(context, CL_MEM_WRITE_ONLY, sizeof blended, NULL, &status);
  CHECK("clCreateBuffer out", status);
  cl_int offset[2] = {3, 0};
  size_t global[2] = {W, H};
  CHECK("clSetKernelArg", clSetKernelArg(blend, 0, sizeof(cl_mem), &mask_image));
  CHECK("clSetKernelArg", clSetKernelArg(blend, 1, sizeof(cl_mem), &out));
  CHECK("clSetKernelArg", clSetKernelArg(blend, 2, sizeof offset, offset));
  CHECK("blend", clEnqueueNDRangeKernel(queue, blend, 2, NULL, global, NULL, 0, NULL, NULL));
  CHECK("clEnqueueReadBuffer",
        clEnqueueReadBuffer(queue, out, CL_TRUE, 0, sizeof blended, blended, 0, NULL, NULL));
  long blended_sum = 0;
  for (int i = 0; i < H * W; i++) blended_sum += blended[i];

  cl_uint values[32];
  for (int i = 0; i < 32; i++) values[i] = (cl_uint)((i * 7) % 11);
  cl_mem values_buf =
      clCreateBuffer(context, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof values, values, &status);
  CHECK("clCreateBuffer values", status);
  cl_mem ridges = clCreateBuffer(context, CL_MEM_WRITE_ONLY, sizeof values, NULL, &status);
  CHECK("clCreateBuffer ridges", status);
  size_t items = 32, tile = 8;
  CHECK("clSetKernelArg", clSetKernelArg(ridge, 0, sizeof(cl_mem), &values_buf));
  CHECK("clSetKernelArg", clSetKernelArg(ridge, 1, sizeof(cl_mem), &ridges));
  CHECK("ridge", clEnqueueNDRangeKernel(queue, ridge, 1, NULL, &items, &tile, 0, NULL, NULL));
  CHECK("clFinish", clFinish(queue));

  printf("edges: padded %ld, blended %ld\n", padded_sum, blended_sum);
  clReleaseMemObject(ridges);
  clReleaseMemObject(values_buf);
  clReleaseKernel(ridge);
  clReleaseMemObject(out);
  clReleaseMemObject(mask_image);
  clReleaseMemObject(padded);
  clReleaseKernel(blend);
  clReleaseKernel(pad);
  clReleaseProgram(program);
  clReleaseCommandQueue(queue);
  clReleaseContext(context);
  return 0;
}
