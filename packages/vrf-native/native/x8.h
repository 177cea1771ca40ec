/*
 * Eight scalar multiplications at once with AVX-512 (x8.c), for evaluating and proving many
 * labels under one key: every label multiplies its own point by a scalar (the same secret for
 * an evaluation, a nonce of its own in a proof) through the same sequence of operations, one
 * label per 64-bit lane. Available only where the
 * compiler targets x86-64 and the processor has AVX-512F (checked at run time).
 */
#ifndef AKD_X8_H
#define AKD_X8_H

#include <stdint.h>

/* Whether this build has the eight-lane code and this processor runs it. */
int x8_available(void);

/*
 * The try-and-increment step of spec 5.3 for eight candidates (after upstream's filter, which
 * the caller applies): decode each as curve25519-dalek does (non-canonical y accepted), clear
 * the cofactor (H = 8·P) and refuse the identity. ok[i] is 1 and points[i] holds the
 * canonical encodings of H's extended coordinates X, Y, Z, T, or ok[i] is 0.
 */
void x8_decode(uint8_t points[8][4][32], int ok[8], const uint8_t candidates[8][32]);

/*
 * For i = 0..7: out[i] = encode(a·P_i) (RFC 8032 5.1.2), where P_i is given by the canonical
 * encodings of its extended coordinates X, Y, Z, T (points[i][0..3]) and `digits` are the
 * signed radix-16 digits of a (ge_scalar_digits). Constant time in the digits.
 */
void x8_multiply(uint8_t out[8][32], const uint8_t points[8][4][32], const int8_t digits[64]);

/*
 * As x8_multiply, with each lane's own scalar: out[i] = encode(a_i·P_i) for the digits of a_i
 * in digits[i] (a proof's nonce k differs per label). Constant time in every lane's digits.
 */
void x8_multiply_lanes(uint8_t out[8][32], const uint8_t points[8][4][32],
                       const int8_t digits[8][64]);

/* out[i] = encode(a_i·B) for B the base point (RFC 8032), from a table of its multiples. */
void x8_multiply_base(uint8_t out[8][32], const int8_t digits[8][64]);

/* out[i] = encode(P_i) (RFC 8032 5.1.2), for points given as x8_multiply takes them. */
void x8_encode(uint8_t out[8][32], const uint8_t points[8][4][32]);

/*
 * A proof's first two encodings with one inversion: out_p[i] = encode(P_i) as x8_encode and
 * out_a[i] = encode(a·P_i) as x8_multiply (the same digits in every lane).
 */
void x8_encode_and_multiply(uint8_t out_p[8][32], uint8_t out_a[8][32],
                            const uint8_t points[8][4][32], const int8_t digits[64]);

/*
 * An evaluation that keeps Gamma for a proof, with one inversion: out_a[i] = encode(a·P_i) as
 * x8_multiply and out_8a[i] = encode(8·a·P_i) (Gamma and the 8·Gamma that proof_to_hash hashes).
 */
void x8_multiply_and_times8(uint8_t out_a[8][32], uint8_t out_8a[8][32],
                            const uint8_t points[8][4][32], const int8_t digits[64]);

/*
 * A proof's last two with one inversion: out_b[i] = encode(a_i·B) as x8_multiply_base and
 * out_p[i] = encode(a_i·P_i) as x8_multiply_lanes, for the digits of a_i in digits[i].
 */
void x8_multiply_base_and_lanes(uint8_t out_b[8][32], uint8_t out_p[8][32],
                                const uint8_t points[8][4][32], const int8_t digits[8][64]);

#endif
