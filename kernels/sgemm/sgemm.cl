/*
 * sgemm: naive single-precision matrix product C = A * B of n x n row-major
 * matrices, one work-item per element of C (dimension 0 the column,
 * dimension 1 the row).
 *
 * Each work-item reads a row of A and a column of B straight from global
 * memory: 2n loads and n multiply-adds, so W = 2 n^3 flops in all and the
 * global traffic is 8 n^3 + 4 n^2 bytes (no reuse through local memory;
 * compare sgemm-tiled).
 *
 * The global size must be exactly n x n.
 *
 * Exercises: a 2-D NDRange, a dot-product loop, fp32 multiply-add.
 */
__kernel void sgemm(__global const float *A,
                    __global const float *B,
                    __global float *C,
                    const uint n)
{
    const uint col = get_global_id(0);
    const uint row = get_global_id(1);

    float sum = 0.0f;
    for (uint k = 0; k < n; k++)
        sum += A[row * n + k] * B[k * n + col];
    C[row * n + col] = sum;
}
