/*
 * Node-API entry points of the native ECVRF: whole evaluations (the try-and-increment loop,
 * its hashes and proof_to_hash, for a batch of alphas in one call), whole proofs (prove.h),
 * the constant-time reduction of the secret scalar, and entry points to the curve steps
 * (one candidate, one multiplication, the eight lanes on crafted inputs) that the tests
 * compare with core's portable implementation. Expanding the seed (a SHA-512 and clamping,
 * no arithmetic on the secret) stays in TypeScript (src/).
 */
#include <node_api.h>
#include <stdlib.h>
#include "ge25519.h"
#include "h2c.h"
#include "prove.h"
#include "prove_x8.h"
#include "sha512.h"
#include "x8.h"

/* Whether evaluations and proofs run eight alphas at a time (set once, when the addon loads). */
static int use_x8 = 0;

/* The smallest batch evaluated eight lanes at a time (a short group pads the free lanes). */
#define X8_MIN_BATCH 3
/* The smallest batch proven eight lanes at a time: a group of eight costs about one and a
   half one-lane proofs (proveMany of 8 alphas against 1, CPU time on AVX-512F), so two proofs,
   and a lookup's three, are cheaper as a group with idle lanes */
#define X8_MIN_PROVE_BATCH 2

static const ge_constants *const CONSTANTS = &GE_CONSTANTS;

/* The encoding of scalar·H for a candidate, or -1 when it is refused. */
static int candidate_times_scalar(uint8_t out[32], const uint8_t candidate[32], const int8_t digits[64]) {
  ge_p3 p, result;
  if (decode_clear_cofactor(&p, candidate) != 0) return -1;
  ge_scalarmult(&result, digits, &p, CONSTANTS);
  ge_p3_tobytes(out, &result);
  return 0;
}

static int typed_bytes(napi_env env, napi_value value, uint8_t **data, size_t *length) {
  napi_typedarray_type type;
  napi_value buffer;
  size_t offset;
  void *raw;
  if (napi_get_typedarray_info(env, value, &type, length, &raw, &buffer, &offset) != napi_ok ||
      type != napi_uint8_array) {
    napi_throw_type_error(env, NULL, "expected a Uint8Array");
    return -1;
  }
  *data = (uint8_t *)raw;
  return 0;
}

/* Reads n Uint8Array arguments; throws and returns -1 on a wrong count or type. */
static int byte_args(napi_env env, napi_callback_info info, size_t n, uint8_t **data, size_t *length) {
  size_t argc = n;
  napi_value argv[4];
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc != n) {
    napi_throw_type_error(env, NULL, "wrong number of arguments");
    return -1;
  }
  for (size_t i = 0; i < n; i++) {
    if (typed_bytes(env, argv[i], &data[i], &length[i]) != 0) return -1;
  }
  return 0;
}

/* The digits are the secret scalar: clear them where the compiler cannot drop the stores. */
static void wipe_digits(int8_t digits[64]) {
  volatile int8_t *wipe = digits;
  for (int i = 0; i < 64; i++) wipe[i] = 0;
}

/*
 * multiplyCandidates(candidates, scalar, out, accepted): for each 32-byte candidate i, writes
 * scalar·(8·decode(candidate)) to out[32i..] and 1 to accepted[i], or 0 to accepted[i] when the
 * candidate is not a point or has small order. scalar is 32 bytes little-endian, below 2^255.
 */
static napi_value multiply_candidates(napi_env env, napi_callback_info info) {
  uint8_t *data[4]; /* candidates, scalar, out, accepted */
  size_t length[4];
  int8_t digits[64];
  if (byte_args(env, info, 4, data, length) != 0) return NULL;
  if (length[1] != 32 || (data[1][31] & 0x80) != 0) {
    napi_throw_range_error(env, NULL, "the scalar must be 32 bytes below 2^255");
    return NULL;
  }
  if (length[0] % 32 != 0 || length[2] != length[0] || length[3] * 32 != length[0]) {
    napi_throw_range_error(env, NULL, "candidates and out must be 32 bytes per entry of accepted");
    return NULL;
  }
  ge_scalar_digits(digits, data[1]);
  for (size_t i = 0; i < length[3]; i++) {
    data[3][i] = candidate_times_scalar(data[2] + 32 * i, data[0] + 32 * i, digits) == 0;
  }
  wipe_digits(digits);
  return NULL;
}


