/**
 * Checking evidence offline (`akd verify evidence FILE`): everything in the document is
 * re-verified with the keys it names, and the document proves misbehaviour only when its
 * heads, signatures and proofs all verify and show what its kind says. What a witness signed
 * is attributable to the witness; a head marked `served` is the client's account of what the
 * server answered (akd servers do not sign heads), backed by the proofs that verify against it.
 */

import {
  AkdError,
  configurationByName,
  decodeAppendOnlyProof,
  decodeHistoryProof,
  decodeLookupProof,
  fromHex,
  keyHistoryVerify,
  lookupVerify,
  toHex,
  type Configuration,
  type HistoryParams,
} from '@akd-ts/core';
import { verifyRange } from './append-only.js';
import { EVIDENCE_FORMAT, type Evidence, type EvidenceKind } from './evidence.js';
import { fromBase64 } from './http.js';
import { plexiCodec } from './plexi.js';
import type { Head } from './state.js';
import type { WitnessCodec } from './witness.js';

/** What checking a document found. */
export interface EvidenceVerdict {
  kind: EvidenceKind;
  /** True when everything verifies and shows the misbehaviour the kind names. */
  proven: boolean;
  /** What was checked and held. */
  findings: string[];
  /** What failed to verify or does not show misbehaviour. */
  problems: string[];
}

const KINDS: EvidenceKind[] = [
  'fork',
  'rollback',
  'append-only',
  'stale',
  'unexpected-change',
  'version-rollback',
];

function unreadable(message: string): AkdError {
  return new AkdError('DECODE_MALFORMED', `evidence: ${message}`);
}

function headOf(h: { epoch?: unknown; rootHash?: unknown } | undefined, i: number): Head {
  if (
    typeof h?.epoch !== 'string' ||
    !/^[0-9]{1,20}$/.test(h.epoch) ||
    typeof h.rootHash !== 'string'
  ) {
    throw unreadable(`heads[${i}]: expected {epoch, rootHash}`);
  }
  return { epoch: BigInt(h.epoch), rootHash: fromHex(h.rootHash, `heads[${i}].rootHash`) };
}

/**
 * Checks an evidence document.
 * @throws AkdError `DECODE_MALFORMED` when `doc` is not an evidence document.
 */
