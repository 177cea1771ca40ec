/*
 * Arithmetic modulo p = 2^255 - 19 for WebAssembly, in ten signed limbs of alternately 26 and
 * 25 bits (limb i holds bits ceil(25.5 i) and up). WebAssembly multiplies 64 x 64 -> 64 bits
 * only, so the 51-bit limbs of fe25519_51.h would need a 128-bit product emulated by four
 * multiplications; here every limb product is one i64.mul.
 *
 * It provides the same fe_* interface as fe25519_51.h; field.h picks one of the two by
 * AKD_FIELD_LIMBS (10 here) for the shared point code (ge25519.h) and the shared
 * exponentiation chains (fe25519_pow.h). x8.c vectorises this layout, eight lanes a limb,
 * and relies on the bounds below unchanged.
 *
 * Bounds: fe_mul, fe_sq and fe_frombytes leave |limb| at most about 2^25 (26-bit limbs) and
 * 2^24 (25-bit limbs); sums and differences of up to four such values (the most the point
 * formulas of ge25519.h form before multiplying) stay below 2^27, and fe_mul accepts operands
 * up to 2^27.4 per limb: its largest accumulator is 267 products of two limbs
 * (1 + 19 * (5 * 2 + 4)), below 2^63.
 *
 * Every function runs in time independent of the values (no branches or indexes on them), as
 * the secret-scalar multiplication needs.
 */
#ifndef AKD_FE25519_10_H
#define AKD_FE25519_10_H

#include <stdint.h>

typedef int32_t fe[10];

static inline void fe_0(fe h) {
  for (int i = 0; i < 10; i++) h[i] = 0;
}

static inline void fe_1(fe h) {
  fe_0(h);
  h[0] = 1;
}

static inline void fe_copy(fe h, const fe f) {
  for (int i = 0; i < 10; i++) h[i] = f[i];
}

/* Bit offset and width of each limb. */
static const int FE_OFFSET[10] = {0, 26, 51, 77, 102, 128, 153, 179, 204, 230};
static const int FE_WIDTH[10] = {26, 25, 26, 25, 26, 25, 26, 25, 26, 25};

/* The low 255 bits of a little-endian string; bit 255 (a point's sign) is ignored. */
static inline void fe_frombytes(fe h, const uint8_t s[32]) {
  for (int i = 0; i < 10; i++) {
    const int first = FE_OFFSET[i] >> 3;
    uint64_t window = 0;
    for (int b = 4; b >= 0; b--) {
      window <<= 8;
      if (first + b < 32) window |= s[first + b];
    }
    h[i] = (int32_t)((window >> (FE_OFFSET[i] & 7)) & ((1u << FE_WIDTH[i]) - 1));
  }
}

/* Carries 64-bit limb sums back to the bounds above, rounding each carry to the nearest. */
static inline void fe_carry(fe out, int64_t h[10]) {
  int64_t c;
#define FE_CARRY26(i) c = (h[i] + ((int64_t)1 << 25)) >> 26; h[i + 1] += c; h[i] -= c * ((int64_t)1 << 26)
#define FE_CARRY25(i) c = (h[i] + ((int64_t)1 << 24)) >> 25; h[i + 1] += c; h[i] -= c * ((int64_t)1 << 25)
  /* two interleaved chains (0..4 and 4..9), then 9 wraps to 0 times 19 */
  FE_CARRY26(0); FE_CARRY26(4);
  FE_CARRY25(1); FE_CARRY25(5);
  FE_CARRY26(2); FE_CARRY26(6);
  FE_CARRY25(3); FE_CARRY25(7);
  FE_CARRY26(4); FE_CARRY26(8);
  c = (h[9] + ((int64_t)1 << 24)) >> 25; h[0] += c * 19; h[9] -= c * ((int64_t)1 << 25);
  FE_CARRY26(0);
#undef FE_CARRY26
#undef FE_CARRY25
  for (int i = 0; i < 10; i++) out[i] = (int32_t)h[i];
}