/* The same one alpha at a time, with the scalar code (processors without AVX-512F). */
static size_t evaluate_x1(uint8_t *out, const uint8_t pk[32], const uint8_t *alphas, size_t alpha_len,
                          size_t n, const int8_t digits[64]) {
  for (size_t i = 0; i < n; i++) {
    ge_p3 h, result;
    uint8_t gamma8[32];
    if (encode_to_curve(&h, pk, alphas + alpha_len * i, (uint32_t)alpha_len) < 0) return i;
    ge_scalarmult(&result, digits, &h, CONSTANTS);
    ge_p3_tobytes(gamma8, &result);
    vrf_proof_to_hash(out + 64 * i, gamma8);
  }
  return n;
}

/*
 * The outputs of n alphas of alpha_len bytes, eight lanes at a time (prove_x8.h's hash to
 * curve, then the points multiplied eight at a time), for the digits of 8x mod L; or, with
 * `kept`, for the digits of x, keeping for each alpha what a proof of it needs
 * (VRF_KEPT_BYTES, prove.h): Gamma = x H is multiplied, then doubled three times for the
 * output (8 Gamma = (8x mod L) H), both encoded with one inversion. `points` and `pending`
 * have room for n. Returns n, or the first alpha without a point.
 */
static size_t evaluate_x8(uint8_t *out, uint8_t *kept, const uint8_t pk[32], const uint8_t *alphas,
                          size_t alpha_len, size_t n, const int8_t digits[64],
                          uint8_t (*points)[4][32], size_t *pending) {
  uint8_t gamma[8][32], gamma8[8][32], group[8][4][32];
  const size_t found = encode_to_curve_x8(pk, alphas, alpha_len, n, points, pending);
  if (found != n) return found;
  for (size_t first = 0; first < n; first += 8) {
    const size_t m = n - first < 8 ? n - first : 8;
    fill_lanes(group, (const uint8_t(*)[4][32])(points + first), m);
    if (kept == NULL) x8_multiply(gamma8, (const uint8_t(*)[4][32])group, digits);
    else x8_multiply_and_times8(gamma, gamma8, (const uint8_t(*)[4][32])group, digits);
    for (size_t k = 0; k < m; k++) {
      const size_t i = first + k;
      vrf_proof_to_hash(out + 64 * i, gamma8[k]);
      if (kept == NULL) continue;
      memcpy(kept + VRF_KEPT_BYTES * i, points[i], sizeof points[i]);
      memcpy(kept + VRF_KEPT_BYTES * i + 128, gamma[k], 32);
    }
  }
  return n;
}

/* The same one alpha at a time, with the scalar code (processors without AVX-512F). */
static size_t evaluate_x1_kept(uint8_t *out, uint8_t *kept, const uint8_t pk[32],
                               const uint8_t *alphas, size_t alpha_len, size_t n,
                               const uint8_t x[32]) {
  for (size_t i = 0; i < n; i++) {
    if (vrf_evaluate_kept(out + 64 * i, kept + VRF_KEPT_BYTES * i, x, pk, alphas + alpha_len * i,
                          (uint32_t)alpha_len) != 0) {
      return i;
    }
  }
  return n;
}

/*
 * The eight-lane paths' scratch for n alphas: each one's point and the try-and-increment's
 * pending list. Returns 0, or -1 after throwing (out of memory) with nothing left allocated.
 */
