/*
 * histogram: a 256-bin histogram of n bytes.
 *
 * Each work-group builds a private histogram in local memory with local
 * atomic increments (work-items stride through the input by the global
 * size), then adds it to the global histogram with one global atomic add
 * per bin. `hist` must be zeroed before the launch.
 *
 * Exercises: 8-bit integer (uchar) loads, local memory, barriers, local and
 * global 32-bit atomics.
 */
#define BINS 256

__kernel void histogram(__global const uchar *data,
                        const uint n,
                        __global uint *hist)
{
    __local uint local_hist[BINS];

    const uint lid = get_local_id(0);
    const uint local_size = get_local_size(0);

    for (uint bin = lid; bin < BINS; bin += local_size)
        local_hist[bin] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);

    for (uint i = get_global_id(0); i < n; i += get_global_size(0))
        atomic_inc(&local_hist[data[i]]);
    barrier(CLK_LOCAL_MEM_FENCE);

    for (uint bin = lid; bin < BINS; bin += local_size)
        atomic_add(&hist[bin], local_hist[bin]);
}
