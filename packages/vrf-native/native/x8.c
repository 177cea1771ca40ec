/*
 * Eight-lane scalar multiplication on edwards25519 with AVX-512F (interface and purpose in
 * x8.h). Field elements are ten signed limbs of alternately 26 and 25 bits, the layout of
 * fe25519_10.h (the WebAssembly field, beside this file, whose bound analysis holds here
 * unchanged), with each limb a vector of eight 64-bit lanes: a limb product is one
 * signed 32 x 32 -> 64-bit multiplication (vpmuldq) for all eight lanes, where the five-limb
 * scalar code needs a 64 x 64 -> 128-bit one per lane. Limb products that wrap past 2^255 are
 * summed first and multiplied by 19 once, so every multiplication operand stays below 2^31.
 *
 * The point formulas and the windowed multiplication are those of ge25519.h, operation for
 * operation; each lane has its own digits (a proof's nonce differs per lane), and the table
 * lookups select by per-lane masks from vector comparisons, so nothing branches or indexes on
 * a secret.
 */
#include "x8.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))

#include <immintrin.h>
#include <pthread.h>

/* Compiled for the baseline processor: it runs before anything of AVX-512 may. */
int x8_available(void) {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f");
}

/* Everything below may use AVX-512F, and runs only once x8_available() said so. */
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx512f"))), apply_to = function)
#else
#pragma GCC target("avx512f")
#endif

typedef int64_t v8 __attribute__((vector_size(64)));
typedef uint64_t u8x8 __attribute__((vector_size(64)));
typedef v8 fv[10];

#define ALL(x) {x, x, x, x, x, x, x, x}

static inline v8 shl(v8 a, int n) { return (v8)((u8x8)a << n); }
static inline v8 times19(v8 a) { return shl(a, 4) + shl(a, 1) + a; }
static inline v8 mul32(v8 a, v8 b) { return (v8)_mm512_mul_epi32((__m512i)a, (__m512i)b); }

static inline void fv_0(fv h) {
  for (int i = 0; i < 10; i++) h[i] = (v8)ALL(0);
}
static inline void fv_1(fv h) {
  fv_0(h);
  h[0] = (v8)ALL(1);
}
static inline void fv_copy(fv h, const fv f) {
  for (int i = 0; i < 10; i++) h[i] = f[i];
}
static inline void fv_add(fv h, const fv f, const fv g) {
  for (int i = 0; i < 10; i++) h[i] = f[i] + g[i];
}
static inline void fv_sub(fv h, const fv f, const fv g) {
  for (int i = 0; i < 10; i++) h[i] = f[i] - g[i];
}
static inline void fv_neg(fv h, const fv f) {
  for (int i = 0; i < 10; i++) h[i] = -f[i];
}

/* Carries 64-bit limb sums back to the limb bounds, rounding each carry to the nearest. */
static inline void fv_carry(fv out, v8 h[10]) {
  v8 c;
#define CARRY26(i) c = (h[i] + (int64_t)(1 << 25)) >> 26; h[i + 1] += c; h[i] -= shl(c, 26)
#define CARRY25(i) c = (h[i] + (int64_t)(1 << 24)) >> 25; h[i + 1] += c; h[i] -= shl(c, 25)
  CARRY26(0); CARRY26(4);
  CARRY25(1); CARRY25(5);
  CARRY26(2); CARRY26(6);
  CARRY25(3); CARRY25(7);
  CARRY26(4); CARRY26(8);
  c = (h[9] + (int64_t)(1 << 24)) >> 25; h[0] += times19(c); h[9] -= shl(c, 25);
  CARRY26(0);
#undef CARRY26
#undef CARRY25
  for (int i = 0; i < 10; i++) out[i] = h[i];
}

