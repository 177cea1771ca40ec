/*
 * BLAKE3 (O'Connor, Aumasson, Neves, Wilcox-O'Hearn, "BLAKE3: one function, fast
 * everywhere", 2020), hash mode with a 32-byte output: the hash of both configurations
 * (spec 3.2, 3.3). Written from the paper's definitions, portable C on 32-bit words, for the
 * module's verification path: a page's first membership check would otherwise run the
 * JavaScript BLAKE3 before the engine has compiled it.
 *
 * The input is split into 1024-byte chunks of 64-byte blocks; a chunk's chaining value comes
 * from compressing its blocks in turn (CHUNK_START on the first, CHUNK_END on the last), and
 * chunks are merged pairwise into parent nodes, the left subtree always holding the largest
 * power of two of chunks (paper section 2.1), which the stack of `blake3_hash` builds
 * incrementally. The root node's last compression carries ROOT. Inputs are public (tree
 * hashes, label inputs).
 */
#ifndef AKD_BLAKE3_H
#define AKD_BLAKE3_H

#include <stdint.h>

#define BLAKE3_BLOCK 64
#define BLAKE3_CHUNK 1024

enum { B3_CHUNK_START = 1, B3_CHUNK_END = 2, B3_PARENT = 4, B3_ROOT = 8 };

static const uint32_t B3_IV[8] = {0x6A09E667, 0xBB67AE85, 0x3C6EF372, 0xA54FF53A,
                                  0x510E527F, 0x9B05688C, 0x1F83D9AB, 0x5BE0CD19};

/* The message word order of each of the 7 rounds: the permutation of the paper (2, 6, 3,
 * 10, 7, 0, 4, 13, 1, 11, 12, 5, 9, 14, 15, 8) applied 0..6 times. */
static const uint8_t B3_SCHEDULE[7][16] = {
    {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15},
    {2, 6, 3, 10, 7, 0, 4, 13, 1, 11, 12, 5, 9, 14, 15, 8},
    {3, 4, 10, 12, 13, 2, 7, 14, 6, 5, 9, 0, 11, 15, 8, 1},
    {10, 7, 12, 9, 14, 3, 13, 15, 4, 0, 11, 2, 5, 8, 1, 6},
    {12, 13, 9, 11, 15, 10, 14, 8, 7, 2, 5, 3, 0, 1, 6, 4},
    {9, 14, 11, 5, 8, 12, 15, 1, 13, 3, 0, 10, 2, 6, 4, 7},
    {11, 15, 5, 0, 1, 9, 8, 6, 14, 10, 2, 12, 3, 4, 7, 13},
};

