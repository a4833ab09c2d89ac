/*
 * spmv: sparse matrix-vector product y = A x, A in compressed sparse row
 * (CSR) form, one work-item per row:
 *
 *   y[row] = sum over j in [row_ptr[row], row_ptr[row + 1]) of values[j] * x[col_idx[j]]
 *
 * Each non-zero costs one multiply-add and three loads (value, column
 * index, and the gathered x), so the kernel is bound by memory and by the
 * irregular gather.
 *
 * Exercises: indirect (gathered) loads, a data-dependent loop trip count.
 */
__kernel void spmv_csr(const uint rows,
                       __global const uint *row_ptr,
                       __global const uint *col_idx,
                       __global const float *values,
                       __global const float *x,
                       __global float *y)
{
    const uint row = get_global_id(0);
    if (row >= rows)
        return;

    float sum = 0.0f;
    const uint end = row_ptr[row + 1];
    for (uint j = row_ptr[row]; j < end; j++)
        sum += values[j] * x[col_idx[j]];
    y[row] = sum;
}
