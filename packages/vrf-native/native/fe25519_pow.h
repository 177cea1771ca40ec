/*
 * What the field needs beyond its limb arithmetic, written once over the fe_* interface that
 * each limb layout provides (fe25519_51.h: five 51-bit limbs for 64-bit hosts; fe25519_10.h:
 * ten 25.5-bit limbs for WebAssembly; field.h chooses): repeated squaring,
 * the zero and sign tests on the canonical encoding, inversion and the square-root power.
 * Include it at the end of a limb header, after fe_sq, fe_mul and fe_tobytes.
 */
#ifndef AKD_FE25519_POW_H
#define AKD_FE25519_POW_H

/* h = f^(2^n) */
static inline void fe_sqn(fe h, const fe f, int n) {
  fe_sq(h, f);
  for (int i = 1; i < n; i++) fe_sq(h, h);
}

static inline int fe_iszero(const fe f) {
  uint8_t s[32];
  uint8_t acc = 0;
  fe_tobytes(s, f);
  for (int i = 0; i < 32; i++) acc |= s[i];
  return acc == 0;
}

/* The low bit of the canonical encoding: the "sign" of RFC 8032. */
static inline int fe_isnegative(const fe f) {
  uint8_t s[32];
  fe_tobytes(s, f);
  return s[0] & 1;
}

/* The chain shared by inversion and the square root: returns z^(2^250 - 1) and z^11. */
static inline void fe_pow2250m1(fe out, fe z11, const fe z) {
  fe t0, t1, t2;
  fe_sq(t0, z);              /* z^2 */
  fe_sqn(t1, t0, 2);         /* z^8 */
  fe_mul(t1, z, t1);         /* z^9 */
  fe_mul(z11, t0, t1);       /* z^11 */
  fe_sq(t0, z11);            /* z^22 */
  fe_mul(t0, t1, t0);        /* z^(2^5 - 1) */
  fe_sqn(t1, t0, 5);
  fe_mul(t0, t1, t0);        /* 2^10 - 1 */
  fe_sqn(t1, t0, 10);
  fe_mul(t1, t1, t0);        /* 2^20 - 1 */
  fe_sqn(t2, t1, 20);
  fe_mul(t1, t2, t1);        /* 2^40 - 1 */
  fe_sqn(t1, t1, 10);
  fe_mul(t0, t1, t0);        /* 2^50 - 1 */
  fe_sqn(t1, t0, 50);
  fe_mul(t1, t1, t0);        /* 2^100 - 1 */
  fe_sqn(t2, t1, 100);
  fe_mul(t1, t2, t1);        /* 2^200 - 1 */
  fe_sqn(t1, t1, 50);
  fe_mul(out, t1, t0);       /* 2^250 - 1 */
}

/* 1/z as z^(p - 2) = z^(2^255 - 21); 0 maps to 0. */
static inline void fe_invert(fe out, const fe z) {
  fe t, z11;
  fe_pow2250m1(t, z11, z);
  fe_sqn(t, t, 5);           /* 2^255 - 32 */
  fe_mul(out, t, z11);       /* 2^255 - 21 */
}

/* z^((p - 5) / 8) = z^(2^252 - 3), the exponent of the square-root formula (RFC 8032 5.1.3). */
static inline void fe_pow22523(fe out, const fe z) {
  fe t, z11;
  fe_pow2250m1(t, z11, z);
  fe_sqn(t, t, 2);           /* 2^252 - 4 */
  fe_mul(out, t, z);         /* 2^252 - 3 */
}

#endif
