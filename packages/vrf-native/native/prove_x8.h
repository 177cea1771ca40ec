/*
 * Proving and evaluating many alphas under one key eight lanes at a time (x8.h), for the
 * addon: hash to curve in rounds of try-and-increment, eight candidates per decode, then each
 * group of eight points through the steps of prove.h with every multiplication done for the
 * eight at once: Gamma = x H (one scalar for all lanes), U = k B (from a table of B's
 * multiples) and V = k H (each lane its own nonce k), H with Gamma and U with V encoded for
 * one inversion each. The bytes are those of vrf_prove one alpha at a time (tested). Constant time
 * in x, the nonce key and every k as prove.h is; what branches (the candidate loop) sees only
 * the public key and the alphas.
 */
#ifndef AKD_PROVE_X8_H
#define AKD_PROVE_X8_H

#include <string.h>
#include "h2c.h"
#include "prove.h"
#include "x8.h"

/*
 * H for each of n alphas of alpha_len bytes into points[i] (the canonical encodings of its
 * extended coordinates), by rounds of try-and-increment: each round decodes the next
 * candidate of every alpha still without a point, eight per call. `pending` has room for n.
 * Returns n, or the first alpha for which no counter gives a point.
 */
static size_t encode_to_curve_x8(const uint8_t pk[32], const uint8_t *alphas, size_t alpha_len,
                                 size_t n, uint8_t (*points)[4][32], size_t *pending) {
  uint8_t candidates[8][32], decoded[8][4][32];
  int ok[8];
  size_t waiting = n;
  for (size_t i = 0; i < n; i++) pending[i] = i;
  for (int counter = 0; waiting > 0; counter++) {
    size_t next = 0;
    if (counter == 256) return pending[0]; /* the alphas stay in order: this is the first */
    for (size_t first = 0; first < waiting; first += 8) {
      const size_t m = waiting - first < 8 ? waiting - first : 8;
      for (size_t k = 0; k < 8; k++) {
        if (k < m) {
          h2c_candidate(candidates[k], pk, alphas + alpha_len * pending[first + k],
                        (uint32_t)alpha_len, counter);
        } else {
          memcpy(candidates[k], candidates[0], 32);
        }
      }
      x8_decode(decoded, ok, (const uint8_t(*)[32])candidates);
      for (size_t k = 0; k < m; k++) {
        const size_t i = pending[first + k];
        if (ok[k] && !rejected_noncanonical(candidates[k])) {
          memcpy(points[i], decoded[k], sizeof decoded[k]);
        } else {
          pending[next++] = i;
        }
      }
    }
    waiting = next;
  }
  return n;
}

/* Up to eight points into the eight lanes; a short group repeats its first point. */
static void fill_lanes(uint8_t group[8][4][32], const uint8_t (*points)[4][32], size_t m) {
  for (size_t k = 0; k < 8; k++) memcpy(group[k], points[k < m ? k : 0], sizeof group[k]);
}

/*
 * pi[80 i..] = the proof (spec 5.3) for lanes i < m <= 8 whose H is group[i] (as x8_multiply
 * takes points) with encoding h[i], and whose Gamma = x H is encoded in gamma[i]: the nonces,
 * U = k B and V = k H eight at a time, then each lane's challenge and response.
 */
static void prove_x8_finish(uint8_t *pi, const uint8_t x[32], const uint8_t nonce_key[32],
                            const uint8_t pk[32], const uint8_t group[8][4][32],
                            const uint8_t h[8][32], const uint8_t gamma[8][32], size_t m) {
  static const uint8_t challenge_front[2] = {0x03, 0x02}, back = 0x00;
  uint8_t u[8][32], v[8][32], k[8][32], digest[64];
  int8_t k_digits[8][64];
  sha512_state s;
  /* k = SHA512(nonce_key || compress(H)) mod L (RFC 9381 5.4.2.2), one per lane */
  for (int lane = 0; lane < 8; lane++) {
    sha512_init(&s);
    sha512_update(&s, nonce_key, 32);
    sha512_update(&s, h[lane], 32);
    sha512_final(&s, digest);
    sc_reduce64(k[lane], digest);
    ge_scalar_digits(k_digits[lane], k[lane]);
  }
  x8_multiply_base_and_lanes(u, v, group, (const int8_t(*)[64])k_digits);
  for (size_t lane = 0; lane < m; lane++) {
    uint8_t *out = pi + VRF_PROOF_BYTES * lane, c[32] = {0};
    /* c = SHA512(0x03 || 0x02 || Y || H || Gamma || U || V || 0x00)[0..16] */
    sha512_init(&s);
    sha512_update(&s, challenge_front, 2);
    sha512_update(&s, pk, 32);
    sha512_update(&s, h[lane], 32);
    sha512_update(&s, gamma[lane], 32);
    sha512_update(&s, u[lane], 32);
    sha512_update(&s, v[lane], 32);
    sha512_update(&s, &back, 1);
    sha512_final(&s, digest);
    memcpy(c, digest, 16);
    memcpy(out, gamma[lane], 32);
    memcpy(out + 32, c, 16);
    sc_muladd(out + 48, c, x, k[lane]); /* s = c x + k mod L */
  }
  vrf_wipe(k, sizeof k);
  vrf_wipe(k_digits, sizeof k_digits);
  vrf_wipe(digest, sizeof digest);
  vrf_wipe(&s, sizeof s);
}

/*
 * pi[80 i..] = the proof (spec 5.3) of the alpha whose H is points[i], for i < m <= 8, with
 * x = the secret scalar mod L and the nonce key (prove.h's vrf_prove, lane by lane).
 */
static void vrf_prove_x8(uint8_t *pi, const uint8_t x[32], const uint8_t nonce_key[32],
                         const uint8_t pk[32], const uint8_t (*points)[4][32], size_t m) {
  uint8_t group[8][4][32], h[8][32], gamma[8][32];
  int8_t x_digits[64];
  fill_lanes(group, points, m);
  /* H and Gamma = x H first (k hashes H's encoding); each pair of encodings shares an inversion */
  ge_scalar_digits(x_digits, x);
  x8_encode_and_multiply(h, gamma, (const uint8_t(*)[4][32])group, x_digits);
  vrf_wipe(x_digits, sizeof x_digits);
  prove_x8_finish(pi, x, nonce_key, pk, (const uint8_t(*)[4][32])group,
                  (const uint8_t(*)[32])h, (const uint8_t(*)[32])gamma, m);
}

/*
 * pi[80 i..] = the proof of the alpha whose evaluation kept kept[VRF_KEPT_BYTES i..] (prove.h),
 * for i < m <= 8: no hash to curve and no Gamma = x H, only H's encoding to compute before
 * vrf_prove_x8's last steps. A short group repeats its first entry in the free lanes.
 */
static void vrf_prove_x8_kept(uint8_t *pi, const uint8_t x[32], const uint8_t nonce_key[32],
                              const uint8_t pk[32], const uint8_t *kept, size_t m) {
  uint8_t group[8][4][32], h[8][32], gamma[8][32];
  for (size_t lane = 0; lane < 8; lane++) {
    const uint8_t *entry = kept + VRF_KEPT_BYTES * (lane < m ? lane : 0);
    memcpy(group[lane], entry, sizeof group[lane]);
    memcpy(gamma[lane], entry + 128, 32);
  }
  x8_encode(h, (const uint8_t(*)[4][32])group);
  prove_x8_finish(pi, x, nonce_key, pk, (const uint8_t(*)[4][32])group,
                  (const uint8_t(*)[32])h, (const uint8_t(*)[32])gamma, m);
}

#endif
