/**
 * Labels checked against the client's verified head: lookups, owner monitoring (every
 * version since the last one seen must carry a value the owner registered, shown by a
 * verified history proof) and contact monitoring (a label's version never goes back below one
 * seen). A proof served against another head than the client's makes the client advance to
 * that head first (advance.ts), so every proof is verified against a head on its chain.
 */

import {
  AkdError,
  bytesEqual,
  decodeHistoryProof,
  decodeLookupProof,
  keyHistoryVerify,
  lookupVerify,
  toHex,
  type HistoryParams,
  type VerifyResult,
} from '@akd-ts/core';
import type { AkdClient } from './client.js';
import { EvidenceError, evidenceHead } from './evidence.js';
import { field, fromBase64, getJson, hexField, toBase64, u64Field } from './http.js';
import type { LabelState, VerifiedHead } from './state.js';

/** A verified lookup. */
export interface VerifiedLookup extends VerifyResult {
  label: Uint8Array;
  /** The head it was verified against. */
  head: VerifiedHead;
  /** The proof as served (bare protobuf). */
  proof: Uint8Array;
}

/** What an owner or contact check found. */
export interface LabelCheck {
  label: Uint8Array;
  head: VerifiedHead;
  /** The version seen before the check (0 for none). */
  previousVersion: bigint;
  /** Versions new since then, newest first (verified; for an owner, all registered). */
  newVersions: VerifyResult[];
  /** The current version and value. */
  current: VerifyResult;
}

/** Tries a few times when the directory publishes between the head and the proof request. */
const RACE_RETRIES = 3;

/** A proof response fetched and pinned to the client's head: `{ head, body }`. */
async function proven(
  client: AkdClient,
  url: string,
): Promise<{ head: VerifiedHead; body: Record<string, unknown> }> {
  for (let attempt = 0; ; attempt++) {
    const body = await getJson((await client.context()).fetch, url);
    const epoch = u64Field(body, 'epoch', url);
    const root = hexField(body, 'rootHash', url, 32);
    let head = await client.head();
    if (head === undefined || epoch > head.epoch) head = (await client.refresh()).head;
    if (epoch > head.epoch) {
      throw new AkdError(
        'CLIENT_RESPONSE',
        `${url} was proven against epoch ${epoch}, beyond the server's own current epoch ${head.epoch}`,
      );
    }
    if (epoch === head.epoch) {
      if (!bytesEqual(root, head.rootHash)) {
        const ctx = await client.context();
        throw new EvidenceError({
          ...ctx.evidenceBase(
            'fork',
            'CLIENT_FORK',
            `${url} was proven against root ${toHex(root)} for epoch ${epoch}, verified as ${toHex(head.rootHash)}`,
          ),
          heads: [
            evidenceHead(head, `verified (${head.basis})`),
            evidenceHead({ epoch, rootHash: root }, 'served'),
          ],
        });
      }
      return { head, body };
    }
    // proven against an older head than the client's: a publish in between, or a rollback
    if (attempt + 1 >= RACE_RETRIES) {
      const ctx = await client.context();
      throw new EvidenceError({
        ...ctx.evidenceBase(
          'rollback',
          'CLIENT_ROLLBACK',
          `${url} was proven against epoch ${epoch}, older than the verified epoch ${head.epoch}`,
        ),
        heads: [
          evidenceHead(head, `verified (${head.basis})`),
          evidenceHead({ epoch, rootHash: root }, 'served'),
        ],
      });
    }
  }
}

function labelPath(label: Uint8Array): string {
  return `hex:${toHex(label)}`;
}

/**
 * Looks `label` up and verifies the proof against the client's head.
 * @throws AkdError `DIRECTORY_LABEL_NOT_FOUND` (the server's word: absence is not proven),
 * a `VERIFY_*`/`VRF_*` code for a bad proof, or EvidenceError as `refresh`.
 */
export async function lookupLabel(client: AkdClient, label: Uint8Array): Promise<VerifiedLookup> {
  const url = `${client.server}/v1/lookup/${labelPath(label)}`;
  const { head, body } = await proven(client, url);
  const ctx = await client.context();
  const proof = fromBase64(field(body, 'proof', url), `${url}: proof`);
  const result = lookupVerify(
    ctx.config,
    ctx.publicKey,
    head.rootHash,
    head.epoch,
    label,
    decodeLookupProof(proof),
  );
  return { ...result, label, head, proof };
}

