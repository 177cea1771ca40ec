/*
 * Proving and key reduction of ECVRF-EDWARDS25519-SHA512-TAI (spec 5.2, 5.3 prove) whole in
 * C, for the addon: hash to curve (h2c.h), the nonce k = SHA512(nonce_key || H) mod L, the
 * three multiplications Gamma = x H, U = k B, V = k H, the challenge and the response
 * s = k + c x mod L. Everything that touches x, k or the nonce key is constant time: the
 * windowed multiplication with masked table selection (ge25519.h), the Barrett scalar
 * reduction (scalar.h) and SHA-512 (no branch on data). What branches (the try-and-increment
 * loop, decoding H) sees only the public key and alpha. test/ct/ checks this with valgrind.
 */
#ifndef AKD_PROVE_H
#define AKD_PROVE_H

#include "ge25519.h"
#include "h2c.h"
#include "scalar.h"
#include "sha512.h"

#define VRF_PROOF_BYTES 80

/*
 * x = s mod L and x8 = 8 s mod L for the clamped secret scalar s (spec 5.2: h[0..32] of the
 * expanded key, in [2^254, 2^255)), constant time: both are 512-bit reductions of s and of
 * s shifted left by three bits.
 */
static inline void vrf_reduce_secret(uint8_t x[32], uint8_t x8[32], const uint8_t s[32]) {
  uint8_t wide[64] = {0};
  for (int i = 0; i < 32; i++) wide[i] = s[i];
  sc_reduce64(x, wide);
  wide[32] = 0;
  for (int i = 31; i >= 0; i--) {
    wide[i + 1] = (uint8_t)(wide[i + 1] | (s[i] >> 5));
    wide[i] = (uint8_t)(s[i] << 3);
  }
  sc_reduce64(x8, wide);
  vrf_wipe(wide, sizeof wide);
}

/* r = scalar P, constant time in the scalar (below 2^255). */
static inline void vrf_multiply(ge_p3 *r, const uint8_t scalar[32], const ge_p3 *p) {
  int8_t digits[64];
  ge_scalar_digits(digits, scalar);
  ge_scalarmult(r, digits, p, &GE_CONSTANTS);
  vrf_wipe(digits, sizeof digits);
}

/*
 * What an evaluation keeps for a later proof of the same alpha (addon.c evaluateKeeping): H's
 * extended coordinates X, Y, Z, T as canonical encodings, then encode(Gamma), Gamma = x H. A
 * proof from them skips the hash to curve and the multiplication Gamma = x H.
 */
#define VRF_KEPT_BYTES 160

/*
 * pi = Gamma || c || s (spec 5.3) for x = the secret scalar mod L, the 32-byte nonce key, the
 * public key and H = encode_to_curve(alpha), with Gamma's encoding when the caller holds it
 * (NULL: Gamma = x H is computed here).
 */
static inline void vrf_prove_from(uint8_t pi[VRF_PROOF_BYTES], const uint8_t x[32],
                                  const uint8_t nonce_key[32], const uint8_t pk[32],
                                  const ge_p3 *h, const uint8_t *gamma_bytes) {
  static const uint8_t challenge_front[2] = {0x03, 0x02}, back = 0x00;
  ge_p3 base, gamma, u, v;
  uint8_t points[128], digest[64], k[32], c[32] = {0};
  sha512_state s;
  ge_p3_tobytes(points, h);
  /* k = SHA512(nonce_key || compress(H)) mod L (RFC 9381 5.4.2.2) */
  sha512_init(&s);
  sha512_update(&s, nonce_key, 32);
  sha512_update(&s, points, 32);
  sha512_final(&s, digest);
  sc_reduce64(k, digest);
  ge_base(&base);
  if (gamma_bytes == NULL) {
    vrf_multiply(&gamma, x, h);
    ge_p3_tobytes(points + 32, &gamma);
  } else {
    for (int i = 0; i < 32; i++) points[32 + i] = gamma_bytes[i];
  }
  vrf_multiply(&u, k, &base);
  vrf_multiply(&v, k, h);
  ge_p3_tobytes(points + 64, &u);
  ge_p3_tobytes(points + 96, &v);
  /* c = SHA512(0x03 || 0x02 || Y || H || Gamma || U || V || 0x00)[0..16] */
  sha512_init(&s);
  sha512_update(&s, challenge_front, 2);
  sha512_update(&s, pk, 32);
  sha512_update(&s, points, 128);
  sha512_update(&s, &back, 1);
  sha512_final(&s, digest);
  for (int i = 0; i < 16; i++) c[i] = digest[i];
  /* s = c x + k mod L */
  for (int i = 0; i < 32; i++) pi[i] = points[32 + i];
  for (int i = 0; i < 16; i++) pi[32 + i] = c[i];
  sc_muladd(pi + 48, c, x, k);
  vrf_wipe(k, sizeof k);
  vrf_wipe(digest, sizeof digest);
  vrf_wipe(&s, sizeof s);
}

