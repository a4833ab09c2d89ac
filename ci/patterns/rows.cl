// Stores that cycle over rows: a work-group, one row of work-items, writes
// 4 bytes a work-item to each of ROWS rows ld floats apart, and the groups
// along the first dimension go on along the same rows. Where ld is a
// multiple of 1,024 floats (4 KiB), every row's line falls in the same set
// of a CPU's first-level cache.
__kernel void rows_store(__global float *out, const uint ld)
{
    const uint x = get_global_id(0), y = get_global_id(1);
#pragma unroll
    for (uint k = 0; k < ROWS; k++)
        out[(y * ROWS + k) * ld + x] = (float)(x + k);
}