/* h = f g (the products of fe25519_10.h's fe_mul, the wrapped ones summed before times 19). */
static inline void fv_mul(fv out, const fv f, const fv g) {
  const v8 f0 = f[0], f1 = f[1], f2 = f[2], f3 = f[3], f4 = f[4];
  const v8 f5 = f[5], f6 = f[6], f7 = f[7], f8 = f[8], f9 = f[9];
  const v8 g0 = g[0], g1 = g[1], g2 = g[2], g3 = g[3], g4 = g[4];
  const v8 g5 = g[5], g6 = g[6], g7 = g[7], g8 = g[8], g9 = g[9];
  const v8 f1_2 = f1 + f1, f3_2 = f3 + f3, f5_2 = f5 + f5, f7_2 = f7 + f7, f9_2 = f9 + f9;
  v8 h[10];
  h[0] = mul32(f0, g0) +
         times19(mul32(f1_2, g9) + mul32(f2, g8) + mul32(f3_2, g7) + mul32(f4, g6) +
                 mul32(f5_2, g5) + mul32(f6, g4) + mul32(f7_2, g3) + mul32(f8, g2) +
                 mul32(f9_2, g1));
  h[1] = mul32(f0, g1) + mul32(f1, g0) +
         times19(mul32(f2, g9) + mul32(f3, g8) + mul32(f4, g7) + mul32(f5, g6) +
                 mul32(f6, g5) + mul32(f7, g4) + mul32(f8, g3) + mul32(f9, g2));
  h[2] = mul32(f0, g2) + mul32(f1_2, g1) + mul32(f2, g0) +
         times19(mul32(f3_2, g9) + mul32(f4, g8) + mul32(f5_2, g7) + mul32(f6, g6) +
                 mul32(f7_2, g5) + mul32(f8, g4) + mul32(f9_2, g3));
  h[3] = mul32(f0, g3) + mul32(f1, g2) + mul32(f2, g1) + mul32(f3, g0) +
         times19(mul32(f4, g9) + mul32(f5, g8) + mul32(f6, g7) + mul32(f7, g6) +
                 mul32(f8, g5) + mul32(f9, g4));
  h[4] = mul32(f0, g4) + mul32(f1_2, g3) + mul32(f2, g2) + mul32(f3_2, g1) + mul32(f4, g0) +
         times19(mul32(f5_2, g9) + mul32(f6, g8) + mul32(f7_2, g7) + mul32(f8, g6) +
                 mul32(f9_2, g5));
  h[5] = mul32(f0, g5) + mul32(f1, g4) + mul32(f2, g3) + mul32(f3, g2) + mul32(f4, g1) +
         mul32(f5, g0) +
         times19(mul32(f6, g9) + mul32(f7, g8) + mul32(f8, g7) + mul32(f9, g6));
  h[6] = mul32(f0, g6) + mul32(f1_2, g5) + mul32(f2, g4) + mul32(f3_2, g3) + mul32(f4, g2) +
         mul32(f5_2, g1) + mul32(f6, g0) +
         times19(mul32(f7_2, g9) + mul32(f8, g8) + mul32(f9_2, g7));
  h[7] = mul32(f0, g7) + mul32(f1, g6) + mul32(f2, g5) + mul32(f3, g4) + mul32(f4, g3) +
         mul32(f5, g2) + mul32(f6, g1) + mul32(f7, g0) +
         times19(mul32(f8, g9) + mul32(f9, g8));
  h[8] = mul32(f0, g8) + mul32(f1_2, g7) + mul32(f2, g6) + mul32(f3_2, g5) + mul32(f4, g4) +
         mul32(f5_2, g3) + mul32(f6, g2) + mul32(f7_2, g1) + mul32(f8, g0) +
         times19(mul32(f9_2, g9));
  h[9] = mul32(f0, g9) + mul32(f1, g8) + mul32(f2, g7) + mul32(f3, g6) + mul32(f4, g5) +
         mul32(f5, g4) + mul32(f6, g3) + mul32(f7, g2) + mul32(f8, g1) + mul32(f9, g0);
  fv_carry(out, h);
}

/* h = f^2 (fe25519_10.h's fe_sq, the wrapped products summed before times 19). */
static inline void fv_sq(fv out, const fv f) {
  const v8 f0 = f[0], f1 = f[1], f2 = f[2], f3 = f[3], f4 = f[4];
  const v8 f5 = f[5], f6 = f[6], f7 = f[7], f8 = f[8], f9 = f[9];
  const v8 f0_2 = f0 + f0, f1_2 = f1 + f1, f2_2 = f2 + f2, f3_2 = f3 + f3, f4_2 = f4 + f4;
  const v8 f5_2 = f5 + f5, f6_2 = f6 + f6, f7_2 = f7 + f7, f8_2 = f8 + f8, f9_2 = f9 + f9;
  const v8 f1_4 = f1_2 + f1_2, f3_4 = f3_2 + f3_2, f5_4 = f5_2 + f5_2, f7_4 = f7_2 + f7_2;
  v8 h[10];
  h[0] = mul32(f0, f0) + times19(mul32(f1_4, f9) + mul32(f2_2, f8) + mul32(f3_4, f7) +
                                 mul32(f4_2, f6) + mul32(f5_2, f5));
  h[1] = mul32(f0_2, f1) +
         times19(mul32(f2_2, f9) + mul32(f3_2, f8) + mul32(f4_2, f7) + mul32(f5_2, f6));
  h[2] = mul32(f0_2, f2) + mul32(f1_2, f1) +
         times19(mul32(f3_4, f9) + mul32(f4_2, f8) + mul32(f5_4, f7) + mul32(f6, f6));
  h[3] = mul32(f0_2, f3) + mul32(f1_2, f2) +
         times19(mul32(f4_2, f9) + mul32(f5_2, f8) + mul32(f6_2, f7));
  h[4] = mul32(f0_2, f4) + mul32(f1_4, f3) + mul32(f2, f2) +
         times19(mul32(f5_4, f9) + mul32(f6_2, f8) + mul32(f7_2, f7));
  h[5] = mul32(f0_2, f5) + mul32(f1_2, f4) + mul32(f2_2, f3) +
         times19(mul32(f6_2, f9) + mul32(f7_2, f8));
  h[6] = mul32(f0_2, f6) + mul32(f1_4, f5) + mul32(f2_2, f4) + mul32(f3_2, f3) +
         times19(mul32(f7_4, f9) + mul32(f8, f8));
  h[7] = mul32(f0_2, f7) + mul32(f1_2, f6) + mul32(f2_2, f5) + mul32(f3_2, f4) +
         times19(mul32(f8_2, f9));
  h[8] = mul32(f0_2, f8) + mul32(f1_4, f7) + mul32(f2_2, f6) + mul32(f3_4, f5) +
         mul32(f4, f4) + times19(mul32(f9_2, f9));
  h[9] = mul32(f0_2, f9) + mul32(f1_2, f8) + mul32(f2_2, f7) + mul32(f3_2, f6) + mul32(f4_2, f5);
  fv_carry(out, h);
}

