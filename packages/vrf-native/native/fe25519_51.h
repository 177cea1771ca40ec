/*
 * Arithmetic modulo p = 2^255 - 19 in five 51-bit limbs (products in unsigned __int128).
 * Every function runs in time independent of the values (no branches or indexes on them),
 * because the scalar multiplication feeds them secret-dependent points.
 *
 * Limb bounds: frombytes, mul, sq and carry leave limbs below 2^52; add of two such values
 * stays below 2^53 and sub carries its subtrahend first, so every operand handed to mul/sq is
 * below 2^54, where the 128-bit accumulators cannot overflow (5 * 19 * 2^108 < 2^115).
 */
#ifndef AKD_FE25519_51_H
#define AKD_FE25519_51_H

#include <stdint.h>
#include <string.h>

typedef uint64_t fe[5];
typedef unsigned __int128 u128;

#define FE_MASK51 0x7ffffffffffffULL

static inline uint64_t load64_le(const uint8_t *in) {
  uint64_t r = 0;
  for (int i = 7; i >= 0; i--) r = (r << 8) | in[i];
  return r;
}

static inline void store64_le(uint8_t *out, uint64_t v) {
  for (int i = 0; i < 8; i++, v >>= 8) out[i] = (uint8_t)v;
}

static inline void fe_0(fe h) { memset(h, 0, sizeof(fe)); }
static inline void fe_1(fe h) { fe_0(h); h[0] = 1; }
static inline void fe_copy(fe h, const fe f) { memcpy(h, f, sizeof(fe)); }

/* The low 255 bits of a little-endian string; bit 255 (a point's sign) is ignored. */
static inline void fe_frombytes(fe h, const uint8_t s[32]) {
  h[0] = load64_le(s) & FE_MASK51;
  h[1] = (load64_le(s + 6) >> 3) & FE_MASK51;
  h[2] = (load64_le(s + 12) >> 6) & FE_MASK51;
  h[3] = (load64_le(s + 19) >> 1) & FE_MASK51;
  h[4] = (load64_le(s + 24) >> 12) & FE_MASK51;
}

static inline void fe_carry_once(uint64_t t[5]) {
  t[1] += t[0] >> 51; t[0] &= FE_MASK51;
  t[2] += t[1] >> 51; t[1] &= FE_MASK51;
  t[3] += t[2] >> 51; t[2] &= FE_MASK51;
  t[4] += t[3] >> 51; t[3] &= FE_MASK51;
  t[0] += 19 * (t[4] >> 51); t[4] &= FE_MASK51;
}

/* The canonical encoding: the value fully reduced below p. */
static inline void fe_tobytes(uint8_t s[32], const fe f) {
  uint64_t t[5];
  fe_copy(t, f);
  fe_carry_once(t);
  fe_carry_once(t); /* now below 2^255 with every limb below 2^51 */
  /* t + 19 carries out of bit 255 exactly when t >= p: add 19, then take 2^255 back off */
  t[0] += 19;
  fe_carry_once(t);
  t[0] += 0x8000000000000ULL - 19;
  t[1] += 0x8000000000000ULL - 1;
  t[2] += 0x8000000000000ULL - 1;
  t[3] += 0x8000000000000ULL - 1;
  t[4] += 0x8000000000000ULL - 1;
  t[1] += t[0] >> 51; t[0] &= FE_MASK51;
  t[2] += t[1] >> 51; t[1] &= FE_MASK51;
  t[3] += t[2] >> 51; t[2] &= FE_MASK51;
  t[4] += t[3] >> 51; t[3] &= FE_MASK51;
  t[4] &= FE_MASK51;
  store64_le(s, t[0] | (t[1] << 51));
  store64_le(s + 8, (t[1] >> 13) | (t[2] << 38));
  store64_le(s + 16, (t[2] >> 26) | (t[3] << 25));
  store64_le(s + 24, (t[3] >> 39) | (t[4] << 12));
}

static inline void fe_add(fe h, const fe f, const fe g) {
  for (int i = 0; i < 5; i++) h[i] = f[i] + g[i];
}

/* f - g computed as f + 2p - g after carrying g below 2^51 per limb. */
static inline void fe_sub(fe h, const fe f, const fe g) {
  uint64_t t[5];
  fe_copy(t, g);
  fe_carry_once(t);
  h[0] = (f[0] + 0xfffffffffffdaULL) - t[0];
  h[1] = (f[1] + 0xffffffffffffeULL) - t[1];
  h[2] = (f[2] + 0xffffffffffffeULL) - t[2];
  h[3] = (f[3] + 0xffffffffffffeULL) - t[3];
  h[4] = (f[4] + 0xffffffffffffeULL) - t[4];
}

