/*
 * Constant-time check of the secret paths, ctgrind style: the secret inputs are marked
 * undefined for valgrind's memcheck, which then reports every branch ("conditional jump
 * depends on uninitialised value") and every memory index ("use of uninitialised value") that
 * depends on them. Built natively twice from the project's C (packages/vrf-native/native/):
 *   -DAKD_FIELD_LIMBS=5   the addon's proving and key paths (prove.h: vrf_reduce_secret,
 *                         vrf_prove; evaluation multiplies through the same vrf_multiply),
 *                         and the evaluation that keeps points with the proof from them
 *                         (vrf_evaluate_kept, vrf_prove_kept);
 *   -DAKD_FIELD_LIMBS=10  core's WebAssembly module's C (wasm.c) built for this host: the
 *                         exports its prover and key expansion call, in the prover's order.
 * The eight-lane path (x8.c) is not covered: valgrind does not run AVX-512.
 *
 *   ct-check CLAMPED NONCE_KEY PUBLIC_KEY ALPHA   (hex) prints x, 8x mod L and the proof
 *   ct-check --leak                               a deliberate secret branch, which memcheck
 *                                                 must report (the check's own test)
 * Outputs are marked defined again only to print them. scripts/ct-check.mjs runs both builds.
 */
#include <stdio.h>
#include <string.h>
#include <valgrind/memcheck.h>

#if AKD_FIELD_LIMBS == 5
#include "prove.h"
#else
#define EXPORT(name)
#include "wasm.c"
#endif

#define SECRET(p, n) VALGRIND_MAKE_MEM_UNDEFINED((p), (n))
#define PUBLIC(p, n) VALGRIND_MAKE_MEM_DEFINED((p), (n))

static int unhex(uint8_t *out, const char *hex, size_t max) {
  size_t n = strlen(hex);
  if (n % 2 != 0 || n / 2 > max) return -1;
  for (size_t i = 0; i < n / 2; i++) {
    unsigned v;
    if (sscanf(hex + 2 * i, "%2x", &v) != 1) return -1;
    out[i] = (uint8_t)v;
  }
  return (int)(n / 2);
}

static void print_hex(const char *name, const uint8_t *p, size_t n) {
  printf("%s ", name);
  for (size_t i = 0; i < n; i++) printf("%02x", p[i]);
  printf("\n");
}

#if AKD_FIELD_LIMBS == 5
static int run(uint8_t x[32], uint8_t x8[32], uint8_t proof[80], const uint8_t clamped[32],
               const uint8_t nonce_key[32], const uint8_t pk[32], const uint8_t *alpha,
               uint32_t alpha_len) {
  vrf_reduce_secret(x, x8, clamped);
  return vrf_prove(proof, x, nonce_key, pk, alpha, alpha_len);
}