export function verifyEvidence(doc: unknown, codec: WitnessCodec = plexiCodec): EvidenceVerdict {
  const e = doc as Evidence;
  if (e === null || typeof e !== 'object' || e.format !== EVIDENCE_FORMAT || e.version !== 1) {
    throw unreadable(`not an ${EVIDENCE_FORMAT} document of version 1`);
  }
  if (!KINDS.includes(e.kind)) throw unreadable(`unknown kind '${String(e.kind)}'`);
  if (!Array.isArray(e.heads) || e.heads.length === 0) throw unreadable('heads: expected a list');
  let config: Configuration;
  let publicKey: Uint8Array;
  try {
    config = configurationByName(
      e.directory.configuration.name,
      e.directory.configuration.domainLabel ?? undefined,
    );
    publicKey = fromHex(e.directory.publicKey, 'directory.publicKey');
  } catch (x) {
    throw unreadable(`directory: ${(x as Error).message}`);
  }
  const heads = e.heads.map(headOf);
  const findings: string[] = [];
  const problems: string[] = [];
  const keys = (e.witnesses?.keys ?? []).map((k) => fromHex(k, 'witnesses.keys'));
  // every signature must be a trusted witness's, valid, on its head
  const timestamps = heads.map(() => [] as number[]);
  e.heads.forEach((h, i) => {
    (Array.isArray(h.witnesses) ? h.witnesses : []).forEach((json, j) => {
      const where = `heads[${i}].witnesses[${j}]`;
      try {
        const s = codec.parse(json);
        const key = keys.find((k) => k[31] === s.keyId && ok(() => codec.verify(s, k)));
        if (key === undefined) throw new Error('not a valid signature of a listed witness');
        if (s.namespace !== e.witnesses!.namespace) throw new Error(`namespace ${s.namespace}`);
        if (s.epoch !== heads[i]!.epoch || toHex(s.digest) !== toHex(heads[i]!.rootHash)) {
          throw new Error('signs another head');
        }
        timestamps[i]!.push(Number(s.timestamp));
        findings.push(
          `${where}: witness ${toHex(key)} signed epoch ${s.epoch} root ${toHex(s.digest)}`,
        );
      } catch (x) {
        problems.push(`${where}: ${(x as Error).message}`);
      }
    });
  });
  const [a, b] = heads;
  const need = (cond: boolean, yes: string, no: string) =>
    (cond ? findings : problems).push(cond ? yes : no);
  try {
    switch (e.kind) {
      case 'fork':
        need(
          b !== undefined && a!.epoch === b.epoch && toHex(a!.rootHash) !== toHex(b.rootHash),
          `two roots for epoch ${a!.epoch}`,
          'the heads are not two roots of one epoch',
        );
        break;
      case 'rollback':
        need(
          b !== undefined && b.epoch < a!.epoch,
          `epoch ${b?.epoch} served after ${a!.epoch}`,
          'the second head is not older',
        );
        break;
      case 'append-only':
        need(
          !appendOnlyHolds(config, e, a!, b),
          'the served append-only proof does not lead from the first head to the second',
          'the append-only proof verifies',
        );
        break;
      case 'stale': {
        const q = e.witnesses?.quorum ?? 1;
        const sorted = timestamps[0]!.sort((x, y) => y - x);
        const at = sorted[q - 1];
        const max = e.witnesses?.maxAgeMs;
        need(
          at !== undefined && typeof max === 'number' && e.detectedAt - at > max,
          `the newest quorum signed at ${at}, more than ${max} ms before ${e.detectedAt}`,
          'no quorum older than the maximum age',
        );
        break;
      }
      case 'unexpected-change': {
        const l = e.label!;
        const params: HistoryParams =
          l.history!.mostRecent === null
            ? { kind: 'complete' }
            : { kind: 'mostRecent', count: l.history!.mostRecent };
        const label = fromHex(l.hex, 'label.hex');
        const versions = keyHistoryVerify(
          config,
          publicKey,
          a!.rootHash,
          a!.epoch,
          label,
          decodeHistoryProof(fromBase64(l.history!.proof, 'history')),
          { historyParams: params },
        );
        findings.push(`the history proof of ${l.hex} verifies against epoch ${a!.epoch}`);
        const bad = versions.filter(
          (v) =>
            v.version > BigInt(l.versionSeen) &&
            !l.registered.includes(toHex(v.value)) &&
            (l.versionSeen !== '0' || v.version === versions[0]?.version),
        );
        need(
          bad.length > 0,
          `versions ${bad.map((v) => v.version).join(', ')} carry values not registered`,
          'every new version carries a registered value',
        );
        break;
      }
      case 'version-rollback': {
        const l = e.label!;
        const r = lookupVerify(
          config,
          publicKey,
          a!.rootHash,
          a!.epoch,
          fromHex(l.hex, 'label.hex'),
          decodeLookupProof(fromBase64(l.lookup!.proof, 'lookup')),
        );
        need(
          r.version < BigInt(l.versionSeen),
          `version ${r.version} proven after version ${l.versionSeen} was seen`,
          `version ${r.version} is not below ${l.versionSeen}`,
        );
        break;
      }
    }
  } catch (x) {
    problems.push(`${e.kind}: ${(x as Error).message}`);
  }
  return { kind: e.kind, proven: problems.length === 0, findings, problems };
}

function ok(f: () => void): boolean {
  try {
    f();
    return true;
  } catch {
    return false;
  }
}

/** True when the document's append-only ranges lead from `a` to `b`. */
function appendOnlyHolds(
  config: Configuration,
  e: Evidence,
  a: Head,
  b: Head | undefined,
): boolean {
  if (b === undefined || !Array.isArray(e.appendOnly) || e.appendOnly.length === 0) return true;
  let at = a;
  try {
    for (const r of e.appendOnly) {
      const to = BigInt(r.to);
      const root = verifyRange(
        config,
        at,
        to,
        decodeAppendOnlyProof(fromBase64(r.proof, 'appendOnly')),
        new Map(),
      );
      at = { epoch: to, rootHash: root };
    }
  } catch {
    return false;
  }
  return at.epoch === b.epoch && toHex(at.rootHash) === toHex(b.rootHash);
}
