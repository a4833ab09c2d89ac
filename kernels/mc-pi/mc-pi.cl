/*
 * mc-pi: Monte Carlo estimate of pi with 64-bit integer arithmetic. Each
 * work-item draws `samples` points from its own splitmix64 stream and
 * counts those inside the quarter circle:
 *
 *   r = splitmix64(state);  x = r & (2^31 - 1);  y = (r >> 32) & (2^31 - 1)
 *   inside if x^2 + y^2 < 2^62
 *
 * so pi ~ 4 * sum(hits) / (work-items * samples). The squares fit in 64
 * bits exactly, so the count is exact and device-independent. Work-item g
 * starts from state = seed + g * 0x9e3779b97f4a7c15 * 2^20.
 *
 * Exercises: 64-bit integers (ulong multiply, shifts, xor, compare, a ulong
 * scalar argument), a non-inlined helper function taking a private pointer.
 */
#define GOLDEN_GAMMA 0x9e3779b97f4a7c15UL

/* splitmix64 (Steele, Lea, Flood 2014): advance the state, return 64 bits. */
__attribute__((noinline)) ulong splitmix64(ulong *state)
{
    ulong z = (*state += GOLDEN_GAMMA);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9UL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebUL;
    return z ^ (z >> 31);
}

__kernel void mc_pi(const ulong seed,
                    const uint samples,
                    __global uint *hits)
{
    const uint g = get_global_id(0);
    ulong state = seed + (ulong)g * (GOLDEN_GAMMA << 20);

    uint inside = 0;
    for (uint s = 0; s < samples; s++) {
        const ulong r = splitmix64(&state);
        const ulong x = r & 0x7fffffffUL;
        const ulong y = (r >> 32) & 0x7fffffffUL;
        if (x * x + y * y < (1UL << 62))
            inside++;
    }
    hits[g] = inside;
}