static inline uint32_t b3_rotr(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

static inline void b3_g(uint32_t *v, int a, int b, int c, int d, uint32_t x, uint32_t y) {
  v[a] = v[a] + v[b] + x;
  v[d] = b3_rotr(v[d] ^ v[a], 16);
  v[c] = v[c] + v[d];
  v[b] = b3_rotr(v[b] ^ v[c], 12);
  v[a] = v[a] + v[b] + y;
  v[d] = b3_rotr(v[d] ^ v[a], 8);
  v[c] = v[c] + v[d];
  v[b] = b3_rotr(v[b] ^ v[c], 7);
}

/* cv = the first 8 words of compress(cv, block, counter, len, flags) (paper section 2.2). */
static void b3_compress(uint32_t cv[8], const uint8_t block[BLAKE3_BLOCK], uint64_t counter,
                        uint32_t len, uint32_t flags) {
  uint32_t m[16], v[16];
  for (int i = 0; i < 16; i++) {
    const uint8_t *p = block + 4 * i;
    m[i] = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
  }
  for (int i = 0; i < 8; i++) v[i] = cv[i];
  for (int i = 0; i < 4; i++) v[8 + i] = B3_IV[i];
  v[12] = (uint32_t)counter;
  v[13] = (uint32_t)(counter >> 32);
  v[14] = len;
  v[15] = flags;
  for (int r = 0; r < 7; r++) {
    const uint8_t *s = B3_SCHEDULE[r];
    b3_g(v, 0, 4, 8, 12, m[s[0]], m[s[1]]);
    b3_g(v, 1, 5, 9, 13, m[s[2]], m[s[3]]);
    b3_g(v, 2, 6, 10, 14, m[s[4]], m[s[5]]);
    b3_g(v, 3, 7, 11, 15, m[s[6]], m[s[7]]);
    b3_g(v, 0, 5, 10, 15, m[s[8]], m[s[9]]);
    b3_g(v, 1, 6, 11, 12, m[s[10]], m[s[11]]);
    b3_g(v, 2, 7, 8, 13, m[s[12]], m[s[13]]);
    b3_g(v, 3, 4, 9, 14, m[s[14]], m[s[15]]);
  }
  for (int i = 0; i < 8; i++) cv[i] = v[i] ^ v[8 + i];
}

/* The chaining value of one chunk (index `counter`, 0..1024 bytes; `root` when it is the
 * whole input). */
static void b3_chunk(uint32_t cv[8], const uint8_t *in, uint32_t len, uint64_t counter,
                     int root) {
  uint8_t block[BLAKE3_BLOCK];
  for (int i = 0; i < 8; i++) cv[i] = B3_IV[i];
  uint32_t flags = B3_CHUNK_START;
  for (;;) {
    const uint32_t n = len < BLAKE3_BLOCK ? len : BLAKE3_BLOCK;
    for (uint32_t i = 0; i < BLAKE3_BLOCK; i++) block[i] = i < n ? in[i] : 0;
    in += n;
    len -= n;
    if (len == 0) {
      b3_compress(cv, block, counter, n, flags | B3_CHUNK_END | (root ? B3_ROOT : 0));
      return;
    }
    b3_compress(cv, block, counter, n, flags);
    flags = 0;
  }
}

/* cv = the parent node of `left` and `right`. */
static void b3_parent(uint32_t cv[8], const uint32_t left[8], const uint32_t right[8],
                      int root) {
  uint8_t block[BLAKE3_BLOCK];
  for (int i = 0; i < 8; i++) {
    for (int j = 0; j < 4; j++) {
      block[4 * i + j] = (uint8_t)(left[i] >> (8 * j));
      block[32 + 4 * i + j] = (uint8_t)(right[i] >> (8 * j));
    }
  }
  for (int i = 0; i < 8; i++) cv[i] = B3_IV[i];
  b3_compress(cv, block, 0, BLAKE3_BLOCK, B3_PARENT | (root ? B3_ROOT : 0));
}

/* out = BLAKE3-256(in[0..len]). */
static void blake3_hash(uint8_t out[32], const uint8_t *in, uint32_t len) {
  uint32_t cv[8];
  if (len <= BLAKE3_CHUNK) {
    b3_chunk(cv, in, len, 0, 1);
  } else {
    /* Every chunk but the last is full; after chunk number k (counting from 1) is pushed,
     * as many merges happen as k has trailing zero bits, which keeps the stack the binary
     * representation of the chunks so far. The last chunk then folds the stack from the
     * top, the final merge being the root. */
    uint32_t stack[32][8];
    int depth = 0;
    uint64_t chunk = 0;
    while (len > BLAKE3_CHUNK) {
      b3_chunk(stack[depth++], in, BLAKE3_CHUNK, chunk, 0);
      in += BLAKE3_CHUNK;
      len -= BLAKE3_CHUNK;
      chunk++;
      for (uint64_t k = chunk; (k & 1) == 0; k >>= 1) {
        depth--;
        b3_parent(stack[depth - 1], stack[depth - 1], stack[depth], 0);
      }
    }
    b3_chunk(cv, in, len, chunk, 0);
    while (depth > 0) {
      depth--;
      b3_parent(cv, stack[depth], cv, depth == 0);
    }
  }
  for (int i = 0; i < 8; i++) {
    for (int j = 0; j < 4; j++) out[4 * i + j] = (uint8_t)(cv[i] >> (8 * j));
  }
}

#endif
