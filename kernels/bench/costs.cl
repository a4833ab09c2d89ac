// clflow's costs beyond throughput: what one operation of a chain of
// dependent ones, an atomic update of local memory, and a work-group
// barrier each cost a work-item.
//
// Options (set by clflow-bench):
//   -DROUNDS=<r>   operations unrolled per trip of the timed loop
//
// Every timed loop runs `reps` trips for every work-item below 2^32 - 1,
// but the compiler cannot prove it: a runtime that vectorises across
// work-items only where their control flow agrees runs these loops lane by
// lane, as it runs a kernel whose loops depend on its data. Each result is
// stored, so nothing can be dropped.

#define TRIPS (reps + (get_global_id(0) == (size_t)0xFFFFFFFFu))

// 2 * ROUNDS dependent integer operations per trip, each needing the one
// before: x = (x ^ a) + b, with an a and b of their own in every round so
// that no two rounds fold into one.
__kernel void bench_chain(__global uint *out, const uint reps)
{
    uint x = (uint)get_global_id(0);
    const uint trips = TRIPS;
    for (uint r = 0; r < trips; r++) {
#pragma unroll
        for (uint u = 0; u < ROUNDS; u++)
            x = (x ^ (0x9e3779b9u * (u + 1u))) + (0x7f4a7c15u + u);
    }
    out[get_global_id(0)] = x;
}