/* The canonical encoding: the value fully reduced below p. */
static inline void fe_tobytes(uint8_t s[32], const fe f) {
  int64_t h[10];
  fe t;
  for (int i = 0; i < 10; i++) h[i] = f[i];
  fe_carry(t, h);
  /* q = 1 exactly when t >= p (t + 19 reaches 2^255), else 0 */
  int32_t q = (19 * t[9] + (1 << 24)) >> 25;
  for (int i = 0; i < 10; i++) q = (t[i] + q) >> FE_WIDTH[i];
  t[0] += 19 * q;
  /* floor carries leave every limb in [0, 2^width); the carry out of bit 255 is 2^255 q */
  for (int i = 0; i < 9; i++) {
    const int32_t c = t[i] >> FE_WIDTH[i];
    t[i + 1] += c;
    t[i] -= c * (1 << FE_WIDTH[i]);
  }
  t[9] &= (1 << 25) - 1;
  uint64_t acc = 0;
  int bits = 0, at = 0;
  for (int i = 0; i < 10; i++) {
    acc |= (uint64_t)(uint32_t)t[i] << bits;
    bits += FE_WIDTH[i];
    while (bits >= 8) {
      s[at++] = (uint8_t)acc;
      acc >>= 8;
      bits -= 8;
    }
  }
  s[31] = (uint8_t)acc;
}

static inline void fe_add(fe h, const fe f, const fe g) {
  for (int i = 0; i < 10; i++) h[i] = f[i] + g[i];
}

static inline void fe_sub(fe h, const fe f, const fe g) {
  for (int i = 0; i < 10; i++) h[i] = f[i] - g[i];
}

static inline void fe_neg(fe h, const fe f) {
  for (int i = 0; i < 10; i++) h[i] = -f[i];
}

/*
 * h = f g. Limb i of f times limb j of g lands at bit offset(i) + offset(j), which is
 * offset(i + j) + 1 when i and j are both odd (hence the doubled odd limbs); products at
 * 2^255 and above wrap around times 19.
 */
static inline void fe_mul(fe out, const fe f, const fe g) {
  const int64_t f0 = f[0], f1 = f[1], f2 = f[2], f3 = f[3], f4 = f[4];
  const int64_t f5 = f[5], f6 = f[6], f7 = f[7], f8 = f[8], f9 = f[9];
  const int64_t g0 = g[0], g1 = g[1], g2 = g[2], g3 = g[3], g4 = g[4];
  const int64_t g5 = g[5], g6 = g[6], g7 = g[7], g8 = g[8], g9 = g[9];
  const int64_t f1_2 = 2 * f1, f3_2 = 2 * f3, f5_2 = 2 * f5, f7_2 = 2 * f7, f9_2 = 2 * f9;
  const int64_t g1_19 = 19 * g1, g2_19 = 19 * g2, g3_19 = 19 * g3, g4_19 = 19 * g4;
  const int64_t g5_19 = 19 * g5, g6_19 = 19 * g6, g7_19 = 19 * g7, g8_19 = 19 * g8;
  const int64_t g9_19 = 19 * g9;
  int64_t h[10];
  h[0] = f0 * g0 + f1_2 * g9_19 + f2 * g8_19 + f3_2 * g7_19 + f4 * g6_19 + f5_2 * g5_19 +
         f6 * g4_19 + f7_2 * g3_19 + f8 * g2_19 + f9_2 * g1_19;
  h[1] = f0 * g1 + f1 * g0 + f2 * g9_19 + f3 * g8_19 + f4 * g7_19 + f5 * g6_19 + f6 * g5_19 +
         f7 * g4_19 + f8 * g3_19 + f9 * g2_19;
  h[2] = f0 * g2 + f1_2 * g1 + f2 * g0 + f3_2 * g9_19 + f4 * g8_19 + f5_2 * g7_19 +
         f6 * g6_19 + f7_2 * g5_19 + f8 * g4_19 + f9_2 * g3_19;
  h[3] = f0 * g3 + f1 * g2 + f2 * g1 + f3 * g0 + f4 * g9_19 + f5 * g8_19 + f6 * g7_19 +
         f7 * g6_19 + f8 * g5_19 + f9 * g4_19;
  h[4] = f0 * g4 + f1_2 * g3 + f2 * g2 + f3_2 * g1 + f4 * g0 + f5_2 * g9_19 + f6 * g8_19 +
         f7_2 * g7_19 + f8 * g6_19 + f9_2 * g5_19;
  h[5] = f0 * g5 + f1 * g4 + f2 * g3 + f3 * g2 + f4 * g1 + f5 * g0 + f6 * g9_19 + f7 * g8_19 +
         f8 * g7_19 + f9 * g6_19;
  h[6] = f0 * g6 + f1_2 * g5 + f2 * g4 + f3_2 * g3 + f4 * g2 + f5_2 * g1 + f6 * g0 +
         f7_2 * g9_19 + f8 * g8_19 + f9_2 * g7_19;
  h[7] = f0 * g7 + f1 * g6 + f2 * g5 + f3 * g4 + f4 * g3 + f5 * g2 + f6 * g1 + f7 * g0 +
         f8 * g9_19 + f9 * g8_19;
  h[8] = f0 * g8 + f1_2 * g7 + f2 * g6 + f3_2 * g5 + f4 * g4 + f5_2 * g3 + f6 * g2 +
         f7_2 * g1 + f8 * g0 + f9_2 * g9_19;
  h[9] = f0 * g9 + f1 * g8 + f2 * g7 + f3 * g6 + f4 * g5 + f5 * g4 + f6 * g3 + f7 * g2 +
         f8 * g1 + f9 * g0;
  fe_carry(out, h);
}