/* The evaluation that keeps its points, and the proof from them (the addon's one-lane path). */
static int run_kept(uint8_t output[64], uint8_t proof[80], const uint8_t x[32],
                    const uint8_t nonce_key[32], const uint8_t pk[32], const uint8_t *alpha,
                    uint32_t alpha_len) {
  uint8_t kept[VRF_KEPT_BYTES];
  if (vrf_evaluate_kept(output, kept, x, pk, alpha, alpha_len) != 0) return -1;
  vrf_prove_kept(proof, x, nonce_key, pk, kept);
  return 0;
}
#else
/* core's prover on the module (ecvrf.ts proveOnWasm, keys.ts fromBytes), step for step. */
static int run(uint8_t x[32], uint8_t x8[32], uint8_t proof[80], const uint8_t clamped[32],
               const uint8_t nonce_key[32], const uint8_t pk[32], const uint8_t *alpha,
               uint32_t alpha_len) {
  static const uint8_t eight[32] = {8};
  uint8_t *io = akd_io(), h[32], k[32], gamma[32], u[32], v[32], digest[64];
  sha512_state s;
  /* key: x = clamped mod L, 8x mod L = 8 x + 0 */
  memset(io, 0, 64);
  memcpy(io, clamped, 32);
  akd_sc_reduce64();
  memcpy(x, io, 32);
  memcpy(io, eight, 32);
  memcpy(io + 32, x, 32);
  memset(io + 64, 0, 32);
  akd_sc_muladd();
  memcpy(x8, io, 32);
  /* prove */
  memcpy(io, pk, 32);
  memcpy(io + ALPHA_AT, alpha, alpha_len);
  if (akd_encode_to_curve(alpha_len) < 0) return -1;
  akd_h_bytes();
  memcpy(h, io, 32);
  sha512_init(&s);
  sha512_update(&s, nonce_key, 32);
  sha512_update(&s, h, 32);
  sha512_final(&s, digest);
  memcpy(io, digest, 64);
  akd_sc_reduce64();
  memcpy(k, io, 32);
  memcpy(io, x, 32);
  akd_mul_h();
  memcpy(gamma, io + 32, 32);
  memcpy(io, k, 32);
  akd_mul_h();
  memcpy(v, io + 32, 32);
  memcpy(io, k, 32);
  akd_mul_base();
  memcpy(u, io + 32, 32);
  {
    static const uint8_t front[2] = {0x03, 0x02}, back = 0x00;
    sha512_init(&s);
    sha512_update(&s, front, 2);
    sha512_update(&s, pk, 32);
    sha512_update(&s, h, 32);
    sha512_update(&s, gamma, 32);
    sha512_update(&s, u, 32);
    sha512_update(&s, v, 32);
    sha512_update(&s, &back, 1);
    sha512_final(&s, digest);
  }
  memset(io, 0, 96);
  memcpy(io, digest, 16);
  memcpy(io + 32, x, 32);
  memcpy(io + 64, k, 32);
  akd_sc_muladd();
  memcpy(proof, gamma, 32);
  memcpy(proof + 32, digest, 16);
  memcpy(proof + 48, io, 32);
  akd_wipe();
  return 0;
}
#endif

int main(int argc, char **argv) {
  uint8_t clamped[32], nonce_key[32], pk[32], alpha[512], x[32], x8[32], proof[80];
  if (argc == 2 && strcmp(argv[1], "--leak") == 0) {
    volatile uint8_t secret = 1;
    SECRET((void *)&secret, 1);
    if (secret & 1) printf("leak\n"); /* memcheck must report this branch */
    return 0;
  }
  int alpha_len;
  if (argc != 5 || unhex(clamped, argv[1], 32) != 32 || unhex(nonce_key, argv[2], 32) != 32 ||
      unhex(pk, argv[3], 32) != 32 || (alpha_len = unhex(alpha, argv[4], sizeof alpha)) < 0) {
    fprintf(stderr, "usage: ct-check CLAMPED NONCE_KEY PUBLIC_KEY ALPHA (hex) | --leak\n");
    return 2;
  }
  SECRET(clamped, 32);
  SECRET(nonce_key, 32);
  if (run(x, x8, proof, clamped, nonce_key, pk, alpha, (uint32_t)alpha_len) != 0) {
    fprintf(stderr, "no point in 256 tries\n");
    return 1;
  }
#if AKD_FIELD_LIMBS == 5
  uint8_t output[64], kept_proof[80];
  if (run_kept(output, kept_proof, x, nonce_key, pk, alpha, (uint32_t)alpha_len) != 0) return 1;
#endif
  PUBLIC(x, 32);
  PUBLIC(x8, 32);
  PUBLIC(proof, 80);
  print_hex("x", x, 32);
  print_hex("x8", x8, 32);
  print_hex("proof", proof, 80);
#if AKD_FIELD_LIMBS == 5
  PUBLIC(output, 64);
  PUBLIC(kept_proof, 80);
  print_hex("output", output, 64);
  print_hex("kept-proof", kept_proof, 80);
#endif
  return 0;
}
