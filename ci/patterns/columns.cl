// Each work-item sums one column of a row-major matrix, 64 rows between two
// barriers (as a GEMV's tile of the matrix is walked by each work-item when
// the matrix is transposed): each step goes ld floats on, a page or more, 63
// strides a work-item between barriers. The next work-items take the next
// floats of the same lines.
__kernel void column_sums(__global const float *a, __global float *y, const uint ld, const uint n)
{
    float acc = 0.0f;
    const uint gid = get_global_id(0);
    for (uint kw = 0; kw < n; kw += 64) {
        barrier(CLK_LOCAL_MEM_FENCE);
        for (uint k = 0; k < 64; k++)
            acc += a[(kw + k) * ld + gid];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    y[gid] = acc;
}
