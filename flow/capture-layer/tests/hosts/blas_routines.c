/*
 * A client of a real BLAS library, the routines blas_vectors.c leaves out:
 * with CLBlast's C API on the first OpenCL device, every single-precision
 * level-1 routine on real vectors of N floats that the library implements
 * (sswap, sscal, scopy, shad, snrm2, sasum, ssum, isamax; srot is not), the
 * level-2 routines on a square row-major M x M matrix (sgemv transposed,
 * ssymv, strmv, ssyr, ssyr2) and a transposing matrix copy (somatcopy). N
 * and M are the arguments (default 65536 and 256). The library builds and
 * launches its own kernels; this program never sees them. Prints the
 * reductions and a checksum of the vectors and matrices.
 */
#define CL_TARGET_OPENCL_VERSION 120
#include <clblast_c.h>
#include <stdio.h>
#include <stdlib.h>

/* Runs one routine's launches to their end; exits with its status on failure. */
static void finish(const char *routine, CLBlastStatusCode status, cl_event *done) {
    if (status != CLBlastSuccess) {
        fprintf(stderr, "blas_routines: %s: CLBlast status %d\n", routine, status);
        exit(1);
    }
    clWaitForEvents(1, done);
    clReleaseEvent(*done);
}

/* A buffer of `count` floats, filled with (i % period) / period. */
static cl_mem filled(cl_context context, size_t count, unsigned period) {
    float *host = malloc(count * sizeof *host);
    for (size_t i = 0; i < count; i++) host[i] = (float)(i % period) / (float)period;
    cl_int status;
    cl_mem buffer = clCreateBuffer(context, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                                   count * sizeof *host, host, &status);
    free(host);
    if (status != CL_SUCCESS) {
        fprintf(stderr, "blas_routines: cannot allocate %zu floats (status %d)\n", count, status);
        exit(1);
    }
    return buffer;
}

/* The sum of a buffer's `count` floats. */
static double checksum(cl_command_queue queue, cl_mem buffer, size_t count) {
    float *host = malloc(count * sizeof *host);
    clEnqueueReadBuffer(queue, buffer, CL_TRUE, 0, count * sizeof *host, host, 0, NULL, NULL);
    double sum = 0;
    for (size_t i = 0; i < count; i++) sum += host[i];
    free(host);
    return sum;
}

int main(int argc, char **argv) {
    size_t n = 65536, m = 256;
    if (argc == 3) {
        n = strtoul(argv[1], NULL, 10);
        m = strtoul(argv[2], NULL, 10);
    }
    if (argc != 1 && (argc != 3 || n < m || m == 0)) {
        fprintf(stderr, "usage: blas_routines [N M] (N >= M > 0)\n");
        return 2;
    }
    cl_platform_id platform;
    cl_device_id device;
    cl_int status;
    if (clGetPlatformIDs(1, &platform, NULL) != CL_SUCCESS ||
        clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL) != CL_SUCCESS) {
        fprintf(stderr, "blas_routines: no OpenCL device\n");
        return 1;
    }
    cl_context context = clCreateContext(NULL, 1, &device, NULL, NULL, &status);
    cl_command_queue queue = clCreateCommandQueue(context, device, 0, &status);
    cl_mem X = filled(context, n, 11), Y = filled(context, n, 5), Z = filled(context, n, 3);
    cl_mem A = filled(context, m * m, 13), B = filled(context, m * m, 7);
    cl_mem R = clCreateBuffer(context, CL_MEM_READ_WRITE, 4 * sizeof(float), NULL, &status);
    cl_mem I = clCreateBuffer(context, CL_MEM_READ_WRITE, sizeof(unsigned), NULL, &status);
    const CLBlastLayout rows = CLBlastLayoutRowMajor;
    const CLBlastTriangle upper = CLBlastTriangleUpper;
    cl_event done = NULL;

    finish("sswap", CLBlastSswap(n, X, 0, 1, Y, 0, 1, &queue, &done), &done);
    finish("sscal", CLBlastSscal(n, 0.5f, X, 0, 1, &queue, &done), &done);
    finish("scopy", CLBlastScopy(n, X, 0, 1, Z, 0, 1, &queue, &done), &done);
    finish("shad", CLBlastShad(n, 0.5f, X, 0, 1, Y, 0, 1, 0.25f, Z, 0, 1, &queue, &done), &done);
    finish("snrm2", CLBlastSnrm2(n, R, 0, X, 0, 1, &queue, &done), &done);
    finish("sasum", CLBlastSasum(n, R, 1, Y, 0, 1, &queue, &done), &done);
    finish("ssum", CLBlastSsum(n, R, 2, Z, 0, 1, &queue, &done), &done);
    finish("isamax", CLBlastiSamax(n, I, 0, Y, 0, 1, &queue, &done), &done);
    finish("sgemv",
           CLBlastSgemv(rows, CLBlastTransposeYes, m, m, 1.0f, A, 0, m, X, 0, 1, 0.0f, Y, 0, 1,
                        &queue, &done),
           &done);
    finish("ssymv", CLBlastSsymv(rows, upper, m, 1.0f, A, 0, m, X, 0, 1, 0.5f, Y, 0, 1, &queue, &done),
           &done);
    finish("strmv",
           CLBlastStrmv(rows, upper, CLBlastTransposeNo, CLBlastDiagonalNonUnit, m, A, 0, m, Z, 0, 1,
                        &queue, &done),
           &done);
    finish("ssyr", CLBlastSsyr(rows, upper, m, 0.25f, X, 0, 1, A, 0, m, &queue, &done), &done);
    finish("ssyr2", CLBlastSsyr2(rows, upper, m, 0.25f, X, 0, 1, Y, 0, 1, A, 0, m, &queue, &done),
           &done);
    finish("somatcopy",
           CLBlastSomatcopy(rows, CLBlastTransposeYes, m, m, 2.0f, A, 0, m, B, 0, m, &queue, &done),
           &done);

    float reductions[3];
    unsigned largest;
    clEnqueueReadBuffer(queue, R, CL_TRUE, 0, sizeof reductions, reductions, 0, NULL, NULL);
    clEnqueueReadBuffer(queue, I, CL_TRUE, 0, sizeof largest, &largest, 0, NULL, NULL);
    double sum = checksum(queue, X, n) + checksum(queue, Y, n) + checksum(queue, Z, n) +
                 checksum(queue, A, m * m) + checksum(queue, B, m * m);
    printf("blas routines at n %zu, m %zu: nrm2 %.6e, asum %.6e, sum %.6e, amax at %u, checksum %.6e\n",
           n, m, reductions[0], reductions[1], reductions[2], largest, sum);
    return 0;
}
