/*
 * triad: the STREAM triad a[i] = b[i] + scalar * c[i] on float4 elements,
 * one work-item per float4.
 *
 * Every operand moves as a 16-byte vector load or store; the multiply-add
 * may be contracted to a fused multiply-add (counted as 2 operations either
 * way), so W = 8 fp32 operations per work-item against 48 bytes of traffic.
 *
 * Exercises: float4 vectors (loads, stores, vector-scalar arithmetic).
 */
__kernel void triad(__global float4 *a,
                    __global const float4 *b,
                    __global const float4 *c,
                    const float scalar)
{
    const size_t i = get_global_id(0);
    a[i] = b[i] + scalar * c[i];
}
