/*
 * Points of edwards25519 (-x^2 + y^2 = 1 + d x^2 y^2) in the extended coordinates of
 * Hisil-Wong-Carter-Dawson: p3 = (X:Y:Z:T) with x = X/Z, y = Y/Z, XY = ZT; p2 drops T;
 * p1p1 is the "completed" result of an addition or doubling; cached holds what an addition
 * needs of its second operand. Spec 5.1 fixes the curve and the encodings (RFC 8032 5.1.2).
 */
#ifndef AKD_GE25519_H
#define AKD_GE25519_H

#include "field.h"

typedef struct { fe X, Y, Z; } ge_p2;
typedef struct { fe X, Y, Z, T; } ge_p3;
typedef struct { fe X, Y, Z, T; } ge_p1p1;
typedef struct { fe YplusX, YminusX, Z, T2d; } ge_cached;

typedef struct { fe d, d2, sqrtm1; } ge_constants;

/*
 * d = -121665/121666 (spec 5.1), 2d and sqrt(-1) = 2^((p-1)/4), in the limbs of whichever
 * field header is in use (its FE25519_* initialisers). Constant data, so every thread that
 * loads the code shares them without initialising anything.
 */
static const ge_constants GE_CONSTANTS = {FE25519_D, FE25519_D2, FE25519_SQRTM1};

static inline void ge_p3_0(ge_p3 *h) { fe_0(h->X); fe_1(h->Y); fe_1(h->Z); fe_0(h->T); }

static inline void ge_cached_0(ge_cached *h) {
  fe_1(h->YplusX); fe_1(h->YminusX); fe_1(h->Z); fe_0(h->T2d);
}

/*
 * Lenient decoding as curve25519-dalek's decompress does it (spec 5.3): y is the low 255 bits
 * taken mod p (a non-canonical y is accepted), x = +-sqrt((y^2 - 1) / (d y^2 + 1)) with the
 * sign of bit 255, and x = 0 is accepted with either sign. Returns 0, or -1 when no x exists.
 * Inputs here are public (hash outputs), so the early return leaks nothing secret.
 */
static inline int ge_frombytes_lenient(ge_p3 *h, const uint8_t s[32], const ge_constants *c) {
  fe u, v, v3, vxx, check;
  fe_frombytes(h->Y, s);
  fe_1(h->Z);
  fe_sq(u, h->Y);
  fe_mul(v, u, c->d);
  fe_sub(u, u, h->Z);       /* u = y^2 - 1 */
  fe_add(v, v, h->Z);       /* v = d y^2 + 1 */
  fe_sq(v3, v);
  fe_mul(v3, v3, v);        /* v^3 */
  fe_sq(h->X, v3);
  fe_mul(h->X, h->X, v);
  fe_mul(h->X, h->X, u);    /* u v^7 */
  fe_pow22523(h->X, h->X);
  fe_mul(h->X, h->X, v3);
  fe_mul(h->X, h->X, u);    /* x = u v^3 (u v^7)^((p-5)/8) */
  fe_sq(vxx, h->X);
  fe_mul(vxx, vxx, v);
  fe_sub(check, vxx, u);
  if (!fe_iszero(check)) {
    fe_add(check, vxx, u);
    if (!fe_iszero(check)) return -1;
    fe_mul(h->X, h->X, c->sqrtm1);
  }
  if (fe_isnegative(h->X) != (s[31] >> 7)) fe_neg(h->X, h->X);
  fe_mul(h->T, h->X, h->Y);
  return 0;
}

static inline void ge_p1p1_to_p2(ge_p2 *r, const ge_p1p1 *p) {
  fe_mul(r->X, p->X, p->T);
  fe_mul(r->Y, p->Y, p->Z);
  fe_mul(r->Z, p->Z, p->T);
}

static inline void ge_p1p1_to_p3(ge_p3 *r, const ge_p1p1 *p) {
  fe_mul(r->X, p->X, p->T);
  fe_mul(r->Y, p->Y, p->Z);
  fe_mul(r->Z, p->Z, p->T);
  fe_mul(r->T, p->X, p->Y);
}