static inline void fv_sqn(fv h, const fv f, int n) {
  fv_sq(h, f);
  for (int i = 1; i < n; i++) fv_sq(h, h);
}

/* z^(2^250 - 1), and z^11 (fe25519_pow.h's fe_pow2250m1). */
static void fv_pow2250m1(fv out, fv z11, const fv z) {
  fv t0, t1, t2;
  fv_sq(t0, z);
  fv_sqn(t1, t0, 2);
  fv_mul(t1, z, t1);
  fv_mul(z11, t0, t1);
  fv_sq(t0, z11);
  fv_mul(t0, t1, t0);
  fv_sqn(t1, t0, 5);
  fv_mul(t0, t1, t0);
  fv_sqn(t1, t0, 10);
  fv_mul(t1, t1, t0);
  fv_sqn(t2, t1, 20);
  fv_mul(t1, t2, t1);
  fv_sqn(t1, t1, 10);
  fv_mul(t0, t1, t0);
  fv_sqn(t1, t0, 50);
  fv_mul(t1, t1, t0);
  fv_sqn(t2, t1, 100);
  fv_mul(t1, t2, t1);
  fv_sqn(t1, t1, 50);
  fv_mul(out, t1, t0);
}

/* 1/z = z^(2^255 - 21) (fe_invert). */
static void fv_invert(fv out, const fv z) {
  fv t, z11;
  fv_pow2250m1(t, z11, z);
  fv_sqn(t, t, 5);
  fv_mul(out, t, z11);
}

/* z^((p - 5) / 8) = z^(2^252 - 3) (fe_pow22523). */
static void fv_pow22523(fv out, const fv z) {
  fv t, z11;
  fv_pow2250m1(t, z11, z);
  fv_sqn(t, t, 2);
  fv_mul(out, t, z);
}

/* h = f in the lanes whose mask is all ones, h unchanged in the others (public masks only). */
static inline void fv_blend(fv h, const fv f, v8 mask) {
  for (int i = 0; i < 10; i++) h[i] = (mask & f[i]) | (~mask & h[i]);
}

/* ----------------------------------------------------------- one lane in and out (public data) */

static const int WIDTH[10] = {26, 25, 26, 25, 26, 25, 26, 25, 26, 25};
static const int OFFSET[10] = {0, 26, 51, 77, 102, 128, 153, 179, 204, 230};

/* Lane `lane` of h from the low 255 bits of a little-endian string. */
static void lane_frombytes(fv h, int lane, const uint8_t s[32]) {
  for (int i = 0; i < 10; i++) {
    const int first = OFFSET[i] >> 3;
    uint64_t window = 0;
    for (int b = 4; b >= 0; b--) {
      window <<= 8;
      if (first + b < 32) window |= s[first + b];
    }
    h[i][lane] = (int64_t)((window >> (OFFSET[i] & 7)) & ((1u << WIDTH[i]) - 1));
  }
}