// ROUNDS atomic increments of a work-group's 256 local counters per trip,
// spread over them as a histogram's are; the counters are added to the
// output at the end.
__kernel void bench_local_atomic(__global uint *out, const uint reps)
{
    __local uint counts[256];
    const uint lid = get_local_id(0);
    for (uint i = lid; i < 256; i += get_local_size(0))
        counts[i] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    const uint trips = TRIPS;
    for (uint r = 0; r < trips; r++) {
#pragma unroll
        for (uint u = 0; u < ROUNDS; u++)
            atomic_inc(&counts[(lid * 7u + r * 13u + u * 31u) & 255u]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint i = lid; i < 256; i += get_local_size(0))
        atomic_add(&out[i], counts[i]);
}

// Two barriers per trip, with a neighbour's value read between them (the
// work-group size is a power of two).
__kernel void bench_barrier(__global uint *out, const uint reps)
{
    __local uint slots[256];
    const uint lid = get_local_id(0);
    const uint mask = (uint)get_local_size(0) - 1u;
    uint x = lid;
    slots[lid] = x;
    const uint trips = TRIPS;
    for (uint r = 0; r < trips; r++) {
        barrier(CLK_LOCAL_MEM_FENCE);
        x += slots[(lid + 1u) & mask];
        barrier(CLK_LOCAL_MEM_FENCE);
        slots[lid] = x;
    }
    out[get_global_id(0)] = x;
}

// ROUNDS loads per trip from a work-group's local table, between two of
// the loop's barriers (a runtime that vectorises across work-items only
// where their control flow agrees runs the code between barriers as
// vectors), at addresses a quarter of the table apart from one work-item
// to the next: a vectoriser gathers them lane by lane. The sum is stored.
#define LOCAL_TABLE 256u

__kernel void bench_local_gather(__global uint *out, const uint reps)
{
    __local uint table[LOCAL_TABLE];
    const uint lid = get_local_id(0);
    for (uint i = lid; i < LOCAL_TABLE; i += get_local_size(0))
        table[i] = i;
    const uint base = (lid & 3u) * (LOCAL_TABLE / 4u) + (lid >> 2);
    uint x = 0;
    const uint trips = TRIPS;
    for (uint r = 0; r < trips; r++) {
        barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll
        for (uint u = 0; u < ROUNDS; u++)
            x += table[(base + r + u * 5u) & (LOCAL_TABLE - 1u)];
    }
    out[get_global_id(0)] = x;
}

// ROUNDS branches per trip, each taken where a bit of the work-item's
// xorshift sequence and `pattern` agree: with pattern 0 never (every
// branch predicted), with pattern 1 half the time at random (about half
// mispredicted). The difference between the two is what a mispredicted
// branch costs. The taken way loads (which the compiler may not hoist
// above the branch), the other does not.
__kernel void bench_branch(__global uint *out, const uint reps, const uint pattern)
{
    uint x = (uint)get_global_id(0) * 0x9e3779b9u + 1u;
    uint acc = 0;
    const uint trips = TRIPS;
    for (uint r = 0; r < trips; r++) {
#pragma unroll
        for (uint u = 0; u < ROUNDS; u++) {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            if ((x >> 7) & pattern)
                acc += out[x & 255u];
            else
                acc ^= x;
        }
    }
    out[get_global_id(0)] = acc;
}

// ROUNDS loads per trip from a table of mask + 1 uints, each at a place a
// hash of the work-item, the trip and the round picks (none waits on the
// load before, as a sparse matrix's gathers do not): with the table held
// by the last-level cache and not by the caches above it, the rate of
// scattered loads that the last level serves.
__kernel void bench_cache_gather(__global uint *out, const uint reps,
                                 __global const uint *table, const uint mask)
{
    const uint g = (uint)get_global_id(0) * 0x85ebca6bu;
    uint acc = 0;
    const uint trips = TRIPS;
    for (uint r = 0; r < trips; r++) {
#pragma unroll
        for (uint u = 0; u < ROUNDS; u++)
            acc += table[(((r * ROUNDS + u) * 0x9e3779b9u) ^ g) & mask];
    }
    out[get_global_id(0)] = acc;
}

// A float sum carried across a call the compiler keeps (`noinline`), one
// call a trip, as a loop that sums a helper's results: a CPU's calling
// convention keeps no float register across a call, so the sum goes to
// the stack and back every trip. The helper's work does not wait on the
// sum; the sum's add is the loop's only chain besides that round trip.
__attribute__((noinline)) float bench_call_step(const float x)
{
    return x * 0.5f;
}

__kernel void bench_call_chain(__global uint *out, const uint reps)
{
    float sum = 0.0f;
    const float x = (float)get_global_id(0);
    const uint trips = TRIPS;
    for (uint r = 0; r < trips; r++)
        sum += bench_call_step(x + (float)r);
    out[get_global_id(0)] = as_uint(sum);
}

// A work-item's loads a page or more apart, as a loop that strides by the
// global size walks an array in GPU code: each work-item sums every
// step-th element of a 128 MiB table, from its own id on. A CPU runs the loop one work-item after another, so each
// load lands on another page and another line, which the next work-items
// find in the caches near the core, but no prefetcher brings.
__kernel void bench_page_stride(__global uint *out, const uint reps,
                                __global const uint *table, const uint n,
                                const uint step)
{
    uint acc = 0;
    const uint trips = TRIPS;
    for (uint r = 0; r < trips; r++) {
        for (uint i = (uint)get_global_id(0); i < n; i += step)
            acc += table[i];
    }
    out[get_global_id(0)] = acc;
}

// The same walk storing, and copying one table to another (a load and a
// store a step): a CPU pays more for a walk of stores alone than for one
// whose stores go with loads, so the model takes the rate of a kernel's
// share of stores between the three.
__kernel void bench_page_stride_store(__global uint *out, const uint reps,
                                      __global uint *table, const uint n,
                                      const uint step)
{
    const uint trips = TRIPS;
    for (uint r = 0; r < trips; r++) {
        for (uint i = (uint)get_global_id(0); i < n; i += step)
            table[i] = i ^ r;
    }
    out[get_global_id(0)] = trips;
}

__kernel void bench_page_stride_copy(__global uint *out, const uint reps,
                                     __global const uint *table, const uint n,
                                     const uint step, __global uint *copy)
{
    const uint trips = TRIPS;
    for (uint r = 0; r < trips; r++) {
        for (uint i = (uint)get_global_id(0); i < n; i += step)
            copy[i] = table[i] ^ r;
    }
    out[get_global_id(0)] = trips;
}

// Each work-group walks a window of its own, and each of its work-items
// takes one element of every 64-byte line of it, copying it to a second
// table (a loop over a group's interval that strides by the group's size,
// as a scan's last pass makes). A CPU runs the loop one work-item after
// another: each walk passes more lines than the core's first-level cache
// keeps, and the next work-item finds them further down.
__kernel void bench_line_walk(__global uint *out, const uint reps,
                              __global const uint *table, __global uint *copy,
                              const uint window)
{
    const uint base = (uint)get_group_id(0) * window;
    const uint n = (uint)get_local_size(0);
    const uint trips = TRIPS;
    for (uint r = 0; r < trips; r++) {
        for (uint i = base + (uint)get_local_id(0); i < base + window; i += n)
            copy[i] = table[i] + r;
    }
}

// A column walk: each work-item xor-sums its own column of a table whose
// rows are the global size apart (8,192 uints, 32 KiB), 16 rows between
// two barriers, so that a work-group of W work-items reads W / 16 lines of
// each row's page and moves on to the next row, and the work-group after
// it reads the next lines of the same pages a whole walk later (as a GEMV
// over a transposed matrix, or a transpose's other side, walks its
// matrix). The xor keeps the work-items' loads free to run as vectors.
__kernel void bench_column_walk(__global uint *out, const uint reps,
                                __global const uint *table, const uint rows)
{
    const uint column = (uint)get_global_id(0);
    const uint width = (uint)get_global_size(0);
    uint acc = 0;
    const uint trips = TRIPS;
    for (uint r = 0; r < trips; r++) {
        for (uint row = 0; row < rows; row += 16) {
            barrier(CLK_LOCAL_MEM_FENCE);
            for (uint k = 0; k < 16; k++)
                acc ^= table[(row + k) * width + column];
        }
    }
    out[column] = acc;
}

// Calls of a math builtin, one a trip on each of ROUNDS independent
// values, each fed back through one multiply-add or add that keeps it in range, so
// nothing can be folded or hoisted: run as a work-group vectoriser runs a
// kernel's work-items together (`_vector`: the trip count is the same for
// all, and a barrier ends each trip, so the stretch between barriers is a
// loop over the work-items it vectorises, with whatever it makes of the
// call: PoCL widens `exp` but calls `sin` lane by lane), and lane by lane
// (`_scalar`: each work-item's own trip count).
#define SIN_STEP(x) (sin(x) * 4.0f + 8.0f)
#define COS_STEP(x) (cos(x) * 4.0f + 8.0f)
#define EXP_STEP(x) (exp(-(x)) + 1.0f)
#define LOG_STEP(x) (log(x) + 3.0f)
#define POW_STEP(x) (pow((x), 0.75f) + 1.0f)

#define BUILTIN_LOOP(step, start, trips, end_trip)                            \
    float x[ROUNDS];                                                          \
    _Pragma("unroll") for (uint k = 0; k < ROUNDS; k++)                       \
        x[k] = (start) + (float)k * 0.03125f;                                 \
    for (uint r = 0; r < (trips); r++) {                                      \
        _Pragma("unroll") for (uint k = 0; k < ROUNDS; k++)                   \
            x[k] = step(x[k]);                                                \
        end_trip;                                                             \
    }                                                                         \
    float sum = 0.0f;                                                         \
    _Pragma("unroll") for (uint k = 0; k < ROUNDS; k++)                       \
        sum += x[k];                                                          \
    out[get_global_id(0)] = sum;

#define BUILTIN_KERNELS(name, step)                                           \
    __kernel void bench_##name##_vector(__global float *out, const uint reps) \
    {                                                                         \
        BUILTIN_LOOP(step, (float)(get_global_id(0) & 15) * 0.0625f + 1.5f,   \
                     reps, barrier(CLK_LOCAL_MEM_FENCE))                      \
    }                                                                         \
    __kernel void bench_##name##_scalar(__global float *out, const uint reps) \
    {                                                                         \
        BUILTIN_LOOP(step, (float)(get_global_id(0) & 15) * 0.0625f + 1.5f,   \
                     TRIPS, (void)0)                                          \
    }

// A page walk copying the 128 MiB table, with a call on each step's value
// (inputs 0.5 to 16.5), as an elementwise `b[i] = sin(a[i])` runs in a loop
// that strides by the global size (so each work-item walks 4,096 steps at
// 8,192 work-items). A long call leaves the core no room for the next
// steps' loads: each waits on its page in turn. The index is a `long` and
// the stride the global size, as such loops are written in real code: with
// a `uint` index, or a stride passed as an argument, a walk calling `exp`
// ran half as long again.
#define WALK_BUILTIN_KERNEL(name, step)                                       \
    __kernel void bench_##name##_walk(__global float *out, const uint reps,   \
                                      __global const uint *table,             \
                                      const uint n, __global float *copy)     \
    {                                                                         \
        const uint trips = TRIPS;                                             \
        for (uint r = 0; r < trips; r++) {                                    \
            for (long i = get_global_id(0); i < n; i += get_global_size(0))   \
                copy[i] = step((float)(table[i] & 1023u) * 0.015625f + 0.5f); \
        }                                                                     \
        out[get_global_id(0)] = (float)trips;                                 \
    }

