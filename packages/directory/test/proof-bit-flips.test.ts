// Single-bit flips of real lookup and history proofs, as the directory serves them, in both
// configurations: each flipped encoding is decoded and verified. The flips that still verify
// must be exactly the documented leniencies (README, "What the verifiers do not check"), each
// with the original result; every other flip must fail with an AkdError. Upstream 0.12's
// verifiers accept the same flips, and one kind more that this decoder refuses: a length of
// the last top-level message made to run past the end of the bytes (wire-check.ts).
//
// Every bit is flipped of every byte outside byte strings of 32 bytes or more (tags, lengths,
// varints, short labels: where bits have meanings of their own). Inside those (digests, VRF
// proofs, leaf labels, the nonce), each byte is flipped at one bit a fixed-seed generator
// picks: each of their bits feeds a hash or the VRF alike, and flipping all of them would
// take seconds of VRF work per proof. AKD_TEST_EVERY_BIT=1 flips every bit of those too.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isDeepStrictEqual } from 'node:util';
import type { DescMessage } from '@bufbuild/protobuf';
import {
  AkdError,
  decodeHistoryProof,
  decodeLookupProof,
  encodeHistoryProof,
  encodeLookupProof,
  keyHistoryVerify,
  lookupVerify,
  utf8,
  type HistoryProof,
  type LookupProof,
  type MembershipProof,
} from '@akd-ts/core';
import { HistoryProofSchema, LookupProofSchema } from '../../core/src/proto/gen/types_pb.js';
import { CONFIG_NAMES, openDirectory } from './support/build.js';
import { randomBytes } from './support/differential.js';
import { wireSites, type ByteSite } from './support/wire-sites.js';

const DIRECTION = 'a direction bit above the low four';
const ROOT_LABEL = 'the label of the outermost sibling proof';

/**
 * The leniency a flip of `bit` (0 = least significant) in a byte at `site` falls under, if
 * any. Both leave what the proof shows unchanged:
 * - a direction is read as `direction & 0x0F` (spec 15.4), so the decoded proof is the same;
 *   bit 7 would make the varint run into the next field;
 * - the outermost SiblingProof's label (the root's, in honest proofs) is never hashed (spec
 *   11.1); its `label_len` stays at most 127, a one-byte varint, unless bit 7 is flipped.
 */
function leniency(site: ByteSite, bit: number): string | undefined {
  if (site.part !== 'value' || bit === 7) return undefined;
  if (/sibling_proofs\[\d+\]\.direction$/.test(site.path) && bit >= 4) return DIRECTION;
  if (/sibling_proofs\[0\]\.label\.label_(len|val)$/.test(site.path)) return ROOT_LABEL;
  return undefined;
}

interface FlipReport {
  /** How many flips verified, by leniency. */
  accepted: Record<string, number>;
  /** How many flips failed, by error code. */
  rejected: Record<string, number>;
  /** Flips whose outcome is not the documented one. */
  unexpected: string[];
}

const EVERY_BIT = process.env.AKD_TEST_EVERY_BIT === '1';
/** Seeds the generator that picks a bit per byte of the long byte strings. */
const FLIP_SEED = 26;

/** The bits of a byte at `site` to flip (see the top of the file); `pick` draws one. */
function bitsToFlip(site: ByteSite, pick: () => number): number[] {
  if (EVERY_BIT || site.part !== 'value' || site.size < 32) return [0, 1, 2, 3, 4, 5, 6, 7];
  return [pick() & 7];
}