/* The canonical encoding of lane `lane` of f (fe25519_10.h's fe_tobytes). */
static void lane_tobytes(uint8_t s[32], const fv f, int lane) {
  v8 h[10];
  fv t;
  int64_t r[10];
  for (int i = 0; i < 10; i++) h[i] = f[i];
  fv_carry(t, h);
  for (int i = 0; i < 10; i++) r[i] = t[i][lane];
  int64_t q = (19 * r[9] + (1 << 24)) >> 25;
  for (int i = 0; i < 10; i++) q = (r[i] + q) >> WIDTH[i];
  r[0] += 19 * q;
  for (int i = 0; i < 9; i++) {
    const int64_t c = r[i] >> WIDTH[i];
    r[i + 1] += c;
    r[i] -= c * ((int64_t)1 << WIDTH[i]);
  }
  r[9] &= (1 << 25) - 1;
  uint64_t acc = 0;
  int bits = 0, at = 0;
  for (int i = 0; i < 10; i++) {
    acc |= (uint64_t)r[i] << bits;
    bits += WIDTH[i];
    while (bits >= 8) {
      s[at++] = (uint8_t)acc;
      acc >>= 8;
      bits -= 8;
    }
  }
  s[31] = (uint8_t)acc;
}

/* Whether lane `lane` of f is 0 mod p. */
static int lane_iszero(const fv f, int lane) {
  uint8_t s[32], acc = 0;
  lane_tobytes(s, f, lane);
  for (int i = 0; i < 32; i++) acc |= s[i];
  return acc == 0;
}

/* --------------------------------------------------------- points (the formulas of ge25519.h) */

typedef struct { fv X, Y, Z; } gv_p2;
typedef struct { fv X, Y, Z, T; } gv_p3;
typedef struct { fv X, Y, Z, T; } gv_p1p1;
typedef struct { fv YplusX, YminusX, Z, T2d; } gv_cached;

/* d, 2d and sqrt(-1) in these limbs (fe25519_10.h's FE25519_D, FE25519_D2, FE25519_SQRTM1). */
static const fv D = {ALL(56195235), ALL(13857412), ALL(51736253), ALL(6949390), ALL(114729),
                     ALL(24766616), ALL(60832955), ALL(30306712), ALL(48412415), ALL(21499315)};
static const fv SQRTM1 = {ALL(34513072), ALL(25610706), ALL(9377949), ALL(3500415),
                          ALL(12389472), ALL(33281959), ALL(41962654), ALL(31548777),
                          ALL(326685), ALL(11406482)};
static const fv D2 = {ALL(45281625), ALL(27714825), ALL(36363642), ALL(13898781), ALL(229458),
                      ALL(15978800), ALL(54557047), ALL(27058993), ALL(29715967), ALL(9444199)};

static inline void gv_p1p1_to_p2(gv_p2 *r, const gv_p1p1 *p) {
  fv_mul(r->X, p->X, p->T);
  fv_mul(r->Y, p->Y, p->Z);
  fv_mul(r->Z, p->Z, p->T);
}

static inline void gv_p1p1_to_p3(gv_p3 *r, const gv_p1p1 *p) {
  fv_mul(r->X, p->X, p->T);
  fv_mul(r->Y, p->Y, p->Z);
  fv_mul(r->Z, p->Z, p->T);
  fv_mul(r->T, p->X, p->Y);
}

static inline void gv_p3_to_cached(gv_cached *r, const gv_p3 *p) {
  fv_add(r->YplusX, p->Y, p->X);
  fv_sub(r->YminusX, p->Y, p->X);
  fv_copy(r->Z, p->Z);
  fv_mul(r->T2d, p->T, D2);
}

static inline void gv_p2_dbl(gv_p1p1 *r, const gv_p2 *p) {
  fv t0;
  fv_sq(r->X, p->X);
  fv_sq(r->Z, p->Y);
  fv_sq(r->T, p->Z);
  fv_add(r->T, r->T, r->T);
  fv_add(r->Y, p->X, p->Y);
  fv_sq(t0, r->Y);
  fv_add(r->Y, r->Z, r->X);
  fv_sub(r->Z, r->Z, r->X);
  fv_sub(r->X, t0, r->Y);
  fv_sub(r->T, r->T, r->Z);
}

static inline void gv_add(gv_p1p1 *r, const gv_p3 *p, const gv_cached *q) {
  fv t0;
  fv_add(r->X, p->Y, p->X);
  fv_sub(r->Y, p->Y, p->X);
  fv_mul(r->Z, r->X, q->YplusX);
  fv_mul(r->Y, r->Y, q->YminusX);
  fv_mul(r->T, q->T2d, p->T);
  fv_mul(r->X, p->Z, q->Z);
  fv_add(t0, r->X, r->X);
  fv_sub(r->X, r->Z, r->Y);
  fv_add(r->Y, r->Z, r->Y);
  fv_add(r->Z, t0, r->T);
  fv_sub(r->T, t0, r->T);
}

/* h = g in the lanes whose mask is all ones (secret masks: no branch, every lane written). */
static inline void fv_cmov_lanes(fv h, const fv g, v8 mask) {
  for (int i = 0; i < 10; i++) h[i] ^= mask & (h[i] ^ g[i]);
}

