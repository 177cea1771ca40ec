/**
 * Test helpers: directories over the in-memory store with upstream's HardCodedAkdVRF key.
 */

import { configurationByName, type Configuration } from '@akd-ts/core';
import {
  MemoryDatabase,
  StorageManager,
  type Database,
  type StorageManagerOptions,
} from '@akd-ts/storage';
import {
  Directory,
  InMemoryVrfKeyStore,
  LocalVrfEngine,
  NO_PARALLELISM,
  Parallelism,
  ReadOnlyDirectory,
  type ParallelismConfig,
  type VrfEngine,
  type WritableDirectoryOptions,
} from '@akd-ts/directory';
import { HARD_CODED_VRF_SECRET } from '../../../../test/support/vectors.js';
import type { TestStore } from '../../../../test/support/stores.js';

export const CONFIG_NAMES = ['whatsapp_v1', 'experimental'] as const;

/** A parallelism setting under a short name for test titles. */
export interface Degree {
  name: string;
  parallelism: ParallelismConfig;
}

/**
 * The settings byte-exact tests run under: no parallelism (the calling thread alone), and 1,
 * 2, 4 and 8 tree worker threads taking subtrees of any size (so even the smallest publish
 * is split among them) with preloads of as many concurrent reads.
 */
export const DEGREES: readonly Degree[] = [
  { name: 'serial', parallelism: NO_PARALLELISM },
  ...[1, 2, 4, 8].map((n) => ({
    name: `degree ${n}`,
    parallelism: {
      insertion: Parallelism.static(n),
      preload: Parallelism.static(n),
      minTaskSize: 1,
    },
  })),
];

/**
 * A directory's `vrfEngine`: the calling thread's engine with the methods `replace(inner)`
 * gives in place of its own (a test that records, holds or fails what a directory asks for).
 */
export function engineReplacing(
  replace: (inner: LocalVrfEngine) => Partial<VrfEngine>,
): NonNullable<WritableDirectoryOptions['vrfEngine']> {
  return (config, secret) => {
    const inner = new LocalVrfEngine(config, secret);
    return engineWith(inner, replace(inner));
  };
}

/** `inner` with the methods of `replacing` in place of its own (named "recording"). */
export function engineWith<E extends VrfEngine>(
  inner: E,
  replacing: Partial<VrfEngine>,
): VrfEngine {
  return {
    name: 'recording',
    nodeLabels: (...args) => inner.nodeLabels(...args),
    proofs: (jobs) => inner.proofs(jobs),
    close: () => inner.close(),
    ...replacing,
  };
}

/** A reader of `db` without the key, as a proof server opens it. */
export function keylessReader(dir: Directory, db: Database): Promise<ReadOnlyDirectory> {
  return ReadOnlyDirectory.open({
    config: dir.config,
    storage: new StorageManager(db),
    publicKey: dir.getPublicKey(),
  });
}

export function hardCodedKeys(): InMemoryVrfKeyStore {
  return new InMemoryVrfKeyStore(new Uint8Array(HARD_CODED_VRF_SECRET));
}

export interface TestDirectory {
  dir: Directory;
  db: Database;
  storage: StorageManager;
  config: Configuration;
}

export async function openDirectory(
  configName: (typeof CONFIG_NAMES)[number],
  options: {
    db?: Database;
    /** Where to open a fresh database when `db` is not given (default: in memory). */
    store?: TestStore;
    storage?: StorageManagerOptions;
    directory?: Partial<WritableDirectoryOptions>;
  } = {},
): Promise<TestDirectory> {
  const config = configurationByName(configName);
  const db = options.db ?? (options.store ? await options.store.open() : new MemoryDatabase());
  const storage = new StorageManager(db, options.storage);
  const dir = await Directory.open({
    config,
    storage,
    vrfKeys: hardCodedKeys(),
    ...options.directory,
  });
  return { dir, db, storage, config };
}
