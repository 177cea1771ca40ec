/**
 * Evidence: a self-contained JSON document of what a client caught a server doing, with
 * everything needed to check it offline (`verifyEvidence`, `akd verify evidence FILE`): the
 * directory's public key and configuration, the trusted witnesses, the heads in conflict with
 * the signatures relayed for each, and the proofs served (append-only ranges, a label's
 * history or lookup proof) as base64 of the bare protobuf messages.
 */

import { AkdError, toHex, type AkdErrorCode } from '@akd-ts/core';
import type { Head } from './state.js';
import type { WitnessPolicy } from './witness.js';

export const EVIDENCE_FORMAT = 'akd-evidence';

/** What the evidence shows. */
export type EvidenceKind =
  /** two roots for one epoch (heads[0] verified or witnessed, heads[1] the other) */
  | 'fork'
  /** heads[1] is older than heads[0], which the client verified before */
  | 'rollback'
  /** the served append-only proof does not lead from heads[0] to heads[1] */
  | 'append-only'
  /** heads[0]'s newest quorum of witness signatures is older than maxAgeMs at detectedAt */
  | 'stale'
  /** a version of an owned label with a value its owner did not register (history proof) */
  | 'unexpected-change'
  /** a label's proven version is below one the client saw before */
  | 'version-rollback';

/** A head and what was relayed or served with it. */
export interface EvidenceHead {
  epoch: string;
  rootHash: string;
  /** How the client had it: verified (by which basis), or as served by the server. */
  source: string;
  /** Witness signatures relayed with it, as relayed (Plexi JSON). */
  witnesses: unknown[];
}

/** The evidence document. */
export interface Evidence {
  format: typeof EVIDENCE_FORMAT;
  version: 1;
  kind: EvidenceKind;
  code: AkdErrorCode;
  message: string;
  /** When the client caught it, ms since 1970 (its clock). */
  detectedAt: number;
  directory: {
    server: string;
    publicKey: string;
    configuration: { name: string; domainLabel: string | null };
  };
  witnesses: { keys: string[]; quorum: number; namespace: string; maxAgeMs: number | null } | null;
  heads: EvidenceHead[];
  /** kind append-only: the ranges served, from heads[0]'s epoch on */
  appendOnly?: { from: string; to: string; proof: string }[];
  /** kinds unexpected-change and version-rollback */
  label?: {
    hex: string;
    /** owner: the values registered (hex) */
    registered: string[];
    /** the newest version the client had seen before */
    versionSeen: string;
    /** kind unexpected-change: the history proof (mostRecent null = complete), against heads[0] */
    history?: { mostRecent: number | null; proof: string };
    /** kind version-rollback: the lookup proof, against heads[0] */
    lookup?: { proof: string };
  };
}

/** An evidence head from a head and what came with it. */
export function evidenceHead(head: Head, source: string, witnesses: unknown[] = []): EvidenceHead {
  return { epoch: head.epoch.toString(), rootHash: toHex(head.rootHash), source, witnesses };
}

/** The `witnesses` field of evidence for `policy`. */
export function evidencePolicy(
  policy: WitnessPolicy | undefined,
  maxAgeMs: number | undefined,
): Evidence['witnesses'] {
  if (policy === undefined) return null;
  return {
    keys: policy.keys.map(toHex),
    quorum: policy.quorum,
    namespace: policy.namespace,
    maxAgeMs: maxAgeMs ?? null,
  };
}

/**
 * A client's check failed on what a server showed: the error's `code` says what (a
 * `CLIENT_*` code, or the `AUDIT_*` / `VERIFY_*` code of a proof that did not verify), and
 * `evidence` is the document to save and hand to others.
 */
export class EvidenceError extends AkdError {
  readonly evidence: Evidence;

  constructor(evidence: Evidence, cause?: unknown) {
    super(evidence.code, evidence.message, cause === undefined ? {} : { cause });
    this.name = 'EvidenceError';
    this.evidence = evidence;
  }
}

/** True when `e` is an EvidenceError. */
export function isEvidenceError(e: unknown): e is EvidenceError {
  return e instanceof EvidenceError;
}