static inline void ge_p3_to_p2(ge_p2 *r, const ge_p3 *p) {
  fe_copy(r->X, p->X); fe_copy(r->Y, p->Y); fe_copy(r->Z, p->Z);
}

static inline void ge_p3_to_cached(ge_cached *r, const ge_p3 *p, const ge_constants *c) {
  fe_add(r->YplusX, p->Y, p->X);
  fe_sub(r->YminusX, p->Y, p->X);
  fe_copy(r->Z, p->Z);
  fe_mul(r->T2d, p->T, c->d2);
}

/* r = 2p (dbl-2008-hwcd, a = -1). */
static inline void ge_p2_dbl(ge_p1p1 *r, const ge_p2 *p) {
  fe t0;
  fe_sq(r->X, p->X);
  fe_sq(r->Z, p->Y);
  fe_sq(r->T, p->Z);
  fe_add(r->T, r->T, r->T);
  fe_add(r->Y, p->X, p->Y);
  fe_sq(t0, r->Y);
  fe_add(r->Y, r->Z, r->X);
  fe_sub(r->Z, r->Z, r->X);
  fe_sub(r->X, t0, r->Y);
  fe_sub(r->T, r->T, r->Z);
}

/* r = p + q (add-2008-hwcd-3, a = -1, complete on edwards25519). */
static inline void ge_add(ge_p1p1 *r, const ge_p3 *p, const ge_cached *q) {
  fe t0;
  fe_add(r->X, p->Y, p->X);
  fe_sub(r->Y, p->Y, p->X);
  fe_mul(r->Z, r->X, q->YplusX);
  fe_mul(r->Y, r->Y, q->YminusX);
  fe_mul(r->T, q->T2d, p->T);
  fe_mul(r->X, p->Z, q->Z);
  fe_add(t0, r->X, r->X);
  fe_sub(r->X, r->Z, r->Y);
  fe_add(r->Y, r->Z, r->Y);
  fe_add(r->Z, t0, r->T);
  fe_sub(r->T, t0, r->T);
}

static inline void ge_p3_dbl_to_p3(ge_p3 *r, const ge_p3 *p) {
  ge_p2 q;
  ge_p1p1 t;
  ge_p3_to_p2(&q, p);
  ge_p2_dbl(&t, &q);
  ge_p1p1_to_p3(r, &t);
}

/* The encoding of RFC 8032 5.1.2: y, with the sign of x in bit 255. */
static inline void ge_p3_tobytes(uint8_t s[32], const ge_p3 *h) {
  fe recip, x, y;
  fe_invert(recip, h->Z);
  fe_mul(x, h->X, recip);
  fe_mul(y, h->Y, recip);
  fe_tobytes(s, y);
  s[31] ^= (uint8_t)(fe_isnegative(x) << 7);
}

static inline int ge_p3_is_identity(const ge_p3 *h) {
  fe t;
  fe_sub(t, h->Y, h->Z);
  return fe_iszero(h->X) && fe_iszero(t);
}

/* Constant-time helpers of the windowed multiplication. */
static inline uint64_t ct_equal(int8_t b, int8_t c) {
  uint8_t x = (uint8_t)b ^ (uint8_t)c;
  uint32_t y = x;
  y -= 1;
  return y >> 31;
}

static inline uint64_t ct_negative(int8_t b) { return ((uint64_t)(int64_t)b) >> 63; }

static inline void ge_cached_cmov(ge_cached *t, const ge_cached *u, uint64_t b) {
  fe_cmov(t->YplusX, u->YplusX, b);
  fe_cmov(t->YminusX, u->YminusX, b);
  fe_cmov(t->Z, u->Z, b);
  fe_cmov(t->T2d, u->T2d, b);
}