static int x8_scratch(napi_env env, size_t n, uint8_t (**points)[4][32], size_t **pending) {
  *points = malloc(n * sizeof **points);
  *pending = malloc(n * sizeof **pending);
  if (*points != NULL && *pending != NULL) return 0;
  free(*points);
  free(*pending);
  napi_throw_error(env, NULL, "out of memory");
  return -1;
}

/*
 * How many of n alphas were evaluated into out, into *evaluated: with kept, for scalar = x
 * mod L, keeping what their proofs need; without, for scalar = 8x mod L. Eight lanes at a
 * time from X8_MIN_BATCH alphas where the processor can. Returns 0, or -1 after throwing.
 */
static int evaluate_batch(napi_env env, size_t *evaluated, uint8_t *out, uint8_t *kept,
                          const uint8_t pk[32], const uint8_t scalar[32], const uint8_t *alphas,
                          size_t alpha_len, size_t n) {
  int8_t digits[64];
  ge_scalar_digits(digits, scalar);
  /* eight lanes cost about as much as three labels one at a time: fewer go one at a time */
  if (use_x8 && n >= X8_MIN_BATCH) {
    uint8_t(*points)[4][32];
    size_t *pending;
    if (x8_scratch(env, n, &points, &pending) != 0) {
      wipe_digits(digits);
      return -1;
    }
    *evaluated = evaluate_x8(out, kept, pk, alphas, alpha_len, n, digits, points, pending);
    free(points);
    free(pending);
  } else {
    *evaluated = kept == NULL ? evaluate_x1(out, pk, alphas, alpha_len, n, digits)
                              : evaluate_x1_kept(out, kept, pk, alphas, alpha_len, n, scalar);
  }
  wipe_digits(digits);
  return 0;
}

/*
 * evaluateKeeping(secret, publicKey, alphas, out, kept): as evaluate, for secret = x mod L ||
 * nonce key (64 bytes, as prove takes it), writing besides each alpha's output what a proof of
 * it needs to kept[160i..] (prove.h VRF_KEPT_BYTES): the same outputs, for about the same work,
 * and proveKept later proves these alphas for about half a proof's work each.
 */
static napi_value evaluate_keeping(napi_env env, napi_callback_info info) {
  size_t argc = 5;
  napi_value argv[5], result;
  uint8_t *data[5]; /* secret, publicKey, alphas, out, kept */
  size_t length[5], i, n, alpha_len;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc != 5) {
    napi_throw_type_error(env, NULL, "wrong number of arguments");
    return NULL;
  }
  for (size_t a = 0; a < 5; a++) {
    if (typed_bytes(env, argv[a], &data[a], &length[a]) != 0) return NULL;
  }
  if (length[0] != 64 || (data[0][31] & 0x80) != 0 || length[1] != 32) {
    napi_throw_range_error(env, NULL, "secret must be 64 bytes (x below 2^255, nonce key), the key 32");
    return NULL;
  }
  n = length[3] / 64;
  if (length[3] % 64 != 0 || length[4] != VRF_KEPT_BYTES * n ||
      (n == 0 ? length[2] != 0 : length[2] % n != 0) || (n != 0 && length[2] / n > 0xffffffffu)) {
    napi_throw_range_error(env, NULL,
                           "out must be 64 bytes and kept 160 per alpha, and the alphas of equal length");
    return NULL;
  }
  alpha_len = n == 0 ? 0 : length[2] / n;
  if (evaluate_batch(env, &i, data[3], data[4], data[1], data[0], data[2], alpha_len, n) != 0 ||
      napi_create_uint32(env, (uint32_t)i, &result) != napi_ok) {
    return NULL;
  }
  return result;
}

/*
 * proveKept(secret, publicKey, kept, out): the 80-byte proofs, into out[80i..], of the alphas
 * whose evaluations kept kept[160i..] (evaluateKeeping, under the same key), byte for byte as
 * proveMany gives them; secret as for prove. The kept bytes are trusted: they must come from
 * evaluateKeeping with this secret.
 */