static inline void fe_neg(fe h, const fe f) {
  fe zero;
  fe_0(zero);
  fe_sub(h, zero, f);
}

static inline void fe_reduce_wide(fe h, u128 r0, u128 r1, u128 r2, u128 r3, u128 r4) {
  uint64_t c;
  r1 += (uint64_t)(r0 >> 51); h[0] = (uint64_t)r0 & FE_MASK51;
  r2 += (uint64_t)(r1 >> 51); h[1] = (uint64_t)r1 & FE_MASK51;
  r3 += (uint64_t)(r2 >> 51); h[2] = (uint64_t)r2 & FE_MASK51;
  r4 += (uint64_t)(r3 >> 51); h[3] = (uint64_t)r3 & FE_MASK51;
  c = (uint64_t)(r4 >> 51); h[4] = (uint64_t)r4 & FE_MASK51;
  h[0] += 19 * c;
  h[1] += h[0] >> 51; h[0] &= FE_MASK51;
}

static inline void fe_mul(fe h, const fe f, const fe g) {
  const uint64_t f0 = f[0], f1 = f[1], f2 = f[2], f3 = f[3], f4 = f[4];
  const uint64_t g0 = g[0], g1 = g[1], g2 = g[2], g3 = g[3], g4 = g[4];
  const uint64_t g1_19 = 19 * g1, g2_19 = 19 * g2, g3_19 = 19 * g3, g4_19 = 19 * g4;
  u128 r0 = (u128)f0 * g0 + (u128)f1 * g4_19 + (u128)f2 * g3_19 + (u128)f3 * g2_19 + (u128)f4 * g1_19;
  u128 r1 = (u128)f0 * g1 + (u128)f1 * g0 + (u128)f2 * g4_19 + (u128)f3 * g3_19 + (u128)f4 * g2_19;
  u128 r2 = (u128)f0 * g2 + (u128)f1 * g1 + (u128)f2 * g0 + (u128)f3 * g4_19 + (u128)f4 * g3_19;
  u128 r3 = (u128)f0 * g3 + (u128)f1 * g2 + (u128)f2 * g1 + (u128)f3 * g0 + (u128)f4 * g4_19;
  u128 r4 = (u128)f0 * g4 + (u128)f1 * g3 + (u128)f2 * g2 + (u128)f3 * g1 + (u128)f4 * g0;
  fe_reduce_wide(h, r0, r1, r2, r3, r4);
}

static inline void fe_sq(fe h, const fe f) {
  const uint64_t f0 = f[0], f1 = f[1], f2 = f[2], f3 = f[3], f4 = f[4];
  const uint64_t f0_2 = 2 * f0, f1_2 = 2 * f1;
  const uint64_t f1_38 = 38 * f1, f2_38 = 38 * f2, f3_38 = 38 * f3;
  const uint64_t f3_19 = 19 * f3, f4_19 = 19 * f4;
  u128 r0 = (u128)f0 * f0 + (u128)f1_38 * f4 + (u128)f2_38 * f3;
  u128 r1 = (u128)f0_2 * f1 + (u128)f2_38 * f4 + (u128)f3_19 * f3;
  u128 r2 = (u128)f0_2 * f2 + (u128)f1 * f1 + (u128)f3_38 * f4;
  u128 r3 = (u128)f0_2 * f3 + (u128)f1_2 * f2 + (u128)f4_19 * f4;
  u128 r4 = (u128)f0_2 * f4 + (u128)f1_2 * f3 + (u128)f2 * f2;
  fe_reduce_wide(h, r0, r1, r2, r3, r4);
}

/* Constant-time h = b ? g : h, for b in {0, 1}. */
static inline void fe_cmov(fe h, const fe g, uint64_t b) {
  const uint64_t mask = (uint64_t)0 - b;
  for (int i = 0; i < 5; i++) h[i] ^= mask & (h[i] ^ g[i]);
}

/* d = -121665/121666 (spec 5.1), 2d and sqrt(-1) = 2^((p-1)/4) in this header's limbs. */
#define FE25519_D {0x34dca135978a3ULL, 0x1a8283b156ebdULL, 0x5e7a26001c029ULL, 0x739c663a03cbbULL, 0x52036cee2b6ffULL}
#define FE25519_D2 {0x69b9426b2f159ULL, 0x35050762add7aULL, 0x3cf44c0038052ULL, 0x6738cc7407977ULL, 0x2406d9dc56dffULL}
#define FE25519_SQRTM1 {0x61b274a0ea0b0ULL, 0x0d5a5fc8f189dULL, 0x7ef5e9cbd0c60ULL, 0x78595a6804c9eULL, 0x2b8324804fc1dULL}

#include "fe25519_pow.h"

#endif
