/*
 * smith-waterman: local alignment scores of DNA queries against one
 * database sequence (Smith-Waterman, linear gap penalty), one work-item per
 * query:
 *
 *   H[i][j] = max(0, H[i-1][j-1] + S[q_i][d_j], H[i-1][j] - GAP, H[i][j-1] - GAP)
 *   score   = max over all cells of H
 *
 * Bases are uchar codes 0-3 (A, C, G, T). S is a 4 x 4 substitution table
 * in constant memory (+5 match, -1 transition, -4 transversion). Each
 * work-item first builds its query profile, profile[i][b] = S[q_i][b], in a
 * private array; one column of H also lives in a private array. The inner
 * loop then touches no global memory: each of the query_len x db_len cells
 * costs about ten integer operations, against 5 bytes per query base
 * (the base and its profile row) and 1 byte per database base: integer
 * work of high operational intensity.
 *
 * query_len is cut to MAX_QUERY; query q is queries[q * query_len ...]. An
 * empty query or database scores 0. Scores are at most 5 * query_len and
 * are written as ushort.
 *
 * Exercises: 8- and 16-bit integers (uchar, char, short, ushort), private
 * arrays (2-D, indexed at run time), a program-scope __constant table read
 * at run-time indices, nested loops.
 */
#define MAX_QUERY 64
#define GAP 3

__constant char SUBSTITUTION[4][4] = {
    /*  A   C   G   T */
    {   5, -4, -1, -4 }, /* A */
    {  -4,  5, -4, -1 }, /* C */
    {  -1, -4,  5, -4 }, /* G */
    {  -4, -1, -4,  5 }, /* T */
};

__kernel void smith_waterman(__global const uchar *queries,
                             const uint query_len,
                             __global const uchar *database,
                             const uint db_len,
                             __global ushort *scores)
{
    const uint q = get_global_id(0);
    const uint len = min(query_len, (uint)MAX_QUERY);
    if (len == 0 || db_len == 0) {
        scores[q] = 0;
        return;
    }

    /* profile[i][b]: the score of query base i against base b. */
    char profile[MAX_QUERY][4];
    /* column[i] = H[i][j-1] while column j is computed; H[0][*] = 0. */
    short column[MAX_QUERY + 1];
    for (uint i = 0; i < len; i++) {
        const uchar code = queries[q * query_len + i];
        for (uint b = 0; b < 4; b++)
            profile[i][b] = SUBSTITUTION[code][b];
        column[i + 1] = 0;
    }

    /* Both loops run at least once (checked above). */
    short best = 0;
    uint j = 0;
    do {
        const uchar base = database[j];
        short diagonal = 0; /* H[i-1][j-1] */
        short above = 0;    /* H[i-1][j] */
        uint i = 1;
        do {
            const short left = column[i];
            short h = diagonal + profile[i - 1][base];
            h = max(h, (short)(above - GAP));
            h = max(h, (short)(left - GAP));
            h = max(h, (short)0);
            diagonal = left;
            column[i] = h;
            above = h;
            best = max(best, h);
        } while (++i <= len);
    } while (++j < db_len);
    scores[q] = (ushort)best;
}
