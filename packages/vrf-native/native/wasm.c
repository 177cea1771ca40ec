/*
 * The curve arithmetic of ECVRF-EDWARDS25519-SHA512-TAI (spec 5.3) as a WebAssembly module
 * without libc: core's verifier and prover call it through src/vrf/wasm/; a whole
 * verification runs here, SHA-512 and the try-and-increment loop included (akd_vrf_verify),
 * and so does the configurations' BLAKE3 (akd_blake3, blake3.h) once the module is loaded.
 * The point formulas (ge25519.h), the hash to curve (h2c.h) and the SHA-512 (sha512.h) are
 * the addon's, here on the ten-limb field (fe25519_10.h, chosen by AKD_FIELD_LIMBS=10, which
 * scripts/build-wasm.mjs sets).
 *
 * Calls exchange bytes through one static buffer (`akd_io`): the caller writes the inputs at
 * the offsets each function names and reads the outputs back. Nothing is allocated, so the
 * memory never grows and a view of it stays valid.
 *
 * What is constant time: the field arithmetic, ge_scalarmult (vrf-native's signed 4-bit
 * windows with masked table selection) and the scalar code (scalar.h), which serve proving,
 * evaluation and key derivation, where a scalar is secret. What is not: everything of
 * verification (decoding, the per-key and base-point tables, the w-NAF multi-scalar
 * multiplication, the early returns), which handles only public data: a proof, its input and
 * a public key.
 */
#include "ge25519.h"
#include "h2c.h"
#include "scalar.h"
#include "sha512.h"
#include "blake3.h"

#ifndef EXPORT
#define EXPORT(name) __attribute__((export_name(name)))
#endif

static const ge_constants *const C = &GE_CONSTANTS;

/* The exchange buffer (see the offsets of each function). */
#define IO_BYTES 1024
#define ALPHA_AT 256
#define ALPHA_MAX (IO_BYTES - ALPHA_AT)
static uint8_t io[IO_BYTES];

EXPORT("akd_io") uint8_t *akd_io(void) { return io; }

/* The hash buffer: akd_blake3 reads its input from hash_io[32..] and writes the digest to
 * hash_io[0..32]. */
#define HASH_IO_BYTES (32 + 4096)
static uint8_t hash_io[HASH_IO_BYTES];

EXPORT("akd_hash_io") uint8_t *akd_hash_io(void) { return hash_io; }

/* akd_blake3(len): hash_io[0..32] = BLAKE3-256(hash_io[32..32 + len]); -1 when len is too long. */
EXPORT("akd_blake3") int akd_blake3(uint32_t len) {
  if (len > HASH_IO_BYTES - 32) return -1;
  blake3_hash(hash_io, hash_io + 32, len);
  return 0;
}

/* ---------------------------------------------------------------- shared steps */

/* r = p - q (the subtraction twin of ge_add: -q swaps Y+X and Y-X and negates 2dT). */
static void ge_sub(ge_p1p1 *r, const ge_p3 *p, const ge_cached *q) {
  fe t0;
  fe_add(r->X, p->Y, p->X);
  fe_sub(r->Y, p->Y, p->X);
  fe_mul(r->Z, r->X, q->YminusX);
  fe_mul(r->Y, r->Y, q->YplusX);
  fe_mul(r->T, q->T2d, p->T);
  fe_mul(r->X, p->Z, q->Z);
  fe_add(t0, r->X, r->X);
  fe_sub(r->X, r->Z, r->Y);
  fe_add(r->Y, r->Z, r->Y);
  fe_sub(r->Z, t0, r->T);
  fe_add(r->T, t0, r->T);
}

