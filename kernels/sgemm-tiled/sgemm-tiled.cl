/*
 * sgemm-tiled: single-precision matrix product C = A * B of n x n row-major
 * matrices through TILE x TILE tiles in local memory. One work-item per
 * element of C, work-groups of TILE x TILE; n must be a multiple of TILE.
 *
 * Each work-group stages one tile of A and one of B at a time: every
 * work-item loads one element of each, the group synchronises, and each
 * work-item accumulates TILE products from local memory. W is still
 * 2 n^3 flops, summed in the same order as sgemm, but global loads drop
 * from 2 n^3 to 2 n^3 / TILE elements.
 *
 * Exercises: local memory (two __local arrays declared in the kernel),
 * barriers, a 2-D NDRange with a required work-group size.
 */
#ifndef TILE
#define TILE 16
#endif

__kernel __attribute__((reqd_work_group_size(TILE, TILE, 1)))
void sgemm_tiled(__global const float *A,
                 __global const float *B,
                 __global float *C,
                 const uint n)
{
    __local float A_tile[TILE][TILE];
    __local float B_tile[TILE][TILE];

    const uint col = get_global_id(0);
    const uint row = get_global_id(1);
    const uint lx = get_local_id(0);
    const uint ly = get_local_id(1);

    float sum = 0.0f;
    for (uint tile = 0; tile < n / TILE; tile++) {
        A_tile[ly][lx] = A[row * n + tile * TILE + lx];
        B_tile[ly][lx] = B[(tile * TILE + ly) * n + col];
        barrier(CLK_LOCAL_MEM_FENCE);

        for (uint k = 0; k < TILE; k++)
            sum += A_tile[ly][k] * B_tile[k][lx];
        /* Nobody may overwrite the tiles while others still read them. */
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    C[row * n + col] = sum;
}
