// clflow global-memory bandwidth kernels (STREAM and its one-sided cousins).
//
// Built with, from clflow-bench:
//   -DVT=<vector type>   the element each access moves (float, float4, uint16 ...)
//   -DST=<scalar type>   its lane type (float or uint)
//   -DPER_ITEM=<n>       elements each work-item handles (unrolled)
//   -DSCALAR_ELEMENTS    when VT is a scalar type (width 1)
//   -DWINDOW=<n>         for bench_resident: the elements its reads stay within
//
// Work-item g of G handles elements g, g + G, g + 2G ...: neighbouring
// work-items touch neighbouring elements, which GPUs coalesce and CPU
// runtimes turn into contiguous vector accesses. The buffers hold exactly
// G * PER_ITEM elements, so no bounds test is needed.

#define INDEX(k) (get_global_id(0) + (size_t)(k) * get_global_size(0))

// Whether any lane of v equals s. any() of a scalar comparison (0 or 1)
// tests the sign bit and is always 0, so scalars compare directly.
#ifdef SCALAR_ELEMENTS
#define ANY_EQUAL(v, s) ((v) == (s))
#else
#define ANY_EQUAL(v, s) any((v) == (s))
#endif

__kernel void bench_copy(__global const VT *restrict a, __global VT *restrict c) {
#pragma unroll
    for (int k = 0; k < PER_ITEM; k++) {
        c[INDEX(k)] = a[INDEX(k)];
    }
}

__kernel void bench_scale(__global const VT *restrict c, __global VT *restrict b, const ST q) {
#pragma unroll
    for (int k = 0; k < PER_ITEM; k++) {
        b[INDEX(k)] = q * c[INDEX(k)];
    }
}

__kernel void bench_add(__global const VT *restrict a, __global const VT *restrict b,
                        __global VT *restrict c) {
#pragma unroll
    for (int k = 0; k < PER_ITEM; k++) {
        c[INDEX(k)] = a[INDEX(k)] + b[INDEX(k)];
    }
}

__kernel void bench_triad(__global const VT *restrict b, __global const VT *restrict c,
                          __global VT *restrict a, const ST q) {
#pragma unroll
    for (int k = 0; k < PER_ITEM; k++) {
        a[INDEX(k)] = b[INDEX(k)] + q * c[INDEX(k)];
    }
}

// Scales every element in place: each line is read, then written back. A
// CPU's store finds the line its load brought in and need not read it
// first, as in an in-place update (`y = a * x + y`, a swap); what the
// write-backs cost beside the reads is this kernel's time less `read`'s.
__kernel void bench_update(__global VT *restrict a, const ST q) {
#pragma unroll
    for (int k = 0; k < PER_ITEM; k++) {
        a[INDEX(k)] = q * a[INDEX(k)];
    }
}

// Reads every element and sums them. The sum is stored only when a lane
// equals `sentinel`, a value the host picks so that it practically never
// happens: the compiler cannot drop the loads, and the kernel writes
// (almost) nothing.
__kernel void bench_read(__global const VT *restrict a, __global VT *restrict out,
                         const ST sentinel) {
    VT sum = a[INDEX(0)];
#pragma unroll
    for (int k = 1; k < PER_ITEM; k++) {
        sum += a[INDEX(k)];
    }
    if (ANY_EQUAL(sum, sentinel)) {
        out[0] = sum;
    }
}

// Writes every element once with a value that differs from element to
// element (a multiplicative hash of its index), so that memory systems
// that compress uniform data gain nothing.
__kernel void bench_write(__global VT *restrict c, const uint seed) {
#pragma unroll
    for (int k = 0; k < PER_ITEM; k++) {
        size_t i = INDEX(k);
        c[i] = (VT)((ST)(((uint)i ^ seed) * 2654435761u));
    }
}

// Reads every element once, like bench_read, but work-item g's k-th element
// is element (i * 2654435761) mod n of the array (a permutation, the
// multiplier being a prime): neighbouring work-items touch far-apart
// addresses, so GPUs cannot coalesce them and CPUs use one element of each
// cache line they fetch. The uncoalesced bandwidth of the boat hull model.
// Reads like `read`, but only within the first WINDOW elements (a power of
// two, built with -DWINDOW=<n>): a working set that stays in a cache, so its
// bandwidth is the cache's. Work-item g's k-th element is (g + 17k) mod
// WINDOW: neighbouring work-items read neighbouring elements, and a
// work-item's PER_ITEM reads are all different.
#ifdef WINDOW
__kernel void bench_resident(__global const VT *restrict a, __global VT *restrict out,
                             const ST sentinel) {
#define RESIDENT(k) (((size_t)get_global_id(0) + (size_t)(k) * 17) & (WINDOW - 1))
    VT sum = a[RESIDENT(0)];
#pragma unroll
    for (int k = 1; k < PER_ITEM; k++) {
        sum += a[RESIDENT(k)];
    }
    if (ANY_EQUAL(sum, sentinel)) {
        out[0] = sum;
    }
}
#endif

__kernel void bench_gather(__global const VT *restrict a, __global VT *restrict out,
                           const ST sentinel) {
    const ulong n = (ulong)get_global_size(0) * PER_ITEM;
#define SCATTER(k) ((size_t)(((ulong)INDEX(k) * 2654435761UL) % n))
    VT sum = a[SCATTER(0)];
#pragma unroll
    for (int k = 1; k < PER_ITEM; k++) {
        sum += a[SCATTER(k)];
    }
    if (ANY_EQUAL(sum, sentinel)) {
        out[0] = sum;
    }
}
