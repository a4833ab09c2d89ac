/*
 * A client of a real BLAS library: one single-precision GEMM through
 * CLBlast's C API, C = A B with m = 256, n = 192, k = 128 (row-major; or the
 * m n k given as arguments), on the first OpenCL device. The library builds
 * and launches its own kernels; this program never sees them. Prints a
 * checksum of C.
 *
 * CLBlast takes a small GEMM through its direct kernel or its indirect one
 * by a size its tuning for the device sets; --indirect sets that size to 0
 * (CLBlastOverrideParameters), so that every device runs the same kernel.
 */
#define CL_TARGET_OPENCL_VERSION 120
#include <clblast_c.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv) {
    size_t m = 256, n = 192, k = 128;
    int indirect = argc > 1 && strcmp(argv[1], "--indirect") == 0;
    argc -= indirect;
    argv += indirect;
    if (argc == 4) {
        m = strtoul(argv[1], NULL, 10);
        n = strtoul(argv[2], NULL, 10);
        k = strtoul(argv[3], NULL, 10);
    }
    if (argc != 1 && (argc != 4 || m == 0 || n == 0 || k == 0)) {
        fprintf(stderr, "usage: blas_sgemm [--indirect] [M N K]\n");
        return 2;
    }
    cl_platform_id platform;
    cl_device_id device;
    cl_int status;
    if (clGetPlatformIDs(1, &platform, NULL) != CL_SUCCESS ||
        clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL) != CL_SUCCESS) {
        fprintf(stderr, "blas_sgemm: no OpenCL device\n");
        return 1;
    }
    if (indirect) {
        const char *name = "XGEMM_MIN_INDIRECT_SIZE";
        const size_t size = 0;
        if (CLBlastOverrideParameters(device, "GemmRoutine", CLBlastPrecisionSingle, 1, &name,
                                      &size) != CLBlastSuccess) {
            fprintf(stderr, "blas_sgemm: CLBlast would not take the indirect route\n");
            return 1;
        }
    }
    cl_context context = clCreateContext(NULL, 1, &device, NULL, NULL, &status);
    cl_command_queue queue = clCreateCommandQueue(context, device, 0, &status);
    float *a = malloc(m * k * sizeof *a), *b = malloc(k * n * sizeof *b);
    float *c = calloc(m * n, sizeof *c);
    for (size_t i = 0; i < m * k; i++) a[i] = (float)(i % 13) / 13.0f;
    for (size_t i = 0; i < k * n; i++) b[i] = (float)(i % 7) / 7.0f;
    const cl_mem_flags copy = CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR;
    cl_mem A = clCreateBuffer(context, copy, m * k * sizeof *a, a, &status);
    cl_mem B = clCreateBuffer(context, copy, k * n * sizeof *b, b, &status);
    cl_mem C = clCreateBuffer(context, copy, m * n * sizeof *c, c, &status);
    cl_event done = NULL;
    CLBlastStatusCode blas = CLBlastSgemm(CLBlastLayoutRowMajor, CLBlastTransposeNo,
                                          CLBlastTransposeNo, m, n, k, 1.0f, A, 0, k, B, 0, n,
                                          0.0f, C, 0, n, &queue, &done);
    if (blas != CLBlastSuccess) {
        fprintf(stderr, "blas_sgemm: CLBlast status %d\n", blas);
        return 1;
    }
    clWaitForEvents(1, &done);
    clEnqueueReadBuffer(queue, C, CL_TRUE, 0, m * n * sizeof *c, c, 0, NULL, NULL);
    double sum = 0;
    for (size_t i = 0; i < m * n; i++) sum += c[i];
    printf("sgemm %zux%zux%zu: checksum %.6e\n", m, n, k, sum);
    return 0;
}
