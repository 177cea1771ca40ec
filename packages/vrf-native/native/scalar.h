/*
 * Scalars modulo L = 2^252 + 27742317777372353535851937790883648493 (spec 5.1), for the
 * prover: the nonce k = SHA512(...) mod L and the response s = k + c x mod L (spec 5.3,
 * RFC 9381 5.4.2.2). Both involve the secret scalar, so everything here is constant time: a
 * Barrett reduction with masked conditional subtractions, and fixed-length loops.
 * Values are little-endian arrays of 32-bit words.
 */
#ifndef AKD_SCALAR_H
#define AKD_SCALAR_H

#include <stdint.h>

static const uint32_t SC_L[8] = {0x5cf5d3ed, 0x5812631a, 0xa2f79cd6, 0x14def9de,
                                 0x00000000, 0x00000000, 0x00000000, 0x10000000};

static inline uint32_t sc_load32(const uint8_t *in) {
  return (uint32_t)in[0] | (uint32_t)in[1] << 8 | (uint32_t)in[2] << 16 | (uint32_t)in[3] << 24;
}

/* Clears secrets where the compiler cannot drop the stores. */
static inline void vrf_wipe(void *p, unsigned n) {
  volatile uint8_t *w = (volatile uint8_t *)p;
  for (unsigned i = 0; i < n; i++) w[i] = 0;
}

static inline void sc_store32(uint8_t *out, uint32_t v) {
  for (int i = 0; i < 4; i++, v >>= 8) out[i] = (uint8_t)v;
}

/* floor(2^512 / L) in little-endian words: Barrett's constant for words of 32 bits. */
static const uint32_t SC_MU[9] = {0x0a2c131b, 0xed9ce5a3, 0x086329a7, 0x2106215d, 0xffffffeb,
                                  0xffffffff, 0xffffffff, 0xffffffff, 0x0000000f};

/* r = r - L unless that borrows (a masked choice), for r of nine words. */
static inline void sc_subtract_l(uint32_t r[9]) {
  uint32_t t[9];
  uint64_t borrow = 0;
  for (int i = 0; i < 9; i++) {
    const uint64_t d = (uint64_t)r[i] - (i < 8 ? SC_L[i] : 0) - borrow;
    t[i] = (uint32_t)d;
    borrow = (d >> 32) & 1;
  }
  /* no borrow: r >= L, take t */
  const uint32_t keep_t = (uint32_t)borrow - 1;
  for (int i = 0; i < 9; i++) r[i] = (t[i] & keep_t) | (r[i] & ~keep_t);
  vrf_wipe(t, sizeof t);
}

/*
 * out = the 512-bit value `words` (16 words) mod L, by Barrett reduction (HAC 14.42 with
 * b = 2^32, k = 8): q = floor(floor(N / b^7) MU / b^9) is floor(N / L) or up to two below it,
 * so N - q L, computed modulo b^9, is below 3L, and two masked subtractions of L finish.
 * Every loop has a fixed length and no branch or index depends on N.
 */
static inline void sc_reduce_words(uint8_t out[32], const uint32_t words[16]) {
  uint32_t product[18] = {0}, qL[9] = {0}, r[9];
  /* product = floor(N / b^7) MU; its words 9..17 are q */
  for (int i = 0; i < 9; i++) {
    uint64_t carry = 0;
    for (int j = 0; j < 9; j++) {
      const uint64_t t = (uint64_t)words[7 + i] * SC_MU[j] + product[i + j] + carry;
      product[i + j] = (uint32_t)t;
      carry = t >> 32;
    }
    product[i + 9] = (uint32_t)carry;
  }
  /* qL = q L mod b^9 */
  for (int i = 0; i < 9; i++) {
    uint64_t carry = 0;
    for (int j = 0; i + j < 9; j++) {
      const uint64_t t = (uint64_t)product[9 + i] * (j < 8 ? SC_L[j] : 0) + qL[i + j] + carry;
      qL[i + j] = (uint32_t)t;
      carry = t >> 32;
    }
  }
  /* r = N - q L mod b^9 */
  uint64_t borrow = 0;
  for (int i = 0; i < 9; i++) {
    const uint64_t d = (uint64_t)words[i] - qL[i] - borrow;
    r[i] = (uint32_t)d;
    borrow = (d >> 32) & 1;
  }
  sc_subtract_l(r);
  sc_subtract_l(r);
  for (int i = 0; i < 8; i++) sc_store32(out + 4 * i, r[i]);
  vrf_wipe(product, sizeof product);
  vrf_wipe(qL, sizeof qL);
  vrf_wipe(r, sizeof r);
}

/* out = the 64-byte little-endian `in` mod L. */
static inline void sc_reduce64(uint8_t out[32], const uint8_t in[64]) {
  uint32_t words[16];
  for (int i = 0; i < 16; i++) words[i] = sc_load32(in + 4 * i);
  sc_reduce_words(out, words);
  vrf_wipe(words, sizeof words);
}

/* out = a b + c mod L, for 32-byte little-endian a, b, c below 2^256. */
static inline void sc_muladd(uint8_t out[32], const uint8_t a[32], const uint8_t b[32],
                             const uint8_t c[32]) {
  uint32_t x[8], y[8], words[16] = {0};
  for (int i = 0; i < 8; i++) {
    x[i] = sc_load32(a + 4 * i);
    y[i] = sc_load32(b + 4 * i);
    words[i] = sc_load32(c + 4 * i);
  }
  for (int i = 0; i < 8; i++) {
    uint64_t carry = 0;
    for (int j = 0; j < 8; j++) {
      const uint64_t t = (uint64_t)x[i] * y[j] + words[i + j] + carry;
      words[i + j] = (uint32_t)t;
      carry = t >> 32;
    }
    for (int k = i + 8; k < 16; k++) {
      const uint64_t t = (uint64_t)words[k] + carry;
      words[k] = (uint32_t)t;
      carry = t >> 32;
    }
  }
  sc_reduce_words(out, words);
  vrf_wipe(words, sizeof words);
  vrf_wipe(x, sizeof x);
  vrf_wipe(y, sizeof y);
}

#endif
