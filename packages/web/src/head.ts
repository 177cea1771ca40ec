/**
 * What the page says about the head it remembers, without the DOM: the witnesses a person
 * trusts (typed into the page and kept in the browser's storage), a refresh's outcome as a
 * verdict, the witness signatures the server relayed with their age and validity, and the
 * evidence file to download when the server was caught. The checks themselves are
 * @akd-ts/client's (`AkdClient.refresh`); this only words their results.
 */

import {
  AkdError,
  bytesEqual,
  fromHex,
  parseWitnessSignature,
  toHex,
  verifyWitnessSignature,
  type WitnessSignature,
} from '@akd-ts/core';
import {
  isEvidenceError,
  type Evidence,
  type HeadUpdate,
  type WebStorageLike,
  type WitnessPolicy,
} from '@akd-ts/client';

/** Where the page keeps its client state and the witness settings in the browser's storage. */
export const STATE_KEY = 'akd-page-state';
export const WITNESS_KEY = 'akd-page-witnesses';

/** The witnesses a person trusts, as typed: keys (hex), quorum, namespace, maximum age (h). */
export interface WitnessSettings {
  keys: string[];
  quorum: number;
  namespace: string;
  /** Hours; 0 for no limit. */
  maxAgeHours: number;
}

/** A policy for the client, with its maximum age in ms (undefined: none). */
export interface ClientPolicy {
  witnesses: WitnessPolicy;
  maxAgeMs: number | undefined;
}

/**
 * Witness settings from the form's text: keys one per line (or separated by spaces or
 * commas), 64 hex digits each.
 * @throws AkdError `DECODE_INVALID_VALUE` naming the field that is wrong
 */
export function parseWitnessSettings(form: {
  keys: string;
  quorum: string;
  namespace: string;
  maxAgeHours: string;
}): WitnessSettings {
  const bad = (field: string, message: string) =>
    new AkdError('DECODE_INVALID_VALUE', message, { field });
  const keys = form.keys
    .split(/[\s,]+/)
    .filter((k) => k !== '')
    .map((k) => k.toLowerCase());
  if (keys.length === 0) throw bad('keys', 'give at least one witness public key');
  for (const k of keys) {
    if (!/^[0-9a-f]{64}$/.test(k)) {
      throw bad('keys', `a witness public key is 64 hex digits (32 bytes): ${k.slice(0, 80)}`);
    }
  }
  const quorum = form.quorum.trim() === '' ? 1 : Number(form.quorum);
  if (!Number.isInteger(quorum) || quorum < 1 || quorum > keys.length) {
    throw bad('quorum', `the quorum is a whole number from 1 to ${keys.length}`);
  }
  const namespace = form.namespace.trim();
  if (namespace === '') throw bad('namespace', 'give the namespace the witnesses sign under');
  const maxAgeHours = form.maxAgeHours.trim() === '' ? 0 : Number(form.maxAgeHours);
  if (!Number.isFinite(maxAgeHours) || maxAgeHours < 0) {
    throw bad('maxAgeHours', 'the maximum age is a number of hours (0 or empty for none)');
  }
  return { keys: [...new Set(keys)], quorum, namespace, maxAgeHours };
}

/** The saved witness settings (undefined when none, or when what is saved is not settings). */
export function loadWitnessSettings(storage: WebStorageLike): WitnessSettings | undefined {
  const text = storage.getItem(WITNESS_KEY);
  if (text === null) return undefined;
  try {
    const s = JSON.parse(text) as Record<string, unknown>;
    return parseWitnessSettings({
      keys: Array.isArray(s.keys) ? s.keys.join('\n') : '',
      quorum: String(s.quorum),
      namespace: String(s.namespace),
      maxAgeHours: String(s.maxAgeHours),
    });
  } catch {
    return undefined; // settings from an older page, or edited by hand: as if none
  }
}

/** The client's policy for `settings`. */
export function clientPolicy(settings: WitnessSettings): ClientPolicy {
  return {
    witnesses: {
      keys: settings.keys.map((k) => fromHex(k)),
      quorum: settings.quorum,
      namespace: settings.namespace,
    },
    maxAgeMs: settings.maxAgeHours > 0 ? settings.maxAgeHours * 3_600_000 : undefined,
  };
}