/* t = b·P from the table of 1P..8P, for b in [-8, 8], touching every entry. */
static inline void ge_select(ge_cached *t, const ge_cached table[8], int8_t b) {
  ge_cached minus;
  const uint64_t negative = ct_negative(b);
  const int8_t babs = (int8_t)(b - (int8_t)(((int8_t)(0 - negative) & b) * 2));
  ge_cached_0(t);
  for (int i = 0; i < 8; i++) ge_cached_cmov(t, &table[i], ct_equal(babs, (int8_t)(i + 1)));
  fe_copy(minus.YplusX, t->YminusX);
  fe_copy(minus.YminusX, t->YplusX);
  fe_copy(minus.Z, t->Z);
  fe_neg(minus.T2d, t->T2d);
  ge_cached_cmov(t, &minus, negative);
}

/*
 * The scalar's signed radix-16 digits e[0..63] in [-8, 8], sum e[i]·16^i = a. Needs
 * a[31] <= 127 (any scalar below 2^255). Computed once per key: the digits are secret.
 */
static inline void ge_scalar_digits(int8_t e[64], const uint8_t a[32]) {
  int8_t carry = 0;
  for (int i = 0; i < 32; i++) {
    e[2 * i] = (int8_t)(a[i] & 15);
    e[2 * i + 1] = (int8_t)((a[i] >> 4) & 15);
  }
  for (int i = 0; i < 63; i++) {
    e[i] = (int8_t)(e[i] + carry);
    carry = (int8_t)((e[i] + 8) >> 4);
    e[i] = (int8_t)(e[i] - carry * 16);
  }
  e[63] = (int8_t)(e[63] + carry);
}

/* r = a·P for the digits of a, in a fixed sequence of operations (constant time in a). */
static inline void ge_scalarmult(ge_p3 *r, const int8_t e[64], const ge_p3 *p, const ge_constants *c) {
  ge_cached table[8], t;
  ge_p1p1 s;
  ge_p2 q;
  ge_p3 acc;
  ge_p3_to_cached(&table[0], p, c);
  for (int i = 1; i < 8; i++) {
    ge_add(&s, p, &table[i - 1]);
    ge_p1p1_to_p3(&acc, &s);
    ge_p3_to_cached(&table[i], &acc, c);
  }
  ge_p3_0(r);
  for (int i = 63; i > 0; i--) {
    ge_select(&t, table, e[i]);
    ge_add(&s, r, &t);
    ge_p1p1_to_p2(&q, &s);
    ge_p2_dbl(&s, &q);
    ge_p1p1_to_p2(&q, &s);
    ge_p2_dbl(&s, &q);
    ge_p1p1_to_p2(&q, &s);
    ge_p2_dbl(&s, &q);
    ge_p1p1_to_p2(&q, &s);
    ge_p2_dbl(&s, &q);
    ge_p1p1_to_p3(r, &s);
  }
  ge_select(&t, table, e[0]);
  ge_add(&s, r, &t);
  ge_p1p1_to_p3(r, &s);
}

/*
 * Hash to curve, shared by the addon's and the WebAssembly module's try-and-increment loops.
 */
/* Upstream's filter of non-canonical candidates (spec 5.3 is_rejected_noncanonical). */
static inline int rejected_noncanonical(const uint8_t h[32]) {
  for (int i = 1; i <= 30; i++) {
    if (h[i] != 0xff) return 0;
  }
  if (h[31] != 0xff && h[31] != 0x7f) return 0;
  switch (256 - h[0]) {
    case 1: case 3: case 4: case 5: case 9: case 10: case 13: case 14: case 15: case 16:
      return 1;
    default:
      return 0;
  }
}

/* The base point B (RFC 8032 5.1), decoded on use. */
static const uint8_t GE_BASE_BYTES[32] = {0x58, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66,
                                          0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66,
                                          0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66,
                                          0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66};

static inline void ge_base(ge_p3 *b) { ge_frombytes_lenient(b, GE_BASE_BYTES, &GE_CONSTANTS); }

#endif