static napi_value prove_kept(napi_env env, napi_callback_info info) {
  uint8_t *data[4]; /* secret, publicKey, kept, out */
  size_t length[4], n;
  if (byte_args(env, info, 4, data, length) != 0) return NULL;
  if (length[0] != 64 || (data[0][31] & 0x80) != 0 || length[1] != 32) {
    napi_throw_range_error(env, NULL, "secret must be 64 bytes (x below 2^255, nonce key), the key 32");
    return NULL;
  }
  n = length[3] / VRF_PROOF_BYTES;
  if (length[3] % VRF_PROOF_BYTES != 0 || length[2] != VRF_KEPT_BYTES * n) {
    napi_throw_range_error(env, NULL, "out must be 80 bytes and kept 160 per proof");
    return NULL;
  }
  if (use_x8 && n >= X8_MIN_PROVE_BATCH) {
    for (size_t first = 0; first < n; first += 8) {
      const size_t m = n - first < 8 ? n - first : 8;
      vrf_prove_x8_kept(data[3] + VRF_PROOF_BYTES * first, data[0], data[0] + 32, data[1],
                        data[2] + VRF_KEPT_BYTES * first, m);
    }
  } else {
    for (size_t i = 0; i < n; i++) {
      vrf_prove_kept(data[3] + VRF_PROOF_BYTES * i, data[0], data[0] + 32, data[1],
                     data[2] + VRF_KEPT_BYTES * i);
    }
  }
  return NULL;
}

/*
 * evaluate(publicKey, scalar, alphas, out): the 64-byte VRF outputs of n alphas of equal
 * length, concatenated in `alphas`, written to out[64i..] (n = out.length / 64). scalar is
 * 8x mod L, 32 bytes below 2^255. Returns how many alphas were evaluated: n, or the index of
 * the first alpha for which no counter gives a point.
 */
static napi_value evaluate(napi_env env, napi_callback_info info) {
  uint8_t *data[4]; /* publicKey, scalar, alphas, out */
  size_t length[4];
  napi_value result;
  size_t i, n, alpha_len;
  if (byte_args(env, info, 4, data, length) != 0) return NULL;
  if (length[0] != 32 || length[1] != 32 || (data[1][31] & 0x80) != 0) {
    napi_throw_range_error(env, NULL, "the key must be 32 bytes, the scalar 32 bytes below 2^255");
    return NULL;
  }
  n = length[3] / 64;
  if (length[3] % 64 != 0 || (n == 0 ? length[2] != 0 : length[2] % n != 0) ||
      (n != 0 && length[2] / n > 0xffffffffu)) {
    napi_throw_range_error(env, NULL, "out must be 64 bytes per alpha, and the alphas of equal length");
    return NULL;
  }
  alpha_len = n == 0 ? 0 : length[2] / n;
  if (evaluate_batch(env, &i, data[3], NULL, data[0], data[1], data[2], alpha_len, n) != 0 ||
      napi_create_uint32(env, (uint32_t)i, &result) != napi_ok) {
    return NULL;
  }
  return result;
}

/*
 * eightLanes(enabled): evaluations and proofs run eight alphas at a time when `enabled` is true
 * and the processor can; returns whether they now do (tests run both paths).
 */
static napi_value eight_lanes(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1], result;
  bool enabled;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc != 1 ||
      napi_get_value_bool(env, argv[0], &enabled) != napi_ok) {
    napi_throw_type_error(env, NULL, "expected a boolean");
    return NULL;
  }
  use_x8 = enabled && x8_available();
  if (napi_get_boolean(env, use_x8, &result) != napi_ok) return NULL;
  return result;
}

/*
 * reduceSecret(clamped, x, x8): x = s mod L and x8 = 8 s mod L for the clamped 32-byte secret
 * scalar s (spec 5.2), constant time (prove.h), so no secret goes through JavaScript's
 * variable-time BigInt arithmetic.
 */
