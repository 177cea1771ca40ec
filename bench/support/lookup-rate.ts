/**
 * Lookup proof generation on one thread, no HTTP: the figure upstream's `akd-rs bench-lookup
 * --keys N --lookups L` reports, measured the same way. N fresh labels ("User i" -> "value i")
 * are published into an empty in-memory directory (experimental configuration, upstream's
 * domain label), then L lookup proofs are generated one after another from the warm cache
 * the publish left. The proofs are encoded (protobuf, as a server sends them) in a separate
 * timing, and a few are verified outside the timing.
 */

import {
  ExperimentalConfiguration,
  encodeLookupProof,
  lookupVerify,
  utf8,
  type EpochHash,
  type LookupProof,
} from '@akd-ts/core';
import { MemoryDatabase, StorageManager } from '@akd-ts/storage';
import { Directory, InMemoryVrfKeyStore } from '@akd-ts/directory';

export interface LookupRate {
  keys: number;
  lookups: number;
  /** Lookup proofs generated per second (no encoding). */
  lookupsPerSecond: number;
  /** The same with each proof encoded as protobuf. */
  encodedPerSecond: number;
  vrf: string;
}

export async function lookupRate(keys: number, lookups: number): Promise<LookupRate> {
  const config = new ExperimentalConfiguration();
  const dir = await Directory.open({
    config,
    storage: new StorageManager(new MemoryDatabase()),
    vrfKeys: new InMemoryVrfKeyStore(new Uint8Array(32).fill(7)),
  });
  const labels = Array.from({ length: keys }, (_, i) => utf8(`User ${i}`));
  await dir.publish(labels.map((label, i) => ({ label, value: utf8(`value ${i}`) })));
  const pick = (i: number) => labels[(i * 7919) % keys]!;
  // warm-up: the JIT, not the cache (the publish left every node in it)
  for (let i = 0; i < Math.min(200, lookups); i++) await dir.lookup(pick(lookups + i));

  const kept: { label: Uint8Array; proof: LookupProof; epochHash: EpochHash }[] = [];
  let start = performance.now();
  for (let i = 0; i < lookups; i++) {
    const r = await dir.lookup(pick(i));
    if (i < 5) kept.push({ label: pick(i), ...r });
  }
  const plainMs = performance.now() - start;
  start = performance.now();
  for (let i = 0; i < lookups; i++) encodeLookupProof((await dir.lookup(pick(i))).proof);
  const encodedMs = performance.now() - start;
  for (const k of kept) {
    lookupVerify(config, dir.getPublicKey(), k.epochHash.hash, k.epochHash.epoch, k.label, k.proof);
  }
  const vrf = dir.vrfEngineName;
  await dir.close();
  return {
    keys,
    lookups,
    lookupsPerSecond: Math.round((lookups * 1000) / plainMs),
    encodedPerSecond: Math.round((lookups * 1000) / encodedMs),
    vrf,
  };
}
