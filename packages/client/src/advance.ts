/**
 * Moving a client from its last verified head to the head a server serves now, or refusing
 * to. An older epoch is a rollback and another root for a verified epoch a fork; a newer head
 * must be proven to extend the last one by the server's append-only proof, or, when the
 * server cannot serve one, by a quorum of trusted witnesses signing it. With witnesses
 * configured, a quorum must also have signed a head on the verified chain (the served one or
 * one passed on the way), no trusted witness may have signed another root for any epoch of
 * it (that is how a split view shows), and the quorum must be younger than the maximum age.
 */

import { AkdError, bytesEqual, isAkdError, toHex } from '@akd-ts/core';
import { AppendOnlyFailure, proveAppendOnly, type AppendOnlyRange } from './append-only.js';
import { EvidenceError, evidenceHead, type Evidence, type EvidenceHead } from './evidence.js';
import { toBase64 } from './http.js';
import type { ClientContext } from './context.js';
import type { Head, HeadBasis, VerifiedHead } from './state.js';
import { quorumError, readWitnesses } from './witness.js';

/** What a server serves as its current head. */
export interface ServedHead extends Head {
  /** Witness signatures relayed with it (Plexi JSON), as served. */
  witnesses: unknown[];
}

/** Evidence of `kind` about heads `a` and `b`. */
function evidence(
  ctx: ClientContext,
  kind: Evidence['kind'],
  code: Evidence['code'],
  message: string,
  heads: EvidenceHead[],
  extra: Partial<Evidence> = {},
): EvidenceError {
  return new EvidenceError({ ...ctx.evidenceBase(kind, code, message), heads, ...extra });
}

function rangesJson(ranges: AppendOnlyRange[]): Evidence['appendOnly'] {
  return ranges.map((r) => ({
    from: r.from.toString(),
    to: r.to.toString(),
    proof: toBase64(r.proof),
  }));
}

/**
 * The head the client verifies `served` to be, from `last` (undefined on first use).
 * @throws EvidenceError for a rollback, a fork, a failing append-only proof or a stale head;
 * AkdError `CLIENT_NOT_EXTENDED` / `CLIENT_WITNESS_QUORUM` when nothing proves the head.
 */
export async function advance(
  ctx: ClientContext,
  last: VerifiedHead | undefined,
  served: ServedHead,
): Promise<VerifiedHead> {
  const servedEv = () => evidenceHead(served, 'served', signing(ctx, served, served.witnesses));
  const lastEv = (h: VerifiedHead) => evidenceHead(h, `verified (${h.basis})`);
  const start: VerifiedHead | undefined =
    last ?? (ctx.trust && { ...ctx.trust, verifiedAt: ctx.now(), basis: 'trusted' });
  let known = new Map<bigint, Uint8Array>([[served.epoch, served.rootHash]]);
  let basis: HeadBasis = 'first-use';
  let unproven: AkdError | undefined;
  if (start !== undefined) {
    if (served.epoch < start.epoch) {
      throw evidence(
        ctx,
        'rollback',
        'CLIENT_ROLLBACK',
        `the server serves epoch ${served.epoch}, older than the verified epoch ${start.epoch}`,
        [lastEv(start), servedEv()],
      );
    }
    if (served.epoch === start.epoch) {
      if (!bytesEqual(served.rootHash, start.rootHash)) {
        throw evidence(
          ctx,
          'fork',
          'CLIENT_FORK',
          `the server serves root ${toHex(served.rootHash)} for epoch ${served.epoch}, verified as ${toHex(start.rootHash)}`,
          [lastEv(start), servedEv()],
        );
      }
      basis = start.basis === 'trusted' && last === undefined ? 'trusted' : 'same';
    } else {
      try {
        known = (
          await proveAppendOnly(
            ctx.fetch,
            ctx.server,
            ctx.config,
            start,
            served,
            ctx.maxAuditEpochs,
          )
        ).roots;
        basis = 'append-only';
      } catch (e) {
        if (e instanceof AppendOnlyFailure) {
          throw evidence(
            ctx,
            'append-only',
            e.code,
            `the append-only proof from epoch ${start.epoch} to ${served.epoch} does not verify: ${e.message}`,
            [lastEv(start), servedEv()],
            { appendOnly: rangesJson(e.ranges) },
          );
        }
        if (!isAkdError(e) || ctx.witnesses === undefined) throw notExtended(start, served, e);
        // no proof to be had: witnesses alone may vouch for the served head
        unproven = e;
        known.set(start.epoch, start.rootHash);
        basis = 'witnesses';
      }
    }
  }
  const head: VerifiedHead = {
    epoch: served.epoch,
    rootHash: served.rootHash,
    verifiedAt: ctx.now(),
    basis,
  };
  if (ctx.witnesses === undefined) return head;
  const reading = readWitnesses(ctx.codec(), ctx.witnesses, served.witnesses, known);
  if (reading.conflict) {
    const { known: k, witness } = reading.conflict;
    const mine = bytesEqual(k.rootHash, served.rootHash)
      ? servedEv()
      : evidenceHead(k, 'verified (append-only)');
    throw evidence(
      ctx,
      'fork',
      'CLIENT_FORK',
      `a trusted witness signed root ${toHex(witness.signature.digest)} for epoch ${k.epoch}, not ${toHex(k.rootHash)}`,
      [
        mine,
        evidenceHead({ epoch: k.epoch, rootHash: witness.signature.digest }, 'witnessed', [
          witness.json,
        ]),
      ],
    );
  }
  const covered = reading.covered;
  if (covered === undefined || (unproven !== undefined && covered.head.epoch !== served.epoch)) {
    if (unproven !== undefined) throw notExtended(start!, served, unproven);
    throw quorumError(ctx.witnesses, reading, served);
  }
  if (start === undefined) head.basis = 'witnesses';
  head.witnessedAt = covered.witnessedAt;
  const age = ctx.now() - covered.witnessedAt;
  if (ctx.maxAgeMs !== undefined && age > ctx.maxAgeMs) {
    throw evidence(
      ctx,
      'stale',
      'CLIENT_STALE_HEAD',
      `the newest head a quorum of witnesses signed (epoch ${covered.head.epoch}) is ${Math.round(age / 1000)} s old, over the ${Math.round(ctx.maxAgeMs / 1000)} s allowed`,
      [
        evidenceHead(
          covered.head,
          'witnessed',
          covered.witnesses.map((w) => w.json),
        ),
      ],
    );
  }
  return head;
}

/** The relayed signatures that sign `head` itself (evidence carries no others with it). */
function signing(ctx: ClientContext, head: Head, relayed: unknown[]): unknown[] {
  if (ctx.witnesses === undefined) return [];
  const codec = ctx.codec();
  return relayed.filter((json) => {
    try {
      const s = codec.parse(json);
      return s.epoch === head.epoch && bytesEqual(s.digest, head.rootHash);
    } catch {
      return false;
    }
  });
}

function notExtended(start: Head, served: Head, cause: unknown): AkdError {
  return new AkdError(
    'CLIENT_NOT_EXTENDED',
    `nothing proves epoch ${served.epoch} extends the verified epoch ${start.epoch}: ${(cause as Error).message}`,
    { cause },
  );
}
