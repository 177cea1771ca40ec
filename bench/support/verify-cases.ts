/**
 * The verification benchmark's cases, built from one upstream vector file and the spec 10.5
 * audit example. Browser-safe (imports only core and browser-safe test modules) so that Node
 * and Chromium time exactly the same calls.
 */

import {
  VersionFreshness,
  VrfPublicKey,
  auditVerify,
  configurationByName,
  decodeAppendOnlyProof,
  decodeHistoryProof,
  decodeLookupProof,
  fromHex,
  keyHistoryVerify,
  lookupVerify,
  markerVersion,
  membershipRootValue,
  verifyVrfLabel,
  type HistoryProof,
  type LookupProof,
  type MembershipProof,
} from '@akd-ts/core';
import type { VectorInputs } from '../../test/support/mutations.js';
import type { AuditExample } from '../../test/support/audit-example.js';

export interface BenchCase {
  /** Stable identifier (JSON output). */
  id: string;
  /** What a reader sees in the table. */
  label: string;
  fn: () => unknown;
  /** Divide the time per call by this to get the time per unit (e.g. per path level). */
  units?: number;
  /** VRF verifications and membership-path levels one call performs (for the model). */
  vrfs?: number;
  levels?: number;
}

const levelsOf = (p: MembershipProof) => p.siblingProofs.length;

function lookupWork(p: LookupProof) {
  return {
    vrfs: 3,
    levels:
      levelsOf(p.existenceProof) +
      levelsOf(p.markerProof) +
      levelsOf(p.freshnessProof.longestPrefixMembershipProof),
  };
}

function historyWork(p: HistoryProof) {
  let vrfs = p.pastMarkerVrfProofs.length + p.futureMarkerVrfProofs.length;
  let levels = 0;
  for (const u of p.updateProofs) {
    vrfs += 1 + (u.previousVersionVrfProof ? 1 : 0);
    levels +=
      levelsOf(u.existenceProof) + (u.previousVersionProof ? levelsOf(u.previousVersionProof) : 0);
  }
  for (const m of p.existenceOfPastMarkerProofs) levels += levelsOf(m);
  for (const n of p.nonExistenceOfFutureMarkerProofs)
    levels += levelsOf(n.longestPrefixMembershipProof);
  return { vrfs, levels };
}

/** Facts about the benchmarked proofs, for the report. */
export interface CaseInfo {
  lookupProofBytes: number;
  lookupVrfs: number;
  lookupLevels: number;
  historyCompleteBytes: number;
  historyMostRecent1Bytes: number;
  auditProofBytes: number;
}

/**
 * The cases for one configuration. Every case is run once first, so a proof that does not
 * verify fails the benchmark instead of timing an error path.
 */
export function verifyCases(
  v: VectorInputs,
  audit: AuditExample,
): { cases: BenchCase[]; info: CaseInfo } {
  const config = configurationByName(v.configuration);
  const lookup = decodeLookupProof(v.lookupProof);
  const complete = decodeHistoryProof(v.historyComplete);
  const mostRecent1 = decodeHistoryProof(v.historyMostRecent1);
  const auditBytes = fromHex(audit.proof);
  const auditProof = decodeAppendOnlyProof(auditBytes);
  const roots = [fromHex(audit.root1), fromHex(audit.root2)];
  const key = VrfPublicKey.fromBytes(v.publicKey);
  const run = (p: LookupProof, k: VrfPublicKey | Uint8Array = v.publicKey) =>
    lookupVerify(config, k, v.epochHash, v.epoch, v.label, p);
  const history = (p: HistoryProof, params: Parameters<typeof keyHistoryVerify>[6]) =>
    keyHistoryVerify(config, v.publicKey, v.epochHash, v.epoch, v.label, p, params);
  const lw = lookupWork(lookup);
  const path = lookup.existenceProof;
  // the three label checks of a lookup (spec 11.3): existence, marker, stale-leaf absence
  const vrfChecks = (
    [
      [VersionFreshness.Fresh, lookup.version, lookup.existenceVrfProof, path.label],
      [
        VersionFreshness.Fresh,
        markerVersion(lookup.version),
        lookup.markerVrfProof,
        lookup.markerProof.label,
      ],
      [
        VersionFreshness.Stale,
        lookup.version,
        lookup.freshnessVrfProof,
        lookup.freshnessProof.label,
      ],
    ] as const
  ).map(
    ([freshness, version, proof, claimed]) =>
      (k: VrfPublicKey) =>
        verifyVrfLabel(config, k, v.label, freshness, version, proof, claimed),
  );

  const cases: BenchCase[] = [
    {
      id: 'lookup',
      label: `lookup verify, key as bytes (${v.lookupProof.length} B proof)`,
      fn: () => run(lookup),
      ...lw,
    },
    {
      id: 'lookup-parsed-key',
      label: 'lookup verify, key parsed once (VrfPublicKey)',
      fn: () => run(lookup, key),
    },
    {
      id: 'lookup-fresh-key',
      label: 'lookup verify, fresh key object (parse + table)',
      fn: () => run(lookup, VrfPublicKey.fromBytes(v.publicKey)),
    },
    {
      id: 'lookup-decode-verify',
      label: 'lookup decode + verify',
      fn: () => run(decodeLookupProof(v.lookupProof)),
    },
    {
      id: 'history-complete',
      label: `history verify, Complete (${complete.updateProofs.length} versions)`,
      fn: () => history(complete, { historyParams: { kind: 'complete' } }),
      ...historyWork(complete),
    },
    {
      id: 'history-most-recent-1',
      label: 'history verify, MostRecent(1)',
      fn: () => history(mostRecent1, { historyParams: { kind: 'mostRecent', count: 1 } }),
      ...historyWork(mostRecent1),
    },
    {
      id: 'audit',
      label: `audit verify (spec 10.5, ${auditBytes.length} B proof)`,
      fn: () => auditVerify(config, roots, auditProof),
    },
    {
      id: 'vrf-verify',
      label: "one VRF verification (mean of the lookup's 3)",
      fn: () => vrfChecks.map((check) => check(key)),
      units: vrfChecks.length,
    },
    {
      id: 'vrf-verify-fresh-key',
      label: 'one VRF verification, fresh key object (+ parse, table)',
      fn: () => vrfChecks[0]!(VrfPublicKey.fromBytes(v.publicKey)),
    },
    {
      id: 'path-level',
      label: `membership path, per level (${levelsOf(path)}-level path / ${levelsOf(path)})`,
      fn: () => membershipRootValue(config, path),
      units: levelsOf(path),
    },
    {
      id: 'decode-lookup',
      label: 'lookup proof decode',
      fn: () => decodeLookupProof(v.lookupProof),
    },
  ];
  for (const c of cases) c.fn();
  return {
    cases,
    info: {
      lookupProofBytes: v.lookupProof.length,
      lookupVrfs: lw.vrfs,
      lookupLevels: lw.levels,
      historyCompleteBytes: v.historyComplete.length,
      historyMostRecent1Bytes: v.historyMostRecent1.length,
      auditProofBytes: auditBytes.length,
    },
  };
}

/**
 * Decodes and verifies the lookup proof once, timed: in a fresh process or page this is what
 * a client verifying a single proof waits for (cold JIT, key parsing, the key's table).
 */
export function firstLookupMs(v: VectorInputs): number {
  const t0 = performance.now();
  lookupVerify(
    configurationByName(v.configuration),
    v.publicKey,
    v.epochHash,
    v.epoch,
    v.label,
    decodeLookupProof(v.lookupProof),
  );
  return performance.now() - t0;
}
