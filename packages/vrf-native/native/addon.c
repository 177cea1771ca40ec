/*
 * Node-API entry points of the native ECVRF fast path. The try-and-increment loop, the hashing
 * and the key handling stay in TypeScript (src/); this file does only the curve arithmetic that
 * libsodium's public API cannot do without a redundant subgroup check and a decode/encode round
 * trip per operation.
 */
#include <node_api.h>
#include "ge25519.h"

static ge_constants CONSTANTS;

/*
 * One try-and-increment candidate (spec 5.3 loop body, after upstream's non-canonical filter,
 * which the caller applies): decode leniently, clear the cofactor (H = 8·P), refuse the
 * identity, then return the encoding of scalar·H. Returns 0, or -1 when the candidate is
 * refused.
 */
static int candidate_times_scalar(uint8_t out[32], const uint8_t candidate[32], const int8_t digits[64]) {
  ge_p3 p, result;
  if (ge_frombytes_lenient(&p, candidate, &CONSTANTS) != 0) return -1;
  ge_p3_dbl_to_p3(&p, &p);
  ge_p3_dbl_to_p3(&p, &p);
  ge_p3_dbl_to_p3(&p, &p);
  if (ge_p3_is_identity(&p)) return -1;
  ge_scalarmult(&result, digits, &p, &CONSTANTS);
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

/*
 * multiplyCandidates(candidates, scalar, out, accepted): for each 32-byte candidate i, writes
 * scalar·(8·decode(candidate)) to out[32i..] and 1 to accepted[i], or 0 to accepted[i] when the
 * candidate is not a point or has small order. scalar is 32 bytes little-endian, below 2^255.
 */
static napi_value multiply_candidates(napi_env env, napi_callback_info info) {
  size_t argc = 4;
  napi_value argv[4];
  uint8_t *candidates, *scalar, *out, *accepted;
  size_t n_candidates, n_scalar, n_out, n_accepted;
  int8_t digits[64];
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc != 4) {
    napi_throw_type_error(env, NULL, "multiplyCandidates takes 4 arguments");
    return NULL;
  }
  if (typed_bytes(env, argv[0], &candidates, &n_candidates) != 0 ||
      typed_bytes(env, argv[1], &scalar, &n_scalar) != 0 ||
      typed_bytes(env, argv[2], &out, &n_out) != 0 ||
      typed_bytes(env, argv[3], &accepted, &n_accepted) != 0) {
    return NULL;
  }
  if (n_scalar != 32 || (scalar[31] & 0x80) != 0) {
    napi_throw_range_error(env, NULL, "the scalar must be 32 bytes below 2^255");
    return NULL;
  }
  if (n_candidates % 32 != 0 || n_out != n_candidates || n_accepted * 32 != n_candidates) {
    napi_throw_range_error(env, NULL, "candidates and out must be 32 bytes per entry of accepted");
    return NULL;
  }
  ge_scalar_digits(digits, scalar);
  for (size_t i = 0; i < n_accepted; i++) {
    accepted[i] = candidate_times_scalar(out + 32 * i, candidates + 32 * i, digits) == 0;
  }
  /* the digits are the secret scalar */
  volatile int8_t *wipe = digits;
  for (int i = 0; i < 64; i++) wipe[i] = 0;
  return NULL;
}

static napi_value init(napi_env env, napi_value exports) {
  napi_value fn;
  ge_constants_init(&CONSTANTS);
  if (napi_create_function(env, "multiplyCandidates", NAPI_AUTO_LENGTH, multiply_candidates, NULL, &fn) != napi_ok ||
      napi_set_named_property(env, exports, "multiplyCandidates", fn) != napi_ok) {
    return NULL;
  }
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, init)
