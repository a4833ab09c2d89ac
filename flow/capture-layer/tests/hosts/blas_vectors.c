/*
 * A client of a real BLAS library, its level-1 and level-2 routines: with
 * CLBlast's C API on the first OpenCL device, y = a x + y (saxpy) and the
 * dot product x . y (sdot) over vectors of N floats, then y = A x (sgemv)
 * and the rank-1 update A = A + x y^T (sger) with a square row-major matrix
 * of M x M floats. N and M are the arguments (default 65536 and 256). The
 * library builds and launches its own kernels; this program never sees
 * them. Prints the dot product and a checksum of y and A.
 */
#define CL_TARGET_OPENCL_VERSION 120
#include <clblast_c.h>
#include <stdio.h>
#include <stdlib.h>

/* Runs one routine's launch to its end; exits with its status on failure. */
static void finish(const char *routine, CLBlastStatusCode status, cl_event *done) {
    if (status != CLBlastSuccess) {
        fprintf(stderr, "blas_vectors: %s: CLBlast status %d\n", routine, status);
        exit(1);
    }
    clWaitForEvents(1, done);
    clReleaseEvent(*done);
}

int main(int argc, char **argv) {
    size_t n = 65536, m = 256;
    if (argc == 3) {
        n = strtoul(argv[1], NULL, 10);
        m = strtoul(argv[2], NULL, 10);
    }
    if (argc != 1 && (argc != 3 || n < m || m == 0)) {
        fprintf(stderr, "usage: blas_vectors [N M] (N >= M > 0)\n");
        return 2;
    }
    cl_platform_id platform;
    cl_device_id device;
    cl_int status;
    if (clGetPlatformIDs(1, &platform, NULL) != CL_SUCCESS ||
        clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL) != CL_SUCCESS) {
        fprintf(stderr, "blas_vectors: no OpenCL device\n");
        return 1;
    }
    cl_context context = clCreateContext(NULL, 1, &device, NULL, NULL, &status);
    cl_command_queue queue = clCreateCommandQueue(context, device, 0, &status);
    float *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
    float *a = malloc(m * m * sizeof *a);
    for (size_t i = 0; i < n; i++) {
        x[i] = (float)(i % 11) / 11.0f;
        y[i] = (float)(i % 5) / 5.0f;
    }
    for (size_t i = 0; i < m * m; i++) a[i] = (float)(i % 13) / 13.0f;
    const cl_mem_flags copy = CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR;
    cl_mem X = clCreateBuffer(context, copy, n * sizeof *x, x, &status);
    cl_mem Y = clCreateBuffer(context, copy, n * sizeof *y, y, &status);
    cl_mem A = clCreateBuffer(context, copy, m * m * sizeof *a, a, &status);
    cl_mem DOT = clCreateBuffer(context, CL_MEM_READ_WRITE, sizeof(float), NULL, &status);
    cl_event done = NULL;
    finish("saxpy", CLBlastSaxpy(n, 0.5f, X, 0, 1, Y, 0, 1, &queue, &done), &done);
    finish("sdot", CLBlastSdot(n, DOT, 0, X, 0, 1, Y, 0, 1, &queue, &done), &done);
    finish("sgemv",
           CLBlastSgemv(CLBlastLayoutRowMajor, CLBlastTransposeNo, m, m, 1.0f, A, 0, m, X, 0, 1,
                        0.0f, Y, 0, 1, &queue, &done),
           &done);
    finish("sger",
           CLBlastSger(CLBlastLayoutRowMajor, m, m, 0.25f, X, 0, 1, Y, 0, 1, A, 0, m, &queue, &done),
           &done);
    float dot;
    clEnqueueReadBuffer(queue, DOT, CL_TRUE, 0, sizeof dot, &dot, 0, NULL, NULL);
    clEnqueueReadBuffer(queue, Y, CL_TRUE, 0, n * sizeof *y, y, 0, NULL, NULL);
    clEnqueueReadBuffer(queue, A, CL_TRUE, 0, m * m * sizeof *a, a, 0, NULL, NULL);
    double sum = 0;
    for (size_t i = 0; i < n; i++) sum += y[i];
    for (size_t i = 0; i < m * m; i++) sum += a[i];
    printf("saxpy, sdot, sgemv, sger at n %zu, m %zu: dot %.6e, checksum %.6e\n", n, m, dot, sum);
    return 0;
}