static inline void gv_cached_cmov(gv_cached *t, const gv_cached *u, v8 mask) {
  fv_cmov_lanes(t->YplusX, u->YplusX, mask);
  fv_cmov_lanes(t->YminusX, u->YminusX, mask);
  fv_cmov_lanes(t->Z, u->Z, mask);
  fv_cmov_lanes(t->T2d, u->T2d, mask);
}

/*
 * t = b·P lane by lane from the table of 1P..8P, for each lane's b in [-8, 8], touching every
 * entry: the masks come from vector comparisons, so neither a branch nor an index depends on b.
 */
static inline void gv_select(gv_cached *t, const gv_cached table[8], v8 b) {
  gv_cached minus;
  const v8 negative = b >> 63; /* all ones where b < 0 */
  const v8 babs = (b ^ negative) - negative;
  fv_1(t->YplusX);
  fv_1(t->YminusX);
  fv_1(t->Z);
  fv_0(t->T2d);
  for (int i = 0; i < 8; i++) gv_cached_cmov(t, &table[i], (v8)(babs == (v8)ALL(i + 1)));
  fv_copy(minus.YplusX, t->YminusX);
  fv_copy(minus.YminusX, t->YplusX);
  fv_copy(minus.Z, t->Z);
  fv_neg(minus.T2d, t->T2d);
  gv_cached_cmov(t, &minus, negative);
}

/* r = 16 q: four doublings, the window step of both multiplications (q is overwritten). */
static inline void gv_p2_times16(gv_p3 *r, gv_p2 *q) {
  gv_p1p1 s;
  gv_p2_dbl(&s, q);
  for (int k = 0; k < 3; k++) {
    gv_p1p1_to_p2(q, &s);
    gv_p2_dbl(&s, q);
  }
  gv_p1p1_to_p3(r, &s);
}

static inline void gv_p3_dbl(gv_p3 *p) {
  gv_p2 q;
  gv_p1p1 t;
  fv_copy(q.X, p->X);
  fv_copy(q.Y, p->Y);
  fv_copy(q.Z, p->Z);
  gv_p2_dbl(&t, &q);
  gv_p1p1_to_p3(p, &t);
}

/* Lane `lane` of p as the canonical encodings of X, Y, Z, T. */
static void lane_point(uint8_t out[4][32], const gv_p3 *p, int lane) {
  lane_tobytes(out[0], p->X, lane);
  lane_tobytes(out[1], p->Y, lane);
  lane_tobytes(out[2], p->Z, lane);
  lane_tobytes(out[3], p->T, lane);
}

void x8_decode(uint8_t points[8][4][32], int ok[8], const uint8_t candidates[8][32]) {
  gv_p3 h;
  fv u, v, v3, vxx, check, other, turned;
  v8 rooted = ALL(0), negated = ALL(0);
  for (int lane = 0; lane < 8; lane++) lane_frombytes(h.Y, lane, candidates[lane]);
  fv_1(h.Z);
  fv_sq(u, h.Y);
  fv_mul(v, u, D);
  fv_sub(u, u, h.Z); /* u = y^2 - 1 */
  fv_add(v, v, h.Z); /* v = d y^2 + 1 */
  fv_sq(v3, v);
  fv_mul(v3, v3, v);
  fv_sq(h.X, v3);
  fv_mul(h.X, h.X, v);
  fv_mul(h.X, h.X, u);
  fv_pow22523(h.X, h.X);
  fv_mul(h.X, h.X, v3);
  fv_mul(h.X, h.X, u); /* x = u v^3 (u v^7)^((p-5)/8) */
  fv_sq(vxx, h.X);
  fv_mul(vxx, vxx, v);
  fv_sub(check, vxx, u);
  fv_add(other, vxx, u);
  /* per lane (the candidates are public): a root of u/v, of -u/v (times sqrt(-1)), or none */
  for (int lane = 0; lane < 8; lane++) {
    const int direct = lane_iszero(check, lane);
    ok[lane] = direct || lane_iszero(other, lane);
    rooted[lane] = direct ? 0 : -1;
  }
  fv_mul(turned, h.X, SQRTM1);
  fv_blend(h.X, turned, rooted);
  for (int lane = 0; lane < 8; lane++) {
    uint8_t x[32];
    lane_tobytes(x, h.X, lane);
    negated[lane] = (x[0] & 1) != (candidates[lane][31] >> 7) ? -1 : 0;
  }
  fv_neg(turned, h.X);
  fv_blend(h.X, turned, negated);
  fv_mul(h.T, h.X, h.Y);
  /* H = 8·P, refused when it is the identity (a point of small order) */
  gv_p3_dbl(&h);
  gv_p3_dbl(&h);
  gv_p3_dbl(&h);
  fv_sub(check, h.Y, h.Z);
  for (int lane = 0; lane < 8; lane++) {
    if (lane_iszero(h.X, lane) && lane_iszero(check, lane)) ok[lane] = 0;
    lane_point(points[lane], &h, lane);
  }
}