/* The VRF output SHA512(0x03 || 0x03 || encode(8·Gamma) || 0x00) (spec 5.3 proof_to_hash). */
static inline void vrf_proof_to_hash(uint8_t out[64], const uint8_t gamma8[32]) {
  static const uint8_t front[2] = {0x03, 0x03}, back = 0x00;
  sha512_state s;
  sha512_init(&s);
  sha512_update(&s, front, 2);
  sha512_update(&s, gamma8, 32);
  sha512_update(&s, &back, 1);
  sha512_final(&s, out);
}

/*
 * The 64-byte output of alpha into out (spec 5.3: proof_to_hash of 8 Gamma, Gamma = x H), and
 * what a proof of it needs into kept (VRF_KEPT_BYTES: H's extended coordinates, encode(Gamma)),
 * for x = the secret scalar mod L: (8x mod L)·H, which an evaluation without kept points
 * multiplies, is 8 Gamma. Returns 0, or -1 when no counter gives a point.
 */
static inline int vrf_evaluate_kept(uint8_t out[64], uint8_t kept[VRF_KEPT_BYTES],
                                    const uint8_t x[32], const uint8_t pk[32],
                                    const uint8_t *alpha, uint32_t alpha_len) {
  ge_p3 h, gamma, gamma8;
  uint8_t encoded[32];
  if (encode_to_curve(&h, pk, alpha, alpha_len) < 0) return -1;
  vrf_multiply(&gamma, x, &h);
  ge_p3_dbl_to_p3(&gamma8, &gamma);
  ge_p3_dbl_to_p3(&gamma8, &gamma8);
  ge_p3_dbl_to_p3(&gamma8, &gamma8);
  ge_p3_tobytes(encoded, &gamma8);
  vrf_proof_to_hash(out, encoded);
  fe_tobytes(kept, h.X);
  fe_tobytes(kept + 32, h.Y);
  fe_tobytes(kept + 64, h.Z);
  fe_tobytes(kept + 96, h.T);
  ge_p3_tobytes(kept + 128, &gamma);
  return 0;
}

/*
 * pi = Gamma || c || s (spec 5.3) for x = the secret scalar mod L, the 32-byte nonce key, the
 * public key and alpha. Returns 0, or -1 when no counter gives a point (pi is then untouched).
 */
static inline int vrf_prove(uint8_t pi[VRF_PROOF_BYTES], const uint8_t x[32],
                            const uint8_t nonce_key[32], const uint8_t pk[32],
                            const uint8_t *alpha, uint32_t alpha_len) {
  ge_p3 h;
  if (encode_to_curve(&h, pk, alpha, alpha_len) < 0) return -1;
  vrf_prove_from(pi, x, nonce_key, pk, &h, NULL);
  return 0;
}

/* The proof of the alpha whose evaluation kept `kept` (VRF_KEPT_BYTES), as vrf_prove gives it. */
static inline void vrf_prove_kept(uint8_t pi[VRF_PROOF_BYTES], const uint8_t x[32],
                                  const uint8_t nonce_key[32], const uint8_t pk[32],
                                  const uint8_t kept[VRF_KEPT_BYTES]) {
  ge_p3 h;
  fe_frombytes(h.X, kept);
  fe_frombytes(h.Y, kept + 32);
  fe_frombytes(h.Z, kept + 64);
  fe_frombytes(h.T, kept + 96);
  vrf_prove_from(pi, x, nonce_key, pk, &h, kept + 128);
}

#endif
