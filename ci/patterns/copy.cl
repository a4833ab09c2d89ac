// A copy of 8 float8 rows a work-item, ld8 float8s apart, in the shape in
// which a tiled transpose moves its tiles; each element lands OFF float8s
// further on in the destination, which moves where the stores fall against
// the loads that follow them.
__kernel void copy_rows(__global const float8 *src, __global float8 *dst, const uint ld8)
{
    const uint x = get_global_id(0), y = get_global_id(1);
    for (int k = 0; k < 8; k++)
        dst[(y * 8 + k) * ld8 + x + OFF] = src[(y * 8 + k) * ld8 + x];
}