/** The client's record of `label` (created with `role` when new). */
async function record(
  client: AkdClient,
  label: Uint8Array,
  role: LabelState['role'],
): Promise<LabelState> {
  await client.context();
  const state = (await client.state())!;
  const key = toHex(label);
  const had = state.labels[key];
  if (had !== undefined) {
    if (role === 'owner' && had.role !== 'owner') had.role = 'owner';
    return had;
  }
  const fresh: LabelState = { role, version: 0n, epoch: 0n, value: null, registered: [] };
  state.labels[key] = fresh;
  return fresh;
}

/** Registers `value` as one the owner of `label` published (before or after publishing it). */
export async function registerPublished(
  client: AkdClient,
  label: Uint8Array,
  value: Uint8Array,
): Promise<void> {
  const r = await record(client, label, 'owner');
  if (!r.registered.includes(toHex(value))) r.registered.push(toHex(value));
  await client.save();
}

function versionRollback(
  client: AkdClient,
  r: LabelState,
  label: Uint8Array,
  found: VerifiedLookup,
): Promise<never> {
  return client.context().then((ctx) => {
    throw new EvidenceError({
      ...ctx.evidenceBase(
        'version-rollback',
        'CLIENT_VERSION_ROLLBACK',
        `label ${toHex(label)} is at version ${found.version}, below the version ${r.version} seen before`,
      ),
      heads: [evidenceHead(found.head, `verified (${found.head.basis})`)],
      label: {
        hex: toHex(label),
        registered: r.registered,
        versionSeen: r.version.toString(),
        lookup: { proof: toBase64(found.proof) },
      },
    });
  });
}

/**
 * Checks a label: its current version is not below the one seen, and, for an owned label,
 * every version since the last one seen carries a registered value (verified history proof;
 * on the first check, only the current version must).
 * @throws EvidenceError `CLIENT_VERSION_ROLLBACK` or `CLIENT_UNEXPECTED_CHANGE`, or as lookups.
 */
export async function checkLabel(
  client: AkdClient,
  label: Uint8Array,
  role: LabelState['role'],
): Promise<LabelCheck> {
  const r = await record(client, label, role);
  const found = await lookupLabel(client, label);
  const previousVersion = r.version;
  if (found.version < r.version) return versionRollback(client, r, label, found);
  let newVersions: VerifyResult[] = found.version > r.version ? [found] : [];
  if (r.role === 'owner' && found.version > r.version) {
    newVersions = await ownerHistory(client, r, label, found);
  }
  r.version = found.version;
  r.epoch = found.epoch;
  r.value = toHex(found.value);
  await client.save();
  return { label, head: found.head, previousVersion, newVersions, current: found };
}

/** The verified versions after `r.version` up to `found`; every value must be registered. */
async function ownerHistory(
  client: AkdClient,
  r: LabelState,
  label: Uint8Array,
  found: VerifiedLookup,
): Promise<VerifyResult[]> {
  const count = found.version - r.version;
  const params: HistoryParams =
    r.version === 0n || count > 1000n
      ? { kind: 'complete' }
      : { kind: 'mostRecent', count: Number(count) };
  const query = params.kind === 'complete' ? '' : `?mostRecent=${params.count}`;
  const url = `${client.server}/v1/history/${labelPath(label)}${query}`;
  const { head, body } = await proven(client, url);
  const ctx = await client.context();
  const proof = fromBase64(field(body, 'proof', url), `${url}: proof`);
  const versions = keyHistoryVerify(
    ctx.config,
    ctx.publicKey,
    head.rootHash,
    head.epoch,
    label,
    decodeHistoryProof(proof),
    {
      historyParams: params,
    },
  ).filter((v) => v.version > r.version);
  // on the first check, versions before the current one predate the monitoring: only the
  // current value must be the owner's
  const unexpected = versions.filter(
    (v) =>
      !r.registered.includes(toHex(v.value)) && (r.version > 0n || v.version === found.version),
  );
  if (unexpected.length > 0) {
    const list = unexpected.map((v) => `version ${v.version} (epoch ${v.epoch})`).join(', ');
    throw new EvidenceError({
      ...ctx.evidenceBase(
        'unexpected-change',
        'CLIENT_UNEXPECTED_CHANGE',
        `label ${toHex(label)} has ${list} with a value its owner did not register`,
      ),
      heads: [evidenceHead(head, `verified (${head.basis})`)],
      label: {
        hex: toHex(label),
        registered: r.registered,
        versionSeen: r.version.toString(),
        history: {
          mostRecent: params.kind === 'complete' ? null : params.count,
          proof: toBase64(proof),
        },
      },
    });
  }
  if (versions.length === 0 || versions[0]!.version !== found.version) {
    throw new AkdError(
      'VERIFY_HISTORY',
      `the history of ${toHex(label)} does not reach version ${found.version}`,
    );
  }
  return versions;
}
