// clflow peak-throughput kernels: independent dependency chains of one
// arithmetic operation.
//
// Built with, from clflow-bench:
//   -DVT=<vector type> -DST=<scalar type>  e.g. float4 / float, uint16 / uint
//   -DLANE_RAMP=<VT literal>  (VT)(0, 1, 2 ...): gives every lane its own start
//   -DCHAINS=<c>   independent accumulators per work-item (fills pipelines)
//   -DROUNDS=<r>   unrolled updates of every accumulator per repetition
//   -DOP_MAD | -DOP_ADD | -DOP_MUL | -DOP_LDST  the operation timed
//   -DOP_LDST keeps the accumulators in local memory (volatile, so every
//   update is a real load and store) and requires work-groups of 64
//   -DDIVERGE      the repetition loop's trip count is, as far as the
//                  compiler can tell, the work-item's own (it is reps for
//                  every work-item below 2^32 - 1): a runtime that
//                  vectorises across work-items only where their control
//                  flow agrees runs the chains lane by lane
//   -DUSE_FP64 / -DUSE_FP16  enable the extension the type needs
//
// Accumulator k is updated from its neighbour k+1 (a ring), so no update
// can be folded into another (integer adds of a constant would become one
// multiply) while c/2 or more of them stay independent. Floating-point
// updates x = x*y + b converge to a fixed point near b: no overflow and no
// denormals. Integer multiplies keep odd numbers odd, so they never reach 0.
// The accumulators are summed and stored, so nothing can be dropped.

#ifdef USE_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif
#ifdef USE_FP16
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
#endif

#if defined(OP_MAD)
#define UPDATE(x, y) ((x) * (y) + b)
#elif defined(OP_ADD)
#define UPDATE(x, y) ((x) + (y))
#elif defined(OP_MUL)
#define UPDATE(x, y) ((x) * (y))
#elif defined(OP_LDST)
#define UPDATE(x, y) (y)
#else
#error "define one of OP_MAD, OP_ADD, OP_MUL, OP_LDST"
#endif

#ifdef OP_LDST
#define LDST_GROUP 64
#define GROUP_ATTRIBUTE __attribute__((reqd_work_group_size(LDST_GROUP, 1, 1)))
#else
#define GROUP_ATTRIBUTE
#endif

__kernel GROUP_ATTRIBUTE void bench_compute(__global VT *restrict out, const ST seed,
                                            const ST b, const uint reps) {
    // Starting values depend on the work-item, so nothing is uniform across
    // a work-group and no runtime can compute it once for all.
    const ST id = (ST)(get_global_id(0) & 255);
#ifdef OP_LDST
    // Work-item l owns slots l, l + 64, l + 128 ...: no other work-item
    // touches them, so no barrier is needed.
    __local VT slots[CHAINS * LDST_GROUP];
    volatile __local VT *x_base = slots + get_local_id(0);
#define x(k) x_base[(k) * LDST_GROUP]
    (void)b;
#else
    VT x_private[CHAINS];
#define x(k) x_private[k]
#endif
#pragma unroll
    for (int k = 0; k < CHAINS; k++) {
        x(k) = seed + (VT)(id + (ST)(2 * k)) * STEP_SCALE + LANE_RAMP * STEP_SCALE;
    }
#ifdef DIVERGE
    const uint trips = reps + (get_global_id(0) == (size_t)0xFFFFFFFFu);
#else
    const uint trips = reps;
#endif
    for (uint r = 0; r < trips; r++) {
#pragma unroll
        for (int u = 0; u < ROUNDS; u++) {
#pragma unroll
            for (int k = 0; k < CHAINS; k++) {
                x(k) = UPDATE(x(k), x((k + 1) % CHAINS));
            }
        }
    }
    VT sum = x(0);
#pragma unroll
    for (int k = 1; k < CHAINS; k++) {
        sum += x(k);
    }
    out[get_global_id(0)] = sum;
}
