/*
 * lookup3: Bob Jenkins' lookup3 `hashlittle` (2006), one work-item per key.
 *
 * The paper's case study. Keys are 0-60 bytes long and laid out in one `uint`
 * buffer, every key starting on a 4-byte boundary and padded with zero bytes
 * to a whole word, so the kernel reads key data as 32-bit words just as
 * hashlittle's aligned little-endian path does:
 *
 *   key_words[key_offsets[k] ...]  the bytes of key k, little-endian words
 *   key_lengths[k]                 its length in bytes
 *   hashes[k]                      hashlittle(key k, key_lengths[k], initval)
 *
 * The result equals the published hashlittle on the key's bytes. The global
 * size is the number of keys.
 *
 * Exercises: 32-bit integer add/sub/xor and rotations (written as shifts and
 * an or, as the published code does), a data-dependent loop, an unsigned
 * division and a select for the block count, and a switch on the tail length.
 */
#ifndef rot /* -D 'rot(x,k)=rotate(...)' writes them with OpenCL's rotate() */
/* Rotate left by k bits (0 < k < 32). */
#define rot(x, k) (((x) << (k)) | ((x) >> (32 - (k))))
#endif
/* Mix three 32-bit values reversibly (lookup3's mix()). */
#define mix(a, b, c)                 \
    {                                \
        a -= c; a ^= rot(c, 4);  c += b; \
        b -= a; b ^= rot(a, 6);  a += c; \
        c -= b; c ^= rot(b, 8);  b += a; \
        a -= c; a ^= rot(c, 16); c += b; \
        b -= a; b ^= rot(a, 19); a += c; \
        c -= b; c ^= rot(b, 4);  b += a; \
    }

/* Final mixing of three 32-bit values into c (lookup3's final()). */
#define final(a, b, c)                  \
    {                                   \
        c ^= b; c -= rot(b, 14);        \
        a ^= c; a -= rot(c, 11);        \
        b ^= a; b -= rot(a, 25);        \
        c ^= b; c -= rot(b, 16);        \
        a ^= c; a -= rot(c, 4);         \
        b ^= a; b -= rot(a, 14);        \
        c ^= b; c -= rot(b, 24);        \
    }

__kernel void hash(__global const uint *key_words,
                   __global const uint *key_offsets,
                   __global const uint *key_lengths,
                   const uint initval,
                   __global uint *hashes)
{
    const size_t key = get_global_id(0);
    const uint length = key_lengths[key];
    __global const uint *k = key_words + key_offsets[key];

    uint a, b, c;
    a = b = c = 0xdeadbeefu + length + initval;

    /* The key has ceil(length / 12) blocks of 12 bytes. All but the last
     * are mixed here; the last, 1 to 12 bytes, is the tail below (as
     * hashlittle's `while (length > 12)`). The empty key has no block. */
    const uint blocks = (length + 11) / 12 - (length > 0 ? 1 : 0);
    for (uint block = 0; block < blocks; block++) {
        a += k[0];
        b += k[1];
        c += k[2];
        mix(a, b, c);
        k += 3;
    }

    /* The last block: whole words, the final partial word masked. */
    switch (length - 12 * blocks) {
    case 12: c += k[2];            b += k[1];            a += k[0]; break;
    case 11: c += k[2] & 0xffffff; b += k[1];            a += k[0]; break;
    case 10: c += k[2] & 0xffff;   b += k[1];            a += k[0]; break;
    case 9:  c += k[2] & 0xff;     b += k[1];            a += k[0]; break;
    case 8:                        b += k[1];            a += k[0]; break;
    case 7:                        b += k[1] & 0xffffff; a += k[0]; break;
    case 6:                        b += k[1] & 0xffff;   a += k[0]; break;
    case 5:                        b += k[1] & 0xff;     a += k[0]; break;
    case 4:                                              a += k[0]; break;
    case 3:                                   a += k[0] & 0xffffff; break;
    case 2:                                   a += k[0] & 0xffff;   break;
    case 1:                                   a += k[0] & 0xff;     break;
    default: /* the empty key: no final mixing */
        hashes[key] = c;
        return;
    }

    final(a, b, c);
    hashes[key] = c;
}