/* Encodings of n points with one inversion (Montgomery's trick). n <= 8; public points. */
static void ge_p3_tobytes_batch(uint8_t *out, const ge_p3 *const *points, int n) {
  fe prefix[8], inv, x, y, zinv;
  fe_copy(prefix[0], points[0]->Z);
  for (int i = 1; i < n; i++) fe_mul(prefix[i], prefix[i - 1], points[i]->Z);
  fe_invert(inv, prefix[n - 1]);
  for (int i = n - 1; i >= 0; i--) {
    if (i > 0) {
      fe_mul(zinv, inv, prefix[i - 1]);
      fe_mul(inv, inv, points[i]->Z);
    } else {
      fe_copy(zinv, inv);
    }
    fe_mul(x, points[i]->X, zinv);
    fe_mul(y, points[i]->Y, zinv);
    fe_tobytes(out + 32 * i, y);
    out[32 * i + 31] ^= (uint8_t)(fe_isnegative(x) << 7);
  }
}

/* ---------------------------------------------------------------- verification (public data) */

/*
 * Fixed-point tables: entry 8w + j is (j + 1) 256^w P. A scalar's signed radix-16 digits e_i
 * (ge_scalar_digits) then cost one addition per nonzero digit and four doublings in all:
 * sum e_i 16^i P = 16 (sum over odd i of e_i 256^((i-1)/2) P) + sum over even i of
 * e_i 256^(i/2) P (the layout of ref10's base-point table, half the entries of one window per
 * digit).
 */
#define BASE_WINDOWS 32 /* s < L < 2^253: 64 digits */
#define KEY_WINDOWS 17  /* c < 2^128: 32 digits and a carry */
#define KEY_SLOTS 4

static ge_cached base_table[BASE_WINDOWS * 8];
static int base_table_ready;

typedef struct {
  uint8_t bytes[32];
  int used;
  ge_cached table[KEY_WINDOWS * 8];
} key_slot;

static key_slot key_slots[KEY_SLOTS];
static unsigned next_slot;

static void fixed_table(ge_cached *table, const ge_p3 *point, int windows) {
  ge_p3 base = *point, acc;
  ge_p1p1 t;
  for (int w = 0; w < windows; w++) {
    ge_p3_to_cached(&table[8 * w], &base, C);
    acc = base;
    for (int j = 1; j < 8; j++) {
      ge_add(&t, &base, &table[8 * w + j - 1]);
      ge_p1p1_to_p3(&acc, &t);
      ge_p3_to_cached(&table[8 * w + j], &acc, C);
    }
    /* 256 base = 2^5 (8 base) */
    for (int k = 0; k < 5; k++) ge_p3_dbl_to_p3(&acc, &acc);
    base = acc;
  }
}

/* r +-= the digits of parity `odd` (0 or 1) through the table: one addition per nonzero digit. */
static void fixed_accumulate(ge_p3 *r, const ge_cached *table, const int8_t *digits, int n,
                             int odd, int negate) {
  ge_p1p1 t;
  for (int i = odd; i < n; i += 2) {
    int d = digits[i];
    if (d == 0) continue;
    if (negate) d = -d;
    const ge_cached *row = &table[8 * (i >> 1)];
    if (d > 0) ge_add(&t, r, &row[d - 1]);
    else ge_sub(&t, r, &row[-d - 1]);
    ge_p1p1_to_p3(r, &t);
  }
}

/* Builds the base point's table on first use (it depends on nothing secret). */
static void base_table_init(void) {
  if (base_table_ready) return;
  ge_p3 b;
  ge_base(&b);
  fixed_table(base_table, &b, BASE_WINDOWS);
  base_table_ready = 1;
}

/*
 * r = a B for the signed radix-16 digits of a secret a, from the base point's table: per digit
 * one constant-time selection (ge_select reads all eight entries of the digit's row and
 * negates by a mask) and one complete addition, then four doublings, the same sequence for
 * every a (ref10's fixed-base method). Four times fewer doublings than ge_scalarmult.
 */
