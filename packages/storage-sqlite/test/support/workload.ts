/**
 * The crash test's workload, shared by the publishing child and the checking parent: a fixed
 * VRF key, the labels, and what each epoch publishes (some existing labels get new values,
 * some new labels arrive), all a function of the epoch number.
 */

import { WhatsAppV1Configuration, type Configuration } from '@akd-ts/core';
import { StorageManager, type Database } from '@akd-ts/storage';
import { Directory, InMemoryVrfKeyStore, type Update } from '@akd-ts/directory';

/** A fixed VRF secret key (test only). */
export const VRF_SECRET = Uint8Array.from({ length: 32 }, (_, i) => (i * 29 + 7) & 0xff);

/** Labels in the starting store (epoch 1). */
export const INITIAL_LABELS = 400;
/** Each later epoch updates this many existing labels... */
export const UPDATES_PER_EPOCH = 150;
/** ...and adds this many new ones. */
export const NEW_PER_EPOCH = 50;

export const config: Configuration = new WhatsAppV1Configuration();
const enc = new TextEncoder();

export function labelName(i: number): Uint8Array {
  return enc.encode(`user-${i}`);
}

/** The number of labels once `epoch` is published. */
export function labelsAt(epoch: bigint): number {
  return INITIAL_LABELS + Math.max(0, Number(epoch) - 1) * NEW_PER_EPOCH;
}

/** The updates of `epoch` (epoch 1 creates the initial labels). */
export function updatesOf(epoch: bigint): Update[] {
  const e = Number(epoch);
  if (e === 1) {
    return Array.from({ length: INITIAL_LABELS }, (_, i) => ({
      label: labelName(i),
      value: enc.encode(`v1-${i}`),
    }));
  }
  const existing = labelsAt(epoch - 1n);
  const updates: Update[] = [];
  const start = (e * 131) % existing;
  for (let j = 0; j < UPDATES_PER_EPOCH; j++) {
    const i = (start + j) % existing;
    updates.push({ label: labelName(i), value: enc.encode(`v${e}-${i}`) });
  }
  for (let i = existing; i < labelsAt(epoch); i++) {
    updates.push({ label: labelName(i), value: enc.encode(`v${e}-${i}`) });
  }
  return updates;
}

/** Opens the writer on `db`. */
export function openDirectory(db: Database): Promise<Directory> {
  return Directory.open({
    config,
    storage: new StorageManager(db),
    vrfKeys: new InMemoryVrfKeyStore(VRF_SECRET.slice()),
  });
}
