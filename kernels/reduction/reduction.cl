/*
 * reduction: work-group sums of n floats. Each work-item loads one element
 * (0 past the end) into local scratch memory; the group then halves the
 * active range each step, synchronising after each, and work-item 0 writes
 * the group's sum to partial[group]. The work-group size must be a power
 * of two, and `scratch` must hold one float per work-item.
 *
 * W = local_size - 1 fp32 adds per group; global traffic is 4 bytes loaded
 * per work-item and 4 stored per group.
 *
 * Exercises: a __local pointer argument, barriers inside a loop, a tree
 * reduction whose active work-items shrink each step.
 */
__kernel void reduce_sum(__global const float *in,
                         const uint n,
                         __global float *partial,
                         __local float *scratch)
{
    const uint gid = get_global_id(0);
    const uint lid = get_local_id(0);

    scratch[lid] = gid < n ? in[gid] : 0.0f;
    barrier(CLK_LOCAL_MEM_FENCE);

    for (uint active = get_local_size(0) / 2; active > 0; active /= 2) {
        if (lid < active)
            scratch[lid] += scratch[lid + active];
        barrier(CLK_LOCAL_MEM_FENCE);
    }

    if (lid == 0)
        partial[get_group_id(0)] = scratch[0];
}