static void ge_scalarmult_base_ct(ge_p3 *r, const int8_t digits[64]) {
  ge_p1p1 t;
  ge_cached selected;
  base_table_init();
  ge_p3_0(r);
  for (int i = 1; i < 64; i += 2) {
    ge_select(&selected, &base_table[8 * (i >> 1)], digits[i]);
    ge_add(&t, r, &selected);
    ge_p1p1_to_p3(r, &t);
  }
  for (int k = 0; k < 4; k++) ge_p3_dbl_to_p3(r, r);
  for (int i = 0; i < 64; i += 2) {
    ge_select(&selected, &base_table[8 * (i >> 1)], digits[i]);
    ge_add(&t, r, &selected);
    ge_p1p1_to_p3(r, &t);
  }
}

/*
 * The table of a public key, from the slot that holds it or built into the oldest slot; NULL
 * when the key does not decode (callers check keys first with akd_key_check).
 */
static const ge_cached *key_table(const uint8_t pk[32]) {
  for (int i = 0; i < KEY_SLOTS; i++) {
    if (!key_slots[i].used) continue;
    int same = 1;
    for (int j = 0; j < 32; j++) same &= key_slots[i].bytes[j] == pk[j];
    if (same) return key_slots[i].table;
  }
  ge_p3 point;
  if (ge_frombytes_lenient(&point, pk, C) != 0) return 0;
  key_slot *slot = &key_slots[next_slot++ % KEY_SLOTS];
  for (int j = 0; j < 32; j++) slot->bytes[j] = pk[j];
  fixed_table(slot->table, &point, KEY_WINDOWS);
  slot->used = 1;
  return slot->table;
}

/* Width-5 non-adjacent form of a 256-bit scalar: odd digits in [-15, 15], mostly zeros. */
static void wnaf5(int8_t r[257], const uint8_t s[32]) {
  for (int i = 0; i < 256; i++) r[i] = (int8_t)((s[i >> 3] >> (i & 7)) & 1);
  r[256] = 0;
  for (int i = 0; i < 256; i++) {
    if (r[i] == 0) continue;
    for (int b = 1; b <= 4 && i + b < 256; b++) {
      if (r[i + b] == 0) continue;
      if (r[i] + (r[i + b] << b) <= 15) {
        r[i] = (int8_t)(r[i] + (r[i + b] << b));
        r[i + b] = 0;
      } else if (r[i] - (r[i + b] << b) >= -15) {
        r[i] = (int8_t)(r[i] - (r[i + b] << b));
        for (int k = i + b; k < 257; k++) {
          if (r[k] == 0) {
            r[k] = 1;
            break;
          }
          r[k] = 0;
        }
      } else {
        break;
      }
    }
  }
}

/* Odd multiples P, 3P, ..., 15P for the w-NAF digits. */
static void odd_multiples(ge_cached table[8], const ge_p3 *p) {
  ge_p3 p2, acc;
  ge_p1p1 t;
  ge_p3_dbl_to_p3(&p2, p);
  ge_p3_to_cached(&table[0], p, C);
  acc = *p;
  for (int i = 1; i < 8; i++) {
    ge_add(&t, &p2, &table[i - 1]);
    ge_p1p1_to_p3(&acc, &t);
    ge_p3_to_cached(&table[i], &acc, C);
  }
}

/* r = a A + b B (Straus: one doubling chain for both, w-NAF digits). */
static void double_scalarmult_vartime(ge_p3 *r, const int8_t a[257], const ge_cached ta[8],
                                      const int8_t b[257], const ge_cached tb[8]) {
  ge_p1p1 t;
  ge_p2 q;
  ge_p3 u;
  int i = 256;
  while (i >= 0 && a[i] == 0 && b[i] == 0) i--;
  ge_p3_0(r);
  if (i < 0) return; /* both scalars zero */
  ge_p3_to_p2(&q, r);
  for (; i >= 0; i--) {
    ge_p2_dbl(&t, &q);
    if (a[i] != 0) {
      ge_p1p1_to_p3(&u, &t);
      if (a[i] > 0) ge_add(&t, &u, &ta[a[i] / 2]);
      else ge_sub(&t, &u, &ta[-a[i] / 2]);
    }
    if (b[i] != 0) {
      ge_p1p1_to_p3(&u, &t);
      if (b[i] > 0) ge_add(&t, &u, &tb[b[i] / 2]);
      else ge_sub(&t, &u, &tb[-b[i] / 2]);
    }
    ge_p1p1_to_p2(&q, &t);
  }
  ge_p1p1_to_p3(r, &t);
}