/* d[i] = the eight lanes' digit i (one vector per digit position). */
static void transpose_digits(v8 d[64], const int8_t digits[8][64]) {
  for (int i = 0; i < 64; i++) {
    for (int lane = 0; lane < 8; lane++) d[i][lane] = digits[lane][i];
  }
}

/* Clears digit vectors (the secret scalars) where the compiler cannot drop the stores. */
static void wipe_digits_x8(v8 d[64]) {
  volatile int64_t *wipe = (volatile int64_t *)d;
  for (unsigned i = 0; i < 64 * 8; i++) wipe[i] = 0; /* 64 vectors of eight lanes */
}

/* The encodings (RFC 8032 5.1.2) of eight points whose 1/Z is `recip`: affine y, x's sign. */
static void encode_with(uint8_t out[8][32], const gv_p3 *r, const fv recip) {
  fv x, y;
  fv_mul(x, r->X, recip);
  fv_mul(y, r->Y, recip);
  for (int lane = 0; lane < 8; lane++) {
    uint8_t xs[32];
    lane_tobytes(out[lane], y, lane);
    lane_tobytes(xs, x, lane);
    out[lane][31] ^= (uint8_t)((xs[0] & 1) << 7);
  }
}

/* The encodings of eight points' affine y with the sign of x in bit 255 (RFC 8032 5.1.2). */
static void encode_lanes(uint8_t out[8][32], const gv_p3 *r) {
  fv recip;
  fv_invert(recip, r->Z);
  encode_with(out, r, recip);
}

/*
 * encode_lanes of two groups of points for one inversion (Montgomery's trick): 1/(Zp Zq)
 * times Zq is 1/Zp and times Zp is 1/Zq. A proof encodes four points per lane; an inversion
 * costs about as much as 250 multiplications, a tenth of a scalar multiplication.
 */
static void encode_pair(uint8_t out_p[8][32], const gv_p3 *p, uint8_t out_q[8][32],
                        const gv_p3 *q) {
  fv both, inverse, recip;
  fv_mul(both, p->Z, q->Z);
  fv_invert(inverse, both);
  fv_mul(recip, inverse, q->Z);
  encode_with(out_p, p, recip);
  fv_mul(recip, inverse, p->Z);
  encode_with(out_q, q, recip);
}

static void load_lanes(gv_p3 *p, const uint8_t points[8][4][32]) {
  for (int lane = 0; lane < 8; lane++) {
    lane_frombytes(p->X, lane, points[lane][0]);
    lane_frombytes(p->Y, lane, points[lane][1]);
    lane_frombytes(p->Z, lane, points[lane][2]);
    lane_frombytes(p->T, lane, points[lane][3]);
  }
}

void x8_encode(uint8_t out[8][32], const uint8_t points[8][4][32]) {
  gv_p3 p;
  load_lanes(&p, points);
  encode_lanes(out, &p);
}

/* r = a_i·P_i in each lane, for the transposed digits d of the a_i (constant time in them). */
static void multiply_p3(gv_p3 *r, const gv_p3 *p, const v8 d[64]) {
  gv_p3 acc;
  gv_cached table[8], t;
  gv_p1p1 s;
  gv_p2 q;
  gv_p3_to_cached(&table[0], p);
  for (int i = 1; i < 8; i++) {
    gv_add(&s, p, &table[i - 1]);
    gv_p1p1_to_p3(&acc, &s);
    gv_p3_to_cached(&table[i], &acc);
  }
  fv_0(r->X);
  fv_1(r->Y);
  fv_1(r->Z);
  fv_0(r->T);
  for (int i = 63; i > 0; i--) {
    gv_select(&t, table, d[i]);
    gv_add(&s, r, &t);
    gv_p1p1_to_p2(&q, &s);
    gv_p2_times16(r, &q);
  }
  gv_select(&t, table, d[0]);
  gv_add(&s, r, &t);
  gv_p1p1_to_p3(r, &s);
}

void x8_multiply_lanes(uint8_t out[8][32], const uint8_t points[8][4][32],
                       const int8_t digits[8][64]) {
  gv_p3 p, r;
  v8 d[64];
  transpose_digits(d, digits);
  load_lanes(&p, points);
  multiply_p3(&r, &p, d);
  encode_lanes(out, &r);
  wipe_digits_x8(d);
}

/* ------------------------------------------------- k·B: the fixed base, from a precomputed comb */

