/*
 * gram-schmidt: batched QR by modified Gram-Schmidt. Work-item b takes its
 * own rows x cols matrix A_b (column-major, in Q) and overwrites it with the
 * orthonormal Q_b, writing the upper triangle of R_b (cols x cols,
 * row-major, in R) so that A_b = Q_b R_b.
 *
 * Column k is first made orthogonal to each earlier column j < k (a dot
 * product and an update of rows elements each: 4 rows flops, and the
 * negation of the dot product that the compiler hoists out of the update),
 * then normalised (2 rows flops, a square root, rows divisions). Per matrix:
 * W = (4 rows + 1) cols (cols - 1) / 2 + cols (3 rows + 1) fp32 operations;
 * loads 4 rows per pair (j, k) and 2 rows per column, stores rows + 1 per
 * pair and per column.
 *
 * Exercises: a triangular loop nest (the inner loops run k times), whose
 * -O2 blocks llvm-spirv-15 writes before their dominators; sqrt; division;
 * per-work-item pointers into a batch.
 */
__kernel void gram_schmidt(__global float *Q,
                           __global float *R,
                           const uint rows,
                           const uint cols)
{
    const size_t b = get_global_id(0);
    __global float *a = Q + b * rows * cols;
    __global float *r = R + b * cols * cols;
    for (uint k = 0; k < cols; k++) {
        __global float *qk = a + k * rows;
        for (uint j = 0; j < k; j++) {
            __global const float *qj = a + j * rows;
            float dot = 0.0f;
            for (uint i = 0; i < rows; i++)
                dot += qj[i] * qk[i];
            r[j * cols + k] = dot;
            for (uint i = 0; i < rows; i++)
                qk[i] -= dot * qj[i];
        }
        float norm = 0.0f;
        for (uint i = 0; i < rows; i++)
            norm += qk[i] * qk[i];
        norm = sqrt(norm);
        r[k * cols + k] = norm;
        for (uint i = 0; i < rows; i++)
            qk[i] /= norm;
    }
}