/* s mod L for a public 32-byte s (below 16 L, so at most 15 subtractions). */
static void sc_reduce32_vartime(uint8_t out[32], const uint8_t s[32]) {
  uint32_t r[8];
  for (int i = 0; i < 8; i++) r[i] = sc_load32(s + 4 * i);
  for (;;) {
    uint32_t t[8];
    uint64_t borrow = 0;
    for (int i = 0; i < 8; i++) {
      const uint64_t d = (uint64_t)r[i] - SC_L[i] - borrow;
      t[i] = (uint32_t)d;
      borrow = (d >> 32) & 1;
    }
    if (borrow) break;
    for (int i = 0; i < 8; i++) r[i] = t[i];
  }
  for (int i = 0; i < 8; i++) sc_store32(out + 4 * i, r[i]);
}

/* H of the last accepted candidate (akd_hash_to_curve), for akd_verify and the prover. */
static ge_p3 last_h;

/*
 * akd_hash_to_curve: io[0..32] a candidate (after upstream's non-canonical filter, which the
 * caller applies). Returns 1 and keeps H = 8 decode(candidate), or 0 when it is refused.
 */
EXPORT("akd_hash_to_curve") int akd_hash_to_curve(void) {
  return decode_clear_cofactor(&last_h, io) == 0;
}

/*
 * akd_key_check: io[0..32] a public key. 0: it decodes (dalek-leniently) and is not of small
 * order; 1: not a curve point; 2: a small-order point (spec 5.2).
 */
EXPORT("akd_key_check") int akd_key_check(void) {
  ge_p3 p, p8;
  if (ge_frombytes_lenient(&p, io, C) != 0) return 1;
  ge_p3_dbl_to_p3(&p8, &p);
  ge_p3_dbl_to_p3(&p8, &p8);
  ge_p3_dbl_to_p3(&p8, &p8);
  return ge_p3_is_identity(&p8) ? 2 : 0;
}

/*
 * compress(H), compress(Gamma), compress(U = s B - c Y), compress(V = s H - c Gamma) and
 * compress(8 Gamma) into out[0..160], for the kept H and a decoded Gamma. s is reduced mod L
 * first (spec 5.5); Y and Gamma are used exactly, torsion and all. Returns 0, or -2 when the key
 * does not decode.
 */
static int verify_points(uint8_t out[160], const uint8_t pk[32], const ge_p3 *gamma_in,
                         const uint8_t *c_bytes, const uint8_t *s_bytes) {
  ge_p3 gamma = *gamma_in, u, v, gamma8;
  uint8_t s[32], c[32];
  int8_t s_digits[64], c_digits[64], s_naf[257], c_naf[257];
  ge_cached h_odd[8], gamma_odd[8];

  sc_reduce32_vartime(s, s_bytes);
  for (int i = 0; i < 32; i++) c[i] = i < 16 ? c_bytes[i] : 0;

  /* U = s B - c Y from the two fixed-point tables */
  base_table_init();
  const ge_cached *ytable = key_table(pk);
  if (ytable == 0) return -2;
  ge_scalar_digits(s_digits, s);
  ge_scalar_digits(c_digits, c);
  ge_p3_0(&u);
  fixed_accumulate(&u, base_table, s_digits, 2 * BASE_WINDOWS, 1, 0);
  fixed_accumulate(&u, ytable, c_digits, 2 * KEY_WINDOWS - 1, 1, 1);
  for (int k = 0; k < 4; k++) ge_p3_dbl_to_p3(&u, &u);
  fixed_accumulate(&u, base_table, s_digits, 2 * BASE_WINDOWS, 0, 0);
  fixed_accumulate(&u, ytable, c_digits, 2 * KEY_WINDOWS - 1, 0, 1);

  /* V = s H + c (-Gamma): one doubling chain */
  wnaf5(s_naf, s);
  wnaf5(c_naf, c);
  odd_multiples(h_odd, &last_h);
  odd_multiples(gamma_odd, &gamma);
  for (int i = 0; i < 257; i++) c_naf[i] = (int8_t)-c_naf[i];
  double_scalarmult_vartime(&v, s_naf, h_odd, c_naf, gamma_odd);

  ge_p3_dbl_to_p3(&gamma8, &gamma);
  ge_p3_dbl_to_p3(&gamma8, &gamma8);
  ge_p3_dbl_to_p3(&gamma8, &gamma8);

  const ge_p3 *points[5] = {&last_h, &gamma, &u, &v, &gamma8};
  ge_p3_tobytes_batch(out, points, 5);
  return 0;
}

