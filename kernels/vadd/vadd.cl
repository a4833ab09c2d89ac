/*
 * vadd: c[i] = a[i] + b[i] over n floats, one work-item per element.
 *
 * The simplest streaming kernel: one fp32 add per 12 bytes of global
 * traffic. Work-items past n (a global size rounded up to the work-group
 * size) do nothing.
 *
 * Exercises: global loads and stores, fp32 add, a bounds guard.
 */
__kernel void vadd(__global const float *a,
                   __global const float *b,
                   __global float *c,
                   const uint n)
{
    const size_t i = get_global_id(0);
    if (i < n)
        c[i] = a[i] + b[i];
}
