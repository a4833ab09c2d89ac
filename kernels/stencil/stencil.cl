/*
 * stencil: one Jacobi step of a 5-point stencil on an nx x ny row-major
 * grid, one work-item per grid point (dimension 0 is x):
 *
 *   out = c0 * centre + c1 * ((north + south) + (west + east))
 *
 * on interior points; boundary points are copied unchanged. An interior
 * point costs 3 adds, 1 multiply and 1 multiply-add (6 flops, FMA = 2) and
 * 5 loads; a boundary point 1 load and no flops.
 *
 * Exercises: a 2-D NDRange, neighbour addressing, fp32 arithmetic, a
 * branch between interior and boundary points.
 */
__kernel void stencil5(__global const float *in,
                       __global float *out,
                       const uint nx,
                       const uint ny,
                       const float c0,
                       const float c1)
{
    const uint x = get_global_id(0);
    const uint y = get_global_id(1);
    if (x >= nx || y >= ny)
        return;

    const uint i = y * nx + x;
    const bool interior = x > 0 && x < nx - 1 && y > 0 && y < ny - 1;
    if (interior) {
        const float neighbours = (in[i - nx] + in[i + nx]) + (in[i - 1] + in[i + 1]);
        out[i] = c0 * in[i] + c1 * neighbours;
    } else {
        out[i] = in[i];
    }
}