/*
 * akd_verify (spec 5.3 verify, after akd_hash_to_curve gave H): io[0..32] the public key
 * (already checked), io[32..112] the proof Gamma || c || s. Writes compress(H), compress(Gamma),
 * compress(U), compress(V), compress(8 Gamma) to io[128..288]. Returns 0, -1 when Gamma does
 * not decode (the caller reports the proof invalid), or -2 when the key does not decode.
 */
EXPORT("akd_verify") int akd_verify(void) {
  ge_p3 gamma;
  if (ge_frombytes_lenient(&gamma, io + 32, C) != 0) return -1;
  return verify_points(io + 128, io, &gamma, io + 64, io + 80);
}

/*
 * akd_gamma8 (spec 5.3 proof_to_hash): io[0..32] Gamma. Writes compress(8 Gamma) to io[32..64];
 * returns 0, or -1 when Gamma does not decode.
 */
EXPORT("akd_gamma8") int akd_gamma8(void) {
  ge_p3 p;
  if (ge_frombytes_lenient(&p, io, C) != 0) return -1;
  ge_p3_dbl_to_p3(&p, &p);
  ge_p3_dbl_to_p3(&p, &p);
  ge_p3_dbl_to_p3(&p, &p);
  ge_p3_tobytes(io + 32, &p);
  return 0;
}

/* ---------------------------------------------------------------- whole steps, hashing included */

/*
 * akd_encode_to_curve(alpha_len): io[0..32] the public key, alpha at io[256..]. Returns the
 * counter and keeps H (for akd_mul_h, akd_h_bytes), or -1 when no counter gives a point.
 */
EXPORT("akd_encode_to_curve") int akd_encode_to_curve(uint32_t alpha_len) {
  if (alpha_len > ALPHA_MAX) return -2;
  return encode_to_curve(&last_h, io, io + ALPHA_AT, alpha_len);
}

/*
 * akd_vrf_verify(alpha_len) (spec 5.3 verify, leniencies of 5.5): io[0..32] the public key
 * (checked with akd_key_check), io[32..112] the proof, alpha at io[256..]. Decodes Gamma, then
 * encodes H, recomputes U, V and the challenge c', and hashes 8 Gamma. Writes compress(H),
 * compress(Gamma), compress(U), compress(V) to io[112..240], c' to io[240..256], the output
 * beta to io[256..320] (over alpha) and the counter to io[320]. Returns 1 when c' = c, 0 when
 * not, -1 when Gamma does not decode, -2 when the key does not, -3 when no counter gives a
 * point (the noble verifier's order of checks).
 */