/** Flips the chosen bits of `bytes` one at a time and checks each outcome against `leniency`. */
function flipBits(
  schema: DescMessage,
  bytes: Uint8Array,
  verify: (bytes: Uint8Array) => unknown,
): FlipReport {
  const sites = wireSites(schema, bytes);
  const want = verify(bytes);
  const report: FlipReport = { accepted: {}, rejected: {}, unexpected: [] };
  const count = (tally: Record<string, number>, key: string) =>
    (tally[key] = (tally[key] ?? 0) + 1);
  const random = randomBytes(FLIP_SEED);
  const pick = () => random(1)[0]!;
  const flips = sites.flatMap((site, at) => bitsToFlip(site, pick).map((bit) => ({ at, bit })));
  for (const { at, bit } of flips) {
    const flipped = bytes.slice();
    flipped[at]! ^= 1 << bit;
    const site = sites[at]!;
    const where = `byte ${at} bit ${bit} (${site.path} ${site.part})`;
    const documented = leniency(site, bit);
    let got: unknown;
    try {
      got = verify(flipped);
    } catch (e) {
      if (!(e instanceof AkdError)) report.unexpected.push(`${where}: threw ${String(e)}`);
      else if (documented !== undefined) report.unexpected.push(`${where}: ${e.code}`);
      else count(report.rejected, e.code);
      continue;
    }
    if (documented === undefined) report.unexpected.push(`${where}: verified`);
    else if (!isDeepStrictEqual(got, want)) report.unexpected.push(`${where}: another result`);
    else count(report.accepted, documented);
  }
  return report;
}

/** Every membership path in a lookup or history proof, the non-membership ones' included. */
function membershipProofs(proof: LookupProof | HistoryProof): MembershipProof[] {
  if ('freshnessProof' in proof) {
    const { existenceProof, markerProof, freshnessProof } = proof;
    return [existenceProof, markerProof, freshnessProof.longestPrefixMembershipProof];
  }
  return [
    ...proof.updateProofs.flatMap((u) => [u.existenceProof, u.previousVersionProof ?? []].flat()),
    ...proof.existenceOfPastMarkerProofs,
    ...proof.nonExistenceOfFutureMarkerProofs.map((n) => n.longestPrefixMembershipProof),
  ];
}

for (const name of CONFIG_NAMES) {
  test(`${name}: a flipped bit of a lookup or history proof verifies only where documented`, async (t) => {
    const { dir, config } = await openDirectory(name);
    const label = utf8('a');
    // version 2: a stale leaf beside two fresh ones, so paths have two and three levels
    await dir.publish([{ label, value: utf8('a1') }]);
    await dir.publish([{ label, value: utf8('a2') }]);
    const pk = dir.getPublicKey();
    const lookup = await dir.lookup(label);
    const params = { kind: 'mostRecent', count: 1 } as const;
    const history = await dir.keyHistory(label, params);
    await dir.close();
    const { hash, epoch } = lookup.epochHash;
    assert.deepEqual(history.epochHash, lookup.epochHash);

    const cases = [
      {
        proof: 'lookup',
        paths: membershipProofs(lookup.proof),
        report: flipBits(LookupProofSchema, encodeLookupProof(lookup.proof), (b) =>
          lookupVerify(config, pk, hash, epoch, label, decodeLookupProof(b)),
        ),
      },
      {
        proof: 'history',
        paths: membershipProofs(history.proof),
        report: flipBits(HistoryProofSchema, encodeHistoryProof(history.proof), (b) =>
          keyHistoryVerify(config, pk, hash, epoch, label, decodeHistoryProof(b), {
            historyParams: params,
          }),
        ),
      },
    ];
    for (const { proof, paths, report } of cases) {
      t.diagnostic(`${proof}: accepted ${JSON.stringify(report.accepted)}`);
      t.diagnostic(`${proof}: rejected ${JSON.stringify(report.rejected)}`);
      assert.deepEqual(report.unexpected, [], `${proof}: flips with an undocumented outcome`);
      // Each level's direction has three such bits, and each path's root label (length 0,
      // no label_val bytes) seven.
      const levels = paths.map((p) => p.siblingProofs.length);
      assert.ok(
        levels.some((n) => n > 1),
        `${proof}: a path of more than one level`,
      );
      assert.deepEqual(report.accepted, {
        [DIRECTION]: 3 * levels.reduce((a, b) => a + b, 0),
        [ROOT_LABEL]: 7 * levels.filter((n) => n > 0).length,
      });
    }
  });
}
