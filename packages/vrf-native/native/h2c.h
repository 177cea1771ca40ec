/*
 * Hash to curve of ECVRF-EDWARDS25519-SHA512-TAI (spec 5.3 encode_to_curve, try and
 * increment), written once for the addon (addon.c) and core's WebAssembly module (wasm.c):
 * the candidate hashes, upstream's non-canonical filter (ge25519.h), the lenient decoding and
 * the cofactor clearing. Inputs are public (a public key and a label's alpha), so the early
 * returns leak nothing secret.
 */
#ifndef AKD_H2C_H
#define AKD_H2C_H

#include "ge25519.h"
#include "sha512.h"

/*
 * One try-and-increment candidate (after upstream's non-canonical filter, which the caller
 * applies): decode leniently, clear the cofactor (H = 8 P) and refuse the identity. Returns 0
 * and H in p, or -1 when the candidate is not a point or has small order.
 */
static inline int decode_clear_cofactor(ge_p3 *p, const uint8_t candidate[32]) {
  if (ge_frombytes_lenient(p, candidate, &GE_CONSTANTS) != 0) return -1;
  ge_p3_dbl_to_p3(p, p);
  ge_p3_dbl_to_p3(p, p);
  ge_p3_dbl_to_p3(p, p);
  return ge_p3_is_identity(p) ? -1 : 0;
}

/* Candidate `counter` of an alpha: SHA512(0x03 || 0x01 || Y || alpha || ctr || 0x00)[0..32]. */
static inline void h2c_candidate(uint8_t out[32], const uint8_t pk[32], const uint8_t *alpha,
                                 uint32_t alpha_len, int counter) {
  static const uint8_t front[2] = {0x03, 0x01};
  uint8_t tail[2] = {(uint8_t)counter, 0x00}, digest[64];
  sha512_state s;
  sha512_init(&s);
  sha512_update(&s, front, 2);
  sha512_update(&s, pk, 32);
  sha512_update(&s, alpha, alpha_len);
  sha512_update(&s, tail, 2);
  sha512_final(&s, digest);
  for (int i = 0; i < 32; i++) out[i] = digest[i];
}

/*
 * encode_to_curve: H from the first candidate, ctr = 0..255, that passes the filter and
 * decodes to a point of large order (the hash state of the common prefix is kept across
 * counters). Returns the counter and H in h, or -1 when no counter gives a point.
 */
static inline int encode_to_curve(ge_p3 *h, const uint8_t pk[32], const uint8_t *alpha,
                                  uint32_t alpha_len) {
  static const uint8_t front[2] = {0x03, 0x01};
  sha512_state prefix;
  sha512_init(&prefix);
  sha512_update(&prefix, front, 2);
  sha512_update(&prefix, pk, 32);
  sha512_update(&prefix, alpha, alpha_len);
  for (int counter = 0; counter < 256; counter++) {
    sha512_state s = prefix;
    uint8_t tail[2] = {(uint8_t)counter, 0x00}, digest[64];
    sha512_update(&s, tail, 2);
    sha512_final(&s, digest);
    if (rejected_noncanonical(digest)) continue;
    if (decode_clear_cofactor(h, digest) == 0) return counter;
  }
  return -1;
}

#endif
