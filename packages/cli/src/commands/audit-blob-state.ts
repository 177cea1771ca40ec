/**
 * What `akd audit verify` keeps between runs: the state file (the last verified epoch and its
 * root, so a rerun resumes there and a server that rewrites what was verified is caught), and
 * the auditor's Ed25519 signing key (read like the VRF key file, never printed).
 *
 * State file (JSON, written atomically): `{"format": "akd-audit-state", "version": 1,
 * "source", "configuration", "domainLabel", "naming", "epoch", "rootHash", "verified",
 * "updatedAt", "failure", "signedHead"}`; epochs are decimal strings (exact for u64), hashes
 * lowercase hex, and the signed head is a witness signature in Plexi's JSON.
 */

import { readFile, rename, writeFile } from 'node:fs/promises';
import {
  fromHex,
  toHex,
  witnessSignatureToJson,
  type AuditBlobNaming,
  type AuditHead,
  type WitnessSignature,
} from '@akd-ts/core';
import { quote } from '../args.js';
import { UsageError } from '../errors.js';

export const STATE_FORMAT = 'akd-audit-state';

/** The state file's content. */
export interface AuditStateJson {
  format: typeof STATE_FORMAT;
  version: 1;
  source: string;
  configuration: string;
  domainLabel: string | null;
  naming: AuditBlobNaming | null;
  epoch: string;
  rootHash: string;
  /** Blobs verified over every run. */
  verified: number;
  updatedAt: string;
  /** The first failure of the last run, if it failed. */
  failure: { code: string; message: string } | null;
  /** The last signed head, in Plexi's JSON (a witness signature). */
  signedHead: Record<string, unknown> | null;
}

/** The state as the command uses it. */
export interface AuditState {
  source: string;
  configuration: string;
  domainLabel: string | null;
  naming: AuditBlobNaming | undefined;
  head: AuditHead;
  verified: number;
  failure?: { code: string; message: string };
  signedHead?: WitnessSignature;
}

function invalid(path: string, why: string): UsageError {
  return new UsageError(`--state: ${quote(path, 200)} is not an audit state file: ${why}`);
}

/**
 * The state saved at `path`, or undefined when there is no such file.
 * @throws UsageError when the file cannot be read or is not a state file
 */
export async function loadState(path: string): Promise<AuditState | undefined> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new UsageError(`--state: cannot read ${quote(path, 200)}: ${(e as Error).message}`, {
      cause: e,
    });
  }
  let json: Partial<AuditStateJson>;
  try {
    json = JSON.parse(text) as Partial<AuditStateJson>;
  } catch {
    throw invalid(path, 'not JSON');
  }
  if (json === null || typeof json !== 'object' || json.format !== STATE_FORMAT) {
    throw invalid(path, `no "format": "${STATE_FORMAT}"`);
  }
  if (json.version !== 1) throw invalid(path, `unknown version ${String(json.version)}`);
  if (typeof json.epoch !== 'string' || !/^(0|[1-9][0-9]{0,19})$/.test(json.epoch)) {
    throw invalid(path, 'a malformed epoch');
  }
  if (typeof json.rootHash !== 'string' || !/^[0-9a-f]{64}$/i.test(json.rootHash)) {
    throw invalid(path, 'a malformed root hash');
  }
  if (typeof json.configuration !== 'string') throw invalid(path, 'no configuration');
  if (json.naming !== null && json.naming !== 'end' && json.naming !== 'start') {
    throw invalid(path, 'a malformed naming');
  }
  return {
    source: typeof json.source === 'string' ? json.source : '',
    configuration: json.configuration,
    domainLabel: typeof json.domainLabel === 'string' ? json.domainLabel : null,
    naming: json.naming ?? undefined,
    head: { epoch: BigInt(json.epoch), rootHash: fromHex(json.rootHash) },
    verified: typeof json.verified === 'number' ? json.verified : 0,
  };
}

/** Writes the state (to a temporary file renamed over the old one, so a crash never truncates it). */
export async function saveState(path: string, state: AuditState): Promise<void> {
  const json: AuditStateJson = {
    format: STATE_FORMAT,
    version: 1,
    source: state.source,
    configuration: state.configuration,
    domainLabel: state.domainLabel,
    naming: state.naming ?? null,
    epoch: state.head.epoch.toString(),
    rootHash: toHex(state.head.rootHash),
    verified: state.verified,
    updatedAt: new Date().toISOString(),
    failure: state.failure ?? null,
    signedHead: state.signedHead === undefined ? null : witnessSignatureToJson(state.signedHead),
  };
  const temp = `${path}.${process.pid}.tmp`;
  try {
    await writeFile(temp, `${JSON.stringify(json, null, 2)}\n`);
    await rename(temp, path);
  } catch (e) {
    throw new UsageError(`--state: cannot write ${quote(path, 200)}: ${(e as Error).message}`, {
      cause: e,
    });
  }
}

/**
 * The auditor's 32-byte Ed25519 secret key from a file of 64 hex digits.
 * @throws UsageError when the file cannot be read or holds no key (its content is never shown)
 */
export async function readSigningKey(path: string): Promise<Uint8Array> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    throw new UsageError(`--sign-key: cannot read ${quote(path, 200)}: ${(e as Error).message}`, {
      cause: e,
    });
  }
  const hex = text.trim();
  if (!/^[0-9a-fA-F]{64}$/.test(hex)) {
    throw new UsageError(
      `--sign-key: ${quote(path, 200)} does not hold a 32-byte Ed25519 secret key as 64 hex digits`,
    );
  }
  return fromHex(hex);
}
