/**
 * A small publish and audit with every worker pool of the directory asked for: tree
 * insertion (a low task size, so 300 labels make tasks), VRF threads and the audit
 * verifier's threads. bundled.test.ts runs it from an esbuild bundle, where the worker
 * scripts cannot load, and in the test process, where they do; `mode` names which pool, if
 * any, is demanded outright (a fixed degree or `requireWorkers`).
 */

import { WhatsAppV1Configuration, toHex, utf8 } from '@akd-ts/core';
import { MemoryDatabase, StorageManager } from '@akd-ts/storage';
import {
  DEFAULT_PARALLELISM,
  Directory,
  InMemoryVrfKeyStore,
  Parallelism,
  WorkersUnavailableError,
  createAuditBlobVerifier,
  exportAuditBlobs,
} from '@akd-ts/directory';

export type WorkloadMode = 'default' | 'tree' | 'vrf' | 'audit';

/** What the workload saw: the roots and verified blob, or the error of a demanded pool. */
export interface WorkloadResult {
  roots: string[];
  verified: string | undefined;
  error?: { name: string; pool: string; message: string };
}

const LABELS = 300;

export async function runWorkload(mode: WorkloadMode): Promise<WorkloadResult> {
  const config = new WhatsAppV1Configuration();
  const dir = await Directory.open({
    config,
    storage: new StorageManager(new MemoryDatabase()),
    vrfKeys: new InMemoryVrfKeyStore(new Uint8Array(32).fill(7)),
    vrf: { threads: 2, requireWorkers: mode === 'vrf' },
    parallelism: {
      ...DEFAULT_PARALLELISM,
      insertion: mode === 'tree' ? Parallelism.static(2) : Parallelism.availableOr(2),
      minTaskSize: 16,
    },
  });
  const result: WorkloadResult = { roots: [], verified: undefined };
  try {
    for (const round of [1, 2]) {
      const updates = Array.from({ length: LABELS }, (_, i) => ({
        label: utf8(`user ${i}`),
        value: utf8(`key ${i} of round ${round}`),
      }));
      result.roots.push(toHex((await dir.publish(updates)).hash));
    }
    const verifier = createAuditBlobVerifier(config, {
      threads: 2,
      minBlobBytes: 0,
      requireWorkers: mode === 'audit',
    });
    try {
      for await (const blob of exportAuditBlobs(dir, 1n, 2n)) {
        const verified = await verifier.verify(blob, {});
        result.verified = `${verified.name.epoch} ${toHex(verified.name.currentHash)}`;
      }
    } finally {
      await verifier.close();
    }
  } catch (e) {
    if (!(e instanceof WorkersUnavailableError)) throw e;
    result.error = { name: e.name, pool: e.pool, message: e.message };
  } finally {
    await dir.close();
  }
  return result;
}