/** A length of time in words, rounded down: `45 s`, `12 min`, `5 h`, `3 days`. */
export function ageText(ms: number): string {
  const s = Math.floor(Math.abs(ms) / 1000);
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min`;
  if (s < 172_800) return `${Math.floor(s / 3600)} h`;
  return `${Math.floor(s / 86_400)} days`;
}

/** The page's verdict on the head. */
export interface HeadVerdict {
  kind: 'verified' | 'first-use' | 'failed' | 'error';
  headline: string;
  reason?: string;
  /** The error code of a failure. */
  code?: string;
  /** When the server was caught: the evidence to download. */
  evidence?: Evidence;
}

const DATE = (ms: number) =>
  new Date(ms)
    .toISOString()
    .replace('T', ' ')
    .replace(/\.\d+Z$/, ' UTC');

/** Words for a refresh that succeeded. */
export function headVerdict(update: HeadUpdate): HeadVerdict {
  const { previous, head } = update;
  const since =
    previous === undefined
      ? ''
      : `epoch ${previous.epoch}, which this browser verified on ${DATE(previous.verifiedAt)}`;
  switch (head.basis) {
    case 'first-use':
      return {
        kind: 'first-use',
        headline: `First visit: this browser now remembers epoch ${head.epoch}`,
        reason:
          'Trusted on first use: there is nothing to compare it with yet. From the next visit on, the page proves that every new head extends this one.',
      };
    case 'same':
      return {
        kind: 'verified',
        headline: `✔ Same head as on your last visit: epoch ${head.epoch}`,
        reason: `The server still serves the root hash this browser verified (${since}).`,
      };
    case 'append-only':
      return {
        kind: 'verified',
        headline: `✔ Epoch ${head.epoch} extends your last visit's epoch ${previous?.epoch}`,
        reason: `The server's append-only proof from ${since} verified: nothing was removed or changed, only added.`,
      };
    case 'witnesses':
      return {
        kind: 'verified',
        headline: `✔ Epoch ${head.epoch} is signed by your trusted witnesses`,
        reason:
          previous === undefined
            ? 'A quorum of the witnesses you trust signed this root hash.'
            : `No append-only proof could be had from ${since}; a quorum of the witnesses you trust signed this root hash instead.`,
      };
    default:
      return { kind: 'verified', headline: `✔ Epoch ${head.epoch} is trusted` };
  }
}

const CAUGHT: Record<string, string> = {
  fork: 'FORK',
  rollback: 'ROLLBACK',
  'append-only': 'NOT an extension of your last visit',
  stale: 'STALE head',
};

/** Words for a refresh that failed: the server caught (with evidence), or no verdict. */
export function headFailure(e: unknown): HeadVerdict {
  if (isEvidenceError(e)) {
    const kind = e.evidence.kind;
    return {
      kind: 'failed',
      headline: `✘ ${CAUGHT[kind] ?? kind}: ${e.code}`,
      reason: `${e.message}. Do not trust this server's answers: download the evidence and hand it to whoever audits this directory (akd verify evidence FILE checks it).`,
      code: e.code,
      evidence: e.evidence,
    };
  }
  const code = e instanceof AkdError ? e.code : 'ERROR';
  return {
    kind: 'error',
    headline: `✘ Could not verify the server's head: ${code}`,
    code,
    reason: (e as Error)?.message ?? String(e),
  };
}

/** The evidence file's name and text. */
export function evidenceFile(evidence: Evidence): { name: string; text: string } {
  const epoch = evidence.heads[evidence.heads.length - 1]?.epoch ?? 'unknown';
  return {
    name: `akd-evidence-${evidence.kind}-epoch-${epoch}.json`,
    text: `${JSON.stringify(evidence, null, 2)}\n`,
  };
}

/** One relayed witness signature, as the page shows it. */
export interface WitnessRow {
  /** `valid`: a trusted key's; `invalid`: no trusted key's; `unchecked`: no keys set. */
  status: 'valid' | 'invalid' | 'unchecked' | 'unreadable';
  text: string;
}

/** The trusted key (hex) whose signature `s` is, if any (Plexi's key id: the last byte). */
function trustedSigner(s: WitnessSignature, policy: WitnessPolicy): string | undefined {
  for (const key of policy.keys) {
    if (key[31] !== s.keyId) continue;
    try {
      verifyWitnessSignature(s, key);
      return toHex(key);
    } catch {
      // another key with the same last byte may have signed it
    }
  }
  return undefined;
}

/**
 * The relayed signatures of `GET /v1/epoch` for display: who signed which epoch, when, and
 * whether the signature is a trusted witness's and of the served root.
 */
export function witnessRows(
  relayed: unknown[],
  served: { epoch: bigint; rootHash: Uint8Array },
  policy: WitnessPolicy | undefined,
  now: number,
): WitnessRow[] {
  return relayed.map((json) => {
    let s: WitnessSignature;
    try {
      s = parseWitnessSignature(json);
    } catch (e) {
      return { status: 'unreadable', text: `Unreadable signature: ${(e as Error).message}` };
    }
    const ms = Number(s.timestamp);
    const when =
      ms <= now
        ? `signed ${ageText(now - ms)} ago (${DATE(ms)})`
        : `dated ${ageText(ms - now)} in the future (${DATE(ms)})`;
    const what =
      s.epoch === served.epoch
        ? bytesEqual(s.digest, served.rootHash)
          ? `epoch ${s.epoch}, the served root hash`
          : `epoch ${s.epoch}, ANOTHER root hash ${toHex(s.digest)}`
        : `epoch ${s.epoch} (root hash ${toHex(s.digest)})`;
    const about = `Witness key id ${s.keyId}, namespace '${s.namespace}', ciphersuite 0x000${s.ciphersuite}: ${what}, ${when}`;
    if (policy === undefined) {
      return { status: 'unchecked', text: `${about}. Not checked: no trusted witness keys set.` };
    }
    if (s.namespace !== policy.namespace) {
      return { status: 'invalid', text: `${about}. ✘ Not the namespace you trust.` };
    }
    const key = trustedSigner(s, policy);
    return key === undefined
      ? { status: 'invalid', text: `${about}. ✘ Not a valid signature of a trusted witness.` }
      : { status: 'valid', text: `${about}. ✔ Valid signature of trusted key ${key}.` };
  });
}