/* h = f^2: fe_mul with the symmetric products taken once and doubled (55 products, not 100). */
static inline void fe_sq(fe out, const fe f) {
  const int64_t f0 = f[0], f1 = f[1], f2 = f[2], f3 = f[3], f4 = f[4];
  const int64_t f5 = f[5], f6 = f[6], f7 = f[7], f8 = f[8], f9 = f[9];
  const int64_t f0_2 = 2 * f0, f1_2 = 2 * f1, f2_2 = 2 * f2, f3_2 = 2 * f3, f4_2 = 2 * f4;
  const int64_t f5_2 = 2 * f5, f6_2 = 2 * f6, f7_2 = 2 * f7, f8_2 = 2 * f8, f9_2 = 2 * f9;
  const int64_t f1_4 = 4 * f1, f3_4 = 4 * f3, f5_4 = 4 * f5, f7_4 = 4 * f7;
  const int64_t f5_19 = 19 * f5, f6_19 = 19 * f6, f7_19 = 19 * f7, f8_19 = 19 * f8;
  const int64_t f9_19 = 19 * f9;
  int64_t h[10];
  h[0] = f0 * f0 + f1_4 * f9_19 + f2_2 * f8_19 + f3_4 * f7_19 + f4_2 * f6_19 + f5_2 * f5_19;
  h[1] = f0_2 * f1 + f2_2 * f9_19 + f3_2 * f8_19 + f4_2 * f7_19 + f5_2 * f6_19;
  h[2] = f0_2 * f2 + f1_2 * f1 + f3_4 * f9_19 + f4_2 * f8_19 + f5_4 * f7_19 + f6 * f6_19;
  h[3] = f0_2 * f3 + f1_2 * f2 + f4_2 * f9_19 + f5_2 * f8_19 + f6_2 * f7_19;
  h[4] = f0_2 * f4 + f1_4 * f3 + f2 * f2 + f5_4 * f9_19 + f6_2 * f8_19 + f7_2 * f7_19;
  h[5] = f0_2 * f5 + f1_2 * f4 + f2_2 * f3 + f6_2 * f9_19 + f7_2 * f8_19;
  h[6] = f0_2 * f6 + f1_4 * f5 + f2_2 * f4 + f3_2 * f3 + f7_4 * f9_19 + f8 * f8_19;
  h[7] = f0_2 * f7 + f1_2 * f6 + f2_2 * f5 + f3_2 * f4 + f8_2 * f9_19;
  h[8] = f0_2 * f8 + f1_4 * f7 + f2_2 * f6 + f3_4 * f5 + f4 * f4 + f9_2 * f9_19;
  h[9] = f0_2 * f9 + f1_2 * f8 + f2_2 * f7 + f3_2 * f6 + f4_2 * f5;
  fe_carry(out, h);
}

/* Constant-time h = b ? g : h, for b in {0, 1}. */
static inline void fe_cmov(fe h, const fe g, uint64_t b) {
  const int32_t mask = -(int32_t)b;
  for (int i = 0; i < 10; i++) h[i] ^= mask & (h[i] ^ g[i]);
}

/* d = -121665/121666 (spec 5.1), 2d and sqrt(-1) = 2^((p-1)/4) in these limbs. */
#define FE25519_D {56195235, 13857412, 51736253, 6949390, 114729, 24766616, 60832955, 30306712, 48412415, 21499315}
#define FE25519_D2 {45281625, 27714825, 36363642, 13898781, 229458, 15978800, 54557047, 27058993, 29715967, 9444199}
#define FE25519_SQRTM1 {34513072, 25610706, 9377949, 3500415, 12389472, 33281959, 41962654, 31548777, 326685, 11406482}

#include "fe25519_pow.h"

#endif
