/*
 * daxpy: y[i] = alpha * x[i] + y[i] in double precision, one work-item per
 * element, computed with the correctly rounded fma builtin.
 *
 * W = 2 fp64 operations (one FMA) per element against 24 bytes of traffic.
 * Needs a device with cl_khr_fp64.
 *
 * Exercises: doubles (fp64 loads, stores, scalar argument), the fma
 * builtin, a read-write buffer.
 */
#pragma OPENCL EXTENSION cl_khr_fp64 : enable

__kernel void daxpy(const double alpha,
                    __global const double *x,
                    __global double *y,
                    const uint n)
{
    const size_t i = get_global_id(0);
    if (i < n)
        y[i] = fma(alpha, x[i], y[i]);
}
