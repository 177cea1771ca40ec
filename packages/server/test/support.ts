/**
 * Test helpers: a small directory over the in-memory store with upstream's HardCodedAkdVRF
 * key, an app over it, and a log capture.
 */

import { Writable } from 'node:stream';
import { VrfSecretKey, configurationByName, toHex, utf8 } from '@akd-ts/core';
import { MemoryDatabase, StorageManager, type Database } from '@akd-ts/storage';
import { Directory, InMemoryVrfKeyStore, ReadOnlyDirectory } from '@akd-ts/directory';
import { buildApp, createLogger, type AppDeps } from '@akd-ts/server';
import { HARD_CODED_VRF_SECRET } from '../../../test/support/vectors.js';

export const SECRET = new Uint8Array(HARD_CODED_VRF_SECRET);
export const SECRET_HEX = toHex(SECRET);
/** The public key of SECRET (hex). */
export const PUBLIC_HEX = toHex(VrfSecretKey.fromBytes(SECRET).publicKeyBytes);
export const TOKEN = 'test-token-0123456789abcdef';

/** The demo updates: three epochs, alice twice, bob, carol, and a non-text label. */
export const EPOCHS = [
  [
    { label: utf8('alice'), value: utf8('alice-key-1') },
    { label: utf8('bob'), value: utf8('bob-key-1') },
  ],
  [
    { label: utf8('alice'), value: utf8('alice-key-2') },
    { label: utf8('carol@example.com'), value: utf8('carol-key-1') },
  ],
  [{ label: new Uint8Array([0, 0xff, 7]), value: new Uint8Array([1, 2, 3]) }],
];

export interface Fixture {
  db: Database;
  dir: Directory;
  /** Root hashes of epochs 0 to 3. */
  roots: Uint8Array[];
  close(): Promise<void>;
}

/** A directory with EPOCHS published (epoch 3). */
export async function demoDirectory(
  configName: 'whatsapp_v1' | 'experimental' = 'whatsapp_v1',
  db: Database = new MemoryDatabase(),
): Promise<Fixture> {
  const dir = await Directory.open({
    config: configurationByName(configName),
    storage: new StorageManager(db),
    vrfKeys: new InMemoryVrfKeyStore(SECRET),
  });
  const roots = [(await dir.getEpochHash()).hash];
  for (const updates of EPOCHS) roots.push((await dir.publish(updates)).hash);
  await dir.vrfProofsStored(); // readers without the key serve the last epoch too
  return { db, dir, roots, close: () => dir.close() };
}

/** A read-only directory over `db` (as a second process would open it). */
export function reader(db: Database, configName = 'whatsapp_v1'): Promise<ReadOnlyDirectory> {
  return ReadOnlyDirectory.open({
    config: configurationByName(configName),
    storage: new StorageManager(db),
    vrfKeys: new InMemoryVrfKeyStore(SECRET),
  });
}

/** Every log line written, as text, and the logger writing them. */
export function captureLogs(): {
  lines: string[];
  logger: ReturnType<typeof createLogger>;
  /** Resolves to the first line (parsed) that `match` accepts, once it is logged. */
  logged: (match: (line: Record<string, unknown>) => boolean) => Promise<Record<string, unknown>>;
} {
  const lines: string[] = [];
  const waiting = new Set<(line: Record<string, unknown>) => boolean>();
  const stream = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) {
        lines.push(line);
        const parsed = JSON.parse(line) as Record<string, unknown>;
        for (const w of waiting) if (w(parsed)) waiting.delete(w);
      }
      done();
    },
  });
  const logged = (match: (line: Record<string, unknown>) => boolean) =>
    new Promise<Record<string, unknown>>((resolve) => {
      const seen = lines.map((l) => JSON.parse(l) as Record<string, unknown>).find(match);
      if (seen !== undefined) return resolve(seen);
      waiting.add((line) => {
        if (!match(line)) return false;
        resolve(line);
        return true;
      });
    });
  return { lines, logger: createLogger({ level: 'trace' }, stream), logged };
}

/** An app over a fresh demo directory, without process metrics (many apps per process). */
export async function demoApp(deps: Partial<AppDeps> = {}) {
  const fixture = await demoDirectory();
  const app = await buildApp({ directory: fixture.dir, processMetrics: false, ...deps });
  return {
    ...fixture,
    app,
    close: async () => {
      await app.close();
      await fixture.close();
    },
  };
}