EXPORT("akd_vrf_verify") int akd_vrf_verify(uint32_t alpha_len) {
  static const uint8_t challenge_front[2] = {0x03, 0x02}, output_front[2] = {0x03, 0x03};
  static const uint8_t back = 0x00;
  uint8_t pk[32], proof[80], points[160], digest[64];
  if (alpha_len > ALPHA_MAX) return -4;
  for (int i = 0; i < 32; i++) pk[i] = io[i];
  for (int i = 0; i < 80; i++) proof[i] = io[32 + i];
  ge_p3 gamma;
  if (ge_frombytes_lenient(&gamma, proof, C) != 0) return -1;
  const int counter = encode_to_curve(&last_h, pk, io + ALPHA_AT, alpha_len);
  if (counter < 0) return -3;
  const int status = verify_points(points, pk, &gamma, proof + 32, proof + 48);
  if (status != 0) return status;
  /* c' = SHA512(0x03 || 0x02 || Y || H || Gamma || U || V || 0x00)[0..16] */
  sha512_state s;
  sha512_init(&s);
  sha512_update(&s, challenge_front, 2);
  sha512_update(&s, pk, 32);
  sha512_update(&s, points, 128);
  sha512_update(&s, &back, 1);
  sha512_final(&s, digest);
  int same = 1;
  for (int i = 0; i < 16; i++) same &= digest[i] == proof[32 + i];
  for (int i = 0; i < 128; i++) io[112 + i] = points[i];
  for (int i = 0; i < 16; i++) io[240 + i] = digest[i];
  /* beta = SHA512(0x03 || 0x03 || compress(8 Gamma) || 0x00) */
  sha512_init(&s);
  sha512_update(&s, output_front, 2);
  sha512_update(&s, points + 128, 32);
  sha512_update(&s, &back, 1);
  sha512_final(&s, io + 256);
  io[320] = (uint8_t)counter;
  return same;
}

/* ---------------------------------------------------------------- proving (secret scalars) */

/* Clears secret digits where the compiler cannot drop the stores. */
static void wipe(void *p, int n) {
  volatile uint8_t *w = (volatile uint8_t *)p;
  for (int i = 0; i < n; i++) w[i] = 0;
}

/*
 * akd_mul_h: io[0..32] a scalar below 2^255 (secret). Writes compress(scalar H) to io[32..64]
 * for the H of the last accepted candidate; constant time in the scalar.
 */
EXPORT("akd_mul_h") void akd_mul_h(void) {
  int8_t digits[64];
  ge_p3 r;
  ge_scalar_digits(digits, io);
  ge_scalarmult(&r, digits, &last_h, C);
  wipe(digits, sizeof digits);
  ge_p3_tobytes(io + 32, &r);
}

/* akd_h_bytes: writes compress(H) of the last accepted candidate to io[0..32]. */
EXPORT("akd_h_bytes") void akd_h_bytes(void) { ge_p3_tobytes(io, &last_h); }

/*
 * akd_mul_base: io[0..32] a scalar below 2^255 (secret). Writes compress(scalar B) to
 * io[32..64]; constant time in the scalar.
 */
EXPORT("akd_mul_base") void akd_mul_base(void) {
  int8_t digits[64];
  ge_p3 r;
  ge_scalar_digits(digits, io);
  ge_scalarmult_base_ct(&r, digits);
  wipe(digits, sizeof digits);
  ge_p3_tobytes(io + 32, &r);
}

/* akd_sc_reduce64: io[0..64] little-endian -> io[0..32] = value mod L (constant time). */
EXPORT("akd_sc_reduce64") void akd_sc_reduce64(void) {
  uint8_t out[32];
  sc_reduce64(out, io);
  for (int i = 0; i < 32; i++) io[i] = out[i];
  wipe(out, sizeof out);
}

/* akd_sc_muladd: io[0..32] a, io[32..64] b, io[64..96] c -> io[0..32] = a b + c mod L. */
EXPORT("akd_sc_muladd") void akd_sc_muladd(void) {
  uint8_t out[32];
  sc_muladd(out, io, io + 32, io + 64);
  for (int i = 0; i < 32; i++) io[i] = out[i];
  wipe(out, sizeof out);
}

/* akd_wipe: clears the exchange buffer (after secret scalars went through it). */
EXPORT("akd_wipe") void akd_wipe(void) { wipe(io, sizeof io); }