/*
 * Entry j of window i is (j + 1)·256^i·B in cached coordinates. Every lane of the base is the
 * same point, so an entry keeps one lane's limbs (below 2^27 in magnitude: carried values and
 * sums of two) and is broadcast when selected: 40 KiB in all. Built once per process, with the
 * operations of the variable-base table (so its limbs meet the same bounds).
 */
typedef struct {
  int32_t limbs[4][10]; /* YplusX, YminusX, Z, T2d */
} base_entry;
static base_entry BASE_TABLE[32][8];
static pthread_once_t BASE_ONCE = PTHREAD_ONCE_INIT;

/* B's affine coordinates x and y, little-endian (RFC 8032 5.1). */
static const uint8_t BASE_X[32] = {0x1a, 0xd5, 0x25, 0x8f, 0x60, 0x2d, 0x56, 0xc9, 0xb2, 0xa7, 0x25,
                                   0x95, 0x60, 0xc7, 0x2c, 0x69, 0x5c, 0xdc, 0xd6, 0xfd, 0x31, 0xe2,
                                   0xa4, 0xc0, 0xfe, 0x53, 0x6e, 0xcd, 0xd3, 0x36, 0x69, 0x21};
static const uint8_t BASE_Y[32] = {0x58, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66,
                                   0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66,
                                   0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66};

static void store_entry(base_entry *e, const gv_cached *c) {
  for (int k = 0; k < 10; k++) {
    e->limbs[0][k] = (int32_t)c->YplusX[k][0];
    e->limbs[1][k] = (int32_t)c->YminusX[k][0];
    e->limbs[2][k] = (int32_t)c->Z[k][0];
    e->limbs[3][k] = (int32_t)c->T2d[k][0];
  }
}

static void build_base_table(void) {
  gv_p3 p, acc;
  gv_cached first, c;
  gv_p1p1 s;
  for (int lane = 0; lane < 8; lane++) {
    lane_frombytes(p.X, lane, BASE_X);
    lane_frombytes(p.Y, lane, BASE_Y);
  }
  fv_1(p.Z);
  fv_mul(p.T, p.X, p.Y);
  for (int i = 0; i < 32; i++) {
    gv_p3_to_cached(&first, &p);
    store_entry(&BASE_TABLE[i][0], &first);
    acc = p;
    for (int j = 1; j < 8; j++) {
      gv_add(&s, &acc, &first);
      gv_p1p1_to_p3(&acc, &s);
      gv_p3_to_cached(&c, &acc);
      store_entry(&BASE_TABLE[i][j], &c);
    }
    for (int k = 0; k < 8; k++) gv_p3_dbl(&p); /* the next window's base: 256 P */
  }
}

static inline void fv_cmov_entry(fv h, const int32_t g[10], v8 mask) {
  for (int k = 0; k < 10; k++) h[k] ^= mask & (h[k] ^ (v8)ALL((int64_t)g[k]));
}

/* t = b·256^i·B lane by lane, for each lane's b in [-8, 8], touching every entry of window i. */
static inline void gv_select_base(gv_cached *t, int i, v8 b) {
  gv_cached minus;
  const v8 negative = b >> 63;
  const v8 babs = (b ^ negative) - negative;
  fv_1(t->YplusX);
  fv_1(t->YminusX);
  fv_1(t->Z);
  fv_0(t->T2d);
  for (int j = 0; j < 8; j++) {
    const v8 mask = (v8)(babs == (v8)ALL(j + 1));
    const base_entry *e = &BASE_TABLE[i][j];
    fv_cmov_entry(t->YplusX, e->limbs[0], mask);
    fv_cmov_entry(t->YminusX, e->limbs[1], mask);
    fv_cmov_entry(t->Z, e->limbs[2], mask);
    fv_cmov_entry(t->T2d, e->limbs[3], mask);
  }
  fv_copy(minus.YplusX, t->YminusX);
  fv_copy(minus.YminusX, t->YplusX);
  fv_copy(minus.Z, t->Z);
  fv_neg(minus.T2d, t->T2d);
  gv_cached_cmov(t, &minus, negative);
}

/*
 * r = a_i·B in each lane, for the transposed digits d of the a_i (constant time in them).
 * a = sum e_i 16^i with the odd digits first: sum over odd i of e_i 256^((i-1)/2) B, times 16
 * (four doublings), plus the even digits' sum: 64 additions and 4 doublings, where a variable
 * base needs 64 additions and 252 doublings.
 */
