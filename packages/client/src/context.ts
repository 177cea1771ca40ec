/**
 * What the parts of a client share: the server, its configuration and key once known, the
 * policy (trust anchor, witnesses, maximum age), the clock and `fetch`.
 */

import type { AkdErrorCode, Configuration } from '@akd-ts/core';
import { EVIDENCE_FORMAT, evidencePolicy, type Evidence } from './evidence.js';
import type { FetchLike } from './http.js';
import type { Head } from './state.js';
import type { WitnessCodec, WitnessPolicy } from './witness.js';

export interface ClientContext {
  server: string;
  fetch: FetchLike;
  now: () => number;
  config: Configuration;
  publicKey: Uint8Array;
  configuration: { name: string; domainLabel: string | null };
  trust: Head | undefined;
  witnesses: WitnessPolicy | undefined;
  maxAgeMs: number | undefined;
  maxAuditEpochs: number;
  codec(): WitnessCodec;
  evidenceBase(
    kind: Evidence['kind'],
    code: AkdErrorCode,
    message: string,
  ): Omit<Evidence, 'heads'>;
}

/** The parts of evidence every kind has. */
export function evidenceBase(
  ctx: Omit<ClientContext, 'evidenceBase'>,
  kind: Evidence['kind'],
  code: AkdErrorCode,
  message: string,
): Omit<Evidence, 'heads'> {
  return {
    format: EVIDENCE_FORMAT,
    version: 1,
    kind,
    code,
    message,
    detectedAt: ctx.now(),
    directory: {
      server: ctx.server,
      publicKey: Array.from(ctx.publicKey, (b) => b.toString(16).padStart(2, '0')).join(''),
      configuration: ctx.configuration,
    },
    witnesses: evidencePolicy(ctx.witnesses, ctx.maxAgeMs),
  };
}
