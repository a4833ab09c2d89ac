// Grid-stride loops over n floats, as pyopencl's elementwise kernels run
// them: each work-item steps by the global size, so on a CPU, which runs a
// work-group's work-items one after another, every load lands a page or
// more from the last. `walk_scale` is the walk alone; `walk_sin` calls sin
// on each element; `walk_sin_hot` loads from one 16 KiB table instead, and
// `walk_sin_cold_loads` sums instead of storing (only its loads walk).
__kernel void walk_scale(__global const float *a, __global float *b, const uint n)
{
    for (uint i = get_global_id(0); i < n; i += get_global_size(0))
        b[i] = a[i] * 2.0f;
}

__kernel void walk_sin(__global const float *a, __global float *b, const uint n)
{
    for (uint i = get_global_id(0); i < n; i += get_global_size(0))
        b[i] = sin(a[i]);
}

__kernel void walk_sin_hot(__global const float *a, __global float *b, const uint n)
{
    for (uint i = get_global_id(0); i < n; i += get_global_size(0))
        b[i] = sin(a[i & 4095]);
}

__kernel void walk_sin_cold_loads(__global const float *a, __global float *b, const uint n)
{
    float sum = 0.0f;
    for (uint i = get_global_id(0); i < n; i += get_global_size(0))
        sum += sin(a[i]) + 2.0f;
    b[get_global_id(0)] = sum;
}
