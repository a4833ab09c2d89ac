/*
 * nbody: one all-pairs gravitational step of n bodies, one work-item per
 * body. Each work-item sums the pull of every body (itself included: its
 * own pull is zero) with Plummer softening, then advances velocity and
 * position by dt (semi-implicit Euler):
 *
 *   r = p_j - p_i,  a_i += m_j r / (|r|^2 + softening2)^(3/2)
 *   v_i' = v_i + a_i dt,  p_i' = p_i + v_i' dt
 *
 * Bodies are structs of two float4: pos (xyz, w = mass) and vel (xyz, w
 * unused, written as 0). One interaction is 3 subtracts, 3 fma, 1 rsqrt,
 * 3 multiplies and 3 multiply-adds: compute-bound, n^2 interactions against
 * 32 n bytes read per work-item.
 *
 * Exercises: structs in global memory, float3/float4 vectors and swizzles,
 * math builtins (rsqrt, fma, mad), a non-inlined helper function.
 */
typedef struct {
    float4 pos; /* xyz position, w mass */
    float4 vel; /* xyz velocity, w unused */
} Body;

/* The acceleration body `other` (xyz position, w mass) causes at `self`. */
__attribute__((noinline)) float3 pull(const float3 self, const float4 other, const float softening2)
{
    const float3 r = other.xyz - self;
    const float distance2 = fma(r.x, r.x, fma(r.y, r.y, fma(r.z, r.z, softening2)));
    const float inverse = rsqrt(distance2);
    const float strength = other.w * inverse * inverse * inverse;
    return r * strength;
}

__kernel void nbody_step(__global const Body *bodies,
                         __global Body *moved,
                         const uint n,
                         const float dt,
                         const float softening2)
{
    const uint i = get_global_id(0);
    const Body self = bodies[i];

    float3 acceleration = (float3)(0.0f, 0.0f, 0.0f);
    /* n >= 1: body i itself is one of the n. */
    uint j = 0;
    do {
        acceleration += pull(self.pos.xyz, bodies[j].pos, softening2);
    } while (++j < n);

    const float3 velocity = mad(acceleration, (float3)(dt), self.vel.xyz);
    const float3 position = mad(velocity, (float3)(dt), self.pos.xyz);

    Body next;
    next.pos = (float4)(position, self.pos.w);
    next.vel = (float4)(velocity, 0.0f);
    moved[i] = next;
}