static void multiply_base_p3(gv_p3 *r, const v8 d[64]) {
  gv_cached t;
  gv_p1p1 s;
  gv_p2 q;
  pthread_once(&BASE_ONCE, build_base_table);
  fv_0(r->X);
  fv_1(r->Y);
  fv_1(r->Z);
  fv_0(r->T);
  for (int i = 1; i < 64; i += 2) {
    gv_select_base(&t, i / 2, d[i]);
    gv_add(&s, r, &t);
    gv_p1p1_to_p3(r, &s);
  }
  fv_copy(q.X, r->X);
  fv_copy(q.Y, r->Y);
  fv_copy(q.Z, r->Z);
  gv_p2_times16(r, &q);
  for (int i = 0; i < 64; i += 2) {
    gv_select_base(&t, i / 2, d[i]);
    gv_add(&s, r, &t);
    gv_p1p1_to_p3(r, &s);
  }
}

void x8_multiply_base(uint8_t out[8][32], const int8_t digits[8][64]) {
  gv_p3 r;
  v8 d[64];
  transpose_digits(d, digits);
  multiply_base_p3(&r, d);
  encode_lanes(out, &r);
  wipe_digits_x8(d);
}

/* p = the points, r = a·P_i in each lane, for a's digits (the same scalar in every lane). */
static void multiply_one_scalar(gv_p3 *r, gv_p3 *p, const uint8_t points[8][4][32],
                                const int8_t digits[64]) {
  v8 d[64];
  for (int i = 0; i < 64; i++) d[i] = (v8)ALL(digits[i]);
  load_lanes(p, points);
  multiply_p3(r, p, d);
  wipe_digits_x8(d);
}

void x8_encode_and_multiply(uint8_t out_p[8][32], uint8_t out_a[8][32],
                            const uint8_t points[8][4][32], const int8_t digits[64]) {
  gv_p3 p, r;
  multiply_one_scalar(&r, &p, points, digits);
  encode_pair(out_p, &p, out_a, &r);
}

void x8_multiply_base_and_lanes(uint8_t out_b[8][32], uint8_t out_p[8][32],
                                const uint8_t points[8][4][32], const int8_t digits[8][64]) {
  gv_p3 p, b, r;
  v8 d[64];
  transpose_digits(d, digits);
  load_lanes(&p, points);
  multiply_base_p3(&b, d);
  multiply_p3(&r, &p, d);
  encode_pair(out_b, &b, out_p, &r);
  wipe_digits_x8(d);
}

void x8_multiply(uint8_t out[8][32], const uint8_t points[8][4][32], const int8_t digits[64]) {
  gv_p3 p, r;
  multiply_one_scalar(&r, &p, points, digits);
  encode_lanes(out, &r);
}

void x8_multiply_and_times8(uint8_t out_a[8][32], uint8_t out_8a[8][32],
                            const uint8_t points[8][4][32], const int8_t digits[64]) {
  gv_p3 p, r, r8;
  multiply_one_scalar(&r, &p, points, digits);
  r8 = r;
  gv_p3_dbl(&r8);
  gv_p3_dbl(&r8);
  gv_p3_dbl(&r8);
  encode_pair(out_a, &r, out_8a, &r8);
}

#if defined(__clang__)
#pragma clang attribute pop
#endif

#else

int x8_available(void) { return 0; }

void x8_decode(uint8_t points[8][4][32], int ok[8], const uint8_t candidates[8][32]) {
  (void)points;
  (void)candidates;
  for (int lane = 0; lane < 8; lane++) ok[lane] = 0;
}

void x8_multiply(uint8_t out[8][32], const uint8_t points[8][4][32], const int8_t digits[64]) {
  (void)out;
  (void)points;
  (void)digits;
}

void x8_multiply_lanes(uint8_t out[8][32], const uint8_t points[8][4][32],
                       const int8_t digits[8][64]) {
  (void)out;
  (void)points;
  (void)digits;
}

void x8_encode(uint8_t out[8][32], const uint8_t points[8][4][32]) {
  (void)out;
  (void)points;
}

void x8_multiply_base(uint8_t out[8][32], const int8_t digits[8][64]) {
  (void)out;
  (void)digits;
}

void x8_encode_and_multiply(uint8_t out_p[8][32], uint8_t out_a[8][32],
                            const uint8_t points[8][4][32], const int8_t digits[64]) {
  (void)out_p;
  (void)out_a;
  (void)points;
  (void)digits;
}

void x8_multiply_base_and_lanes(uint8_t out_b[8][32], uint8_t out_p[8][32],
                                const uint8_t points[8][4][32], const int8_t digits[8][64]) {
  (void)out_b;
  (void)out_p;
  (void)points;
  (void)digits;
}

void x8_multiply_and_times8(uint8_t out_a[8][32], uint8_t out_8a[8][32],
                            const uint8_t points[8][4][32], const int8_t digits[64]) {
  (void)out_a;
  (void)out_8a;
  (void)points;
  (void)digits;
}

#endif