static napi_value reduce_secret(napi_env env, napi_callback_info info) {
  uint8_t *data[3];
  size_t length[3];
  if (byte_args(env, info, 3, data, length) != 0) return NULL;
  if (length[0] != 32 || length[1] != 32 || length[2] != 32) {
    napi_throw_range_error(env, NULL, "clamped, x and x8 must be 32 bytes each");
    return NULL;
  }
  vrf_reduce_secret(data[1], data[2], data[0]);
  return NULL;
}

/*
 * prove(secret, publicKey, alpha, out): the 80-byte proof (spec 5.3) into out, for
 * secret = x mod L || nonce key (64 bytes). Throws an Error when no counter gives a point.
 */
static napi_value prove(napi_env env, napi_callback_info info) {
  uint8_t *data[4]; /* secret, publicKey, alpha, out */
  size_t length[4];
  if (byte_args(env, info, 4, data, length) != 0) return NULL;
  if (length[0] != 64 || (data[0][31] & 0x80) != 0 || length[1] != 32 ||
      length[3] != VRF_PROOF_BYTES || length[2] > 0xffffffffu) {
    napi_throw_range_error(env, NULL,
                           "secret must be 64 bytes (x below 2^255, nonce key), the key 32, out 80");
    return NULL;
  }
  if (vrf_prove(data[3], data[0], data[0] + 32, data[1], data[2], (uint32_t)length[2]) != 0) {
    napi_throw_error(env, NULL, "encode_to_curve found no point in 256 tries");
  }
  return NULL;
}

/*
 * proveMany(secret, publicKey, alphas, out): the 80-byte proofs of n alphas of equal length,
 * concatenated in `alphas`, into out[80i..] (n = out.length / 80), eight lanes at a time where
 * the processor can (prove_x8.h), else one at a time (prove.h); secret as for prove. Returns
 * how many alphas were proven: n, or the index of the first for which no counter gives a point.
 */
static napi_value prove_many(napi_env env, napi_callback_info info) {
  uint8_t *data[4]; /* secret, publicKey, alphas, out */
  size_t length[4], i, n, alpha_len;
  napi_value result;
  if (byte_args(env, info, 4, data, length) != 0) return NULL;
  if (length[0] != 64 || (data[0][31] & 0x80) != 0 || length[1] != 32) {
    napi_throw_range_error(env, NULL, "secret must be 64 bytes (x below 2^255, nonce key), the key 32");
    return NULL;
  }
  n = length[3] / VRF_PROOF_BYTES;
  if (length[3] % VRF_PROOF_BYTES != 0 || (n == 0 ? length[2] != 0 : length[2] % n != 0) ||
      (n != 0 && length[2] / n > 0xffffffffu)) {
    napi_throw_range_error(env, NULL, "out must be 80 bytes per alpha, and the alphas of equal length");
    return NULL;
  }
  alpha_len = n == 0 ? 0 : length[2] / n;
  if (use_x8 && n >= X8_MIN_PROVE_BATCH) {
    uint8_t(*points)[4][32];
    size_t *pending;
    if (x8_scratch(env, n, &points, &pending) != 0) return NULL;
    i = encode_to_curve_x8(data[1], data[2], alpha_len, n, points, pending);
    if (i == n) {
      for (size_t first = 0; first < n; first += 8) {
        const size_t m = n - first < 8 ? n - first : 8;
        vrf_prove_x8(data[3] + VRF_PROOF_BYTES * first, data[0], data[0] + 32, data[1],
                     (const uint8_t(*)[4][32])(points + first), m);
      }
    }
    free(points);
    free(pending);
  } else {
    for (i = 0; i < n; i++) {
      if (vrf_prove(data[3] + VRF_PROOF_BYTES * i, data[0], data[0] + 32, data[1],
                    data[2] + alpha_len * i, (uint32_t)alpha_len) != 0) {
        break;
      }
    }
  }
  if (napi_create_uint32(env, (uint32_t)i, &result) != napi_ok) return NULL;
  return result;
}