BUILTIN_KERNELS(sin, SIN_STEP)
BUILTIN_KERNELS(cos, COS_STEP)
BUILTIN_KERNELS(exp, EXP_STEP)
BUILTIN_KERNELS(log, LOG_STEP)
BUILTIN_KERNELS(pow, POW_STEP)

WALK_BUILTIN_KERNEL(sin, SIN_STEP)
WALK_BUILTIN_KERNEL(cos, COS_STEP)
WALK_BUILTIN_KERNEL(exp, EXP_STEP)
WALK_BUILTIN_KERNEL(log, LOG_STEP)
WALK_BUILTIN_KERNEL(pow, POW_STEP)

// A walk of `float4` steps with a call the compiler keeps each step, as a
// random-number generator's loop calls its own function and stores each
// call's four numbers a global size further on (pyopencl's Philox passes
// its counter by pointer, as here): storing alone, and copying the table
// (its words mixed into the counter). The call and return hold the walk
// up far more than the helper's work costs.
__attribute__((noinline)) uint4 bench_call_bits(uint4 *ctr)
{
    const uint4 c = *ctr;
    ctr->x += 1u;
    return (c * 0x9E3779B9u) ^ (c >> 16);
}

__kernel void bench_call_store_walk(__global float *out, const uint reps,
                                    __global const uint *table, const uint n,
                                    __global float *copy)
{
    __global float4 *to = (__global float4 *)copy;
    uint4 ctr = (uint4)((uint)get_global_id(0), 1u, 2u, table[0]);
    const uint trips = TRIPS;
    for (uint r = 0; r < trips; r++) {
        for (long i = get_global_id(0); i < n / 4; i += get_global_size(0))
            to[i] = convert_float4(bench_call_bits(&ctr)) * 2.3283064e-10f;
    }
    out[get_global_id(0)] = (float)ctr.x;
}

__kernel void bench_call_walk(__global float *out, const uint reps,
                              __global const uint *table, const uint n,
                              __global float *copy)
{
    __global const uint4 *from = (__global const uint4 *)table;
    __global float4 *to = (__global float4 *)copy;
    uint4 ctr = (uint4)((uint)get_global_id(0), 1u, 2u, 3u);
    const uint trips = TRIPS;
    for (uint r = 0; r < trips; r++) {
        for (long i = get_global_id(0); i < n / 4; i += get_global_size(0)) {
            ctr ^= from[i];
            to[i] = convert_float4(bench_call_bits(&ctr)) * 2.3283064e-10f;
        }
    }
    out[get_global_id(0)] = (float)ctr.x;
}
