/**
 * The client's state: per directory (keyed by its server URL), the VRF public key and
 * configuration it was first seen with, the last verified head, and per label the newest
 * version seen and, for labels the client owns, the values their owner published. Saved as one
 * JSON document (epochs and versions as decimal strings, bytes as hex, as in the HTTP API).
 */

import { AkdError, fromHex, toHex } from '@akd-ts/core';
import type { StateStore } from './store.js';

/** An epoch and its root hash. */
export interface Head {
  epoch: bigint;
  rootHash: Uint8Array;
}

/** How the client came to trust a head. */
export type HeadBasis = 'first-use' | 'trusted' | 'append-only' | 'witnesses' | 'same';

/** The last head a client verified, with when and how. */
export interface VerifiedHead extends Head {
  /** When the client verified it, ms since 1970 (its clock). */
  verifiedAt: number;
  basis: HeadBasis;
  /** The newest timestamp of the witness signatures counted for it, ms, when any were. */
  witnessedAt?: number;
}

/** What a client remembers of one label. */
export interface LabelState {
  /** `owner`: the client registers its values; `contact`: another party's label. */
  role: 'owner' | 'contact';
  /** The newest version seen (0 before any). */
  version: bigint;
  /** The epoch of that version, and its value (hex), when seen. */
  epoch: bigint;
  value: string | null;
  /** Owner only: every value the owner published (hex). */
  registered: string[];
}

/** What a client remembers of one directory. */
export interface DirectoryState {
  server: string;
  publicKey: string;
  configuration: { name: string; domainLabel: string | null };
  head: VerifiedHead | undefined;
  /** Keyed by the label's hex. */
  labels: Record<string, LabelState>;
}

const FORMAT = 'akd-client-state';

function bad(message: string): AkdError {
  return new AkdError('CLIENT_STATE', `saved client state: ${message}`);
}

function text(v: unknown, what: string): string {
  if (typeof v !== 'string') throw bad(`${what}: expected a string`);
  return v;
}

function u64(v: unknown, what: string): bigint {
  if (typeof v !== 'string' || !/^(0|[1-9][0-9]{0,19})$/.test(v)) {
    throw bad(`${what}: expected a decimal string`);
  }
  return BigInt(v);
}

function hex(v: unknown, what: string): Uint8Array {
  try {
    return fromHex(text(v, what));
  } catch {
    throw bad(`${what}: expected hex`);
  }
}

function obj(v: unknown, what: string): Record<string, unknown> {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) {
    throw bad(`${what}: expected an object`);
  }
  return v as Record<string, unknown>;
}

function headFromJson(v: unknown, what: string): VerifiedHead {
  const o = obj(v, what);
  const basis = text(o.basis, `${what}.basis`) as HeadBasis;
  if (!['first-use', 'trusted', 'append-only', 'witnesses', 'same'].includes(basis)) {
    throw bad(`${what}.basis: unknown '${basis}'`);
  }
  const head: VerifiedHead = {
    epoch: u64(o.epoch, `${what}.epoch`),
    rootHash: hex(o.rootHash, `${what}.rootHash`),
    verifiedAt: Number(o.verifiedAt),
    basis,
  };
  if (o.witnessedAt !== undefined) head.witnessedAt = Number(o.witnessedAt);
  return head;
}

function headToJson(h: VerifiedHead): Record<string, unknown> {
  return {
    epoch: h.epoch.toString(),
    rootHash: toHex(h.rootHash),
    verifiedAt: h.verifiedAt,
    basis: h.basis,
    ...(h.witnessedAt === undefined ? {} : { witnessedAt: h.witnessedAt }),
  };
}

function labelFromJson(v: unknown, what: string): LabelState {
  const o = obj(v, what);
  const role = o.role === 'owner' || o.role === 'contact' ? o.role : undefined;
  if (role === undefined) throw bad(`${what}.role: expected owner or contact`);
  if (!Array.isArray(o.registered)) throw bad(`${what}.registered: expected a list`);
  return {
    role,
    version: u64(o.version, `${what}.version`),
    epoch: u64(o.epoch, `${what}.epoch`),
    value: o.value === null ? null : toHex(hex(o.value, `${what}.value`)),
    registered: o.registered.map((r, i) => toHex(hex(r, `${what}.registered[${i}]`))),
  };
}

function directoryFromJson(v: unknown, what: string): DirectoryState {
  const o = obj(v, what);
  const c = obj(o.configuration, `${what}.configuration`);
  const labels: Record<string, LabelState> = {};
  for (const [k, l] of Object.entries(obj(o.labels, `${what}.labels`))) {
    labels[k] = labelFromJson(l, `${what}.labels.${k}`);
  }
  return {
    server: text(o.server, `${what}.server`),
    publicKey: toHex(hex(o.publicKey, `${what}.publicKey`)),
    configuration: {
      name: text(c.name, `${what}.configuration.name`),
      domainLabel: c.domainLabel === null ? null : text(c.domainLabel, `${what}.domainLabel`),
    },
    head:
      o.head === undefined || o.head === null ? undefined : headFromJson(o.head, `${what}.head`),
    labels,
  };
}

function directoryToJson(d: DirectoryState): Record<string, unknown> {
  const labels: Record<string, unknown> = {};
  for (const [k, l] of Object.entries(d.labels)) {
    labels[k] = { ...l, version: l.version.toString(), epoch: l.epoch.toString() };
  }
  return {
    server: d.server,
    publicKey: d.publicKey,
    configuration: d.configuration,
    head: d.head === undefined ? null : headToJson(d.head),
    labels,
  };
}

/**
 * Reads the state of the directory at `server` from `store` (undefined when it has none).
 * @throws AkdError `CLIENT_STATE` when the saved document is not a client state.
 */
export async function loadDirectoryState(
  store: StateStore,
  server: string,
): Promise<DirectoryState | undefined> {
  const all = await readAll(store);
  const entry = all[server];
  return entry === undefined ? undefined : directoryFromJson(entry, `directories[${server}]`);
}

/** Saves `state` under its server, keeping every other directory's state as it was. */
export async function saveDirectoryState(store: StateStore, state: DirectoryState): Promise<void> {
  const all = await readAll(store);
  all[state.server] = directoryToJson(state);
  await store.set({ format: FORMAT, version: 1, directories: all });
}

async function readAll(store: StateStore): Promise<Record<string, unknown>> {
  let doc: unknown;
  try {
    doc = await store.get();
  } catch (e) {
    if (e instanceof SyntaxError) throw bad(`not JSON (${e.message})`);
    throw e;
  }
  if (doc === undefined) return {};
  const o = obj(doc, 'document');
  if (o.format !== FORMAT || o.version !== 1) throw bad(`not an ${FORMAT} document of version 1`);
  return { ...obj(o.directories, 'directories') };
}