/*
 * eightLaneCandidates(candidates, scalar, out, accepted): the eight-lane steps (x8.h) on eight
 * given 32-byte candidates, one per lane, so tests can reach every lane with crafted inputs:
 * accepted[i] = whether lane i decoded to a point of large order, and out[32i..] = scalar·H_i
 * for those (zeros for the others). Returns false, doing nothing, where the processor or the
 * build has no eight-lane code.
 */
static napi_value eight_lane_candidates(napi_env env, napi_callback_info info) {
  uint8_t *data[4];
  size_t length[4];
  int8_t digits[64];
  uint8_t decoded[8][4][32], products[8][32];
  int ok[8];
  napi_value result;
  if (byte_args(env, info, 4, data, length) != 0) return NULL;
  if (length[0] != 256 || length[1] != 32 || (data[1][31] & 0x80) != 0 || length[2] != 256 ||
      length[3] != 8) {
    napi_throw_range_error(env, NULL,
                           "eight 32-byte candidates, a scalar below 2^255, 256 bytes out, 8 accepted");
    return NULL;
  }
  const int available = x8_available();
  if (available) {
    x8_decode(decoded, ok, (const uint8_t(*)[32])data[0]);
    /* refused lanes multiply lane 0's point (or B's coordinates, if none decoded): their
       products are dropped, and every lane runs the same operations anyway */
    int first = -1;
    for (int i = 0; i < 8; i++) if (ok[i] && first < 0) first = i;
    for (int i = 0; i < 8; i++) {
      if (ok[i]) continue;
      if (first >= 0) memcpy(decoded[i], decoded[first], sizeof decoded[i]);
      else {
        ge_p3 b;
        ge_base(&b);
        fe_tobytes(decoded[i][0], b.X);
        fe_tobytes(decoded[i][1], b.Y);
        fe_tobytes(decoded[i][2], b.Z);
        fe_tobytes(decoded[i][3], b.T);
      }
    }
    ge_scalar_digits(digits, data[1]);
    x8_multiply(products, (const uint8_t(*)[4][32])decoded, digits);
    wipe_digits(digits);
    for (int i = 0; i < 8; i++) {
      data[3][i] = (uint8_t)(ok[i] != 0);
      if (ok[i]) memcpy(data[2] + 32 * i, products[i], 32);
      else memset(data[2] + 32 * i, 0, 32);
    }
  }
  if (napi_get_boolean(env, available, &result) != napi_ok) return NULL;
  return result;
}

static int export_function(napi_env env, napi_value exports, const char *name, napi_callback cb) {
  napi_value fn;
  return napi_create_function(env, name, NAPI_AUTO_LENGTH, cb, NULL, &fn) == napi_ok &&
                 napi_set_named_property(env, exports, name, fn) == napi_ok
             ? 0
             : -1;
}

static napi_value init(napi_env env, napi_value exports) {
  use_x8 = x8_available();
  if (export_function(env, exports, "evaluate", evaluate) != 0 ||
      export_function(env, exports, "eightLanes", eight_lanes) != 0 ||
      export_function(env, exports, "multiplyCandidates", multiply_candidates) != 0 ||
      export_function(env, exports, "reduceSecret", reduce_secret) != 0 ||
      export_function(env, exports, "prove", prove) != 0 ||
      export_function(env, exports, "proveMany", prove_many) != 0 ||
      export_function(env, exports, "eightLaneCandidates", eight_lane_candidates) != 0 ||
      export_function(env, exports, "evaluateKeeping", evaluate_keeping) != 0 ||
      export_function(env, exports, "proveKept", prove_kept) != 0) {
    return NULL;
  }
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, init)
