/**
 * Deterministic random inputs for benchmarks (xorshift128+ seeded like upstream's runs with
 * 42), so that two runs, or two implementations, insert the same leaves.
 */

import { NodeLabel, type AzksElement } from '@akd-ts/core';

export class Rng {
  private s0: bigint;
  private s1: bigint;
  private static readonly MASK = (1n << 64n) - 1n;

  constructor(seed = 42n) {
    this.s0 = (seed ^ 0x9e3779b97f4a7c15n) & Rng.MASK;
    this.s1 = (seed * 0xbf58476d1ce4e5b9n + 1n) & Rng.MASK;
  }

  private next(): bigint {
    let x = this.s0;
    const y = this.s1;
    this.s0 = y;
    x ^= (x << 23n) & Rng.MASK;
    this.s1 = x ^ y ^ (x >> 17n) ^ (y >> 26n);
    return (this.s1 + y) & Rng.MASK;
  }

  bytes(n: number): Uint8Array {
    const out = new Uint8Array(n);
    for (let i = 0; i < n; i += 8) {
      let v = this.next();
      for (let j = i; j < Math.min(n, i + 8); j++) {
        out[j] = Number(v & 0xffn);
        v >>= 8n;
      }
    }
    return out;
  }
}

/** `n` random leaves: 256-bit labels with random 32-byte values. */
export function randomLeaves(rng: Rng, n: number): AzksElement[] {
  return Array.from({ length: n }, () => ({
    label: new NodeLabel(rng.bytes(32), 256),
    value: rng.bytes(32),
  }));
}
