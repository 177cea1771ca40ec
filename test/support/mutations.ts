/**
 * Named adversarial mutations of upstream's lookup and history proofs, shared by the Node test
 * and the in-browser test (so this module imports nothing but core). Each mutation starts from
 * a freshly decoded proof, changes one thing, and verification must fail with the error code
 * the tables below expect for it (the check that catches that change).
 */

import {
  AkdError,
  ExperimentalConfiguration,
  NodeLabel,
  WhatsAppV1Configuration,
  decodeHistoryProof,
  decodeLookupProof,
  keyHistoryVerify,
  lookupVerify,
  utf8,
  vrfPublicKeyFromSecret,
  type Configuration,
  type HistoryProof,
  type HistoryVerificationParams,
  type LookupProof,
  type MembershipProof,
  type VerifyResult,
} from '@akd-ts/core';

/** The inputs of a vector file, as plain bytes. */
export interface VectorInputs {
  configuration: 'whatsapp_v1' | 'experimental';
  publicKey: Uint8Array;
  epochHash: Uint8Array;
  epoch: bigint;
  label: Uint8Array;
  lookupProof: Uint8Array;
  historyMostRecent1: Uint8Array;
  historyComplete: Uint8Array;
}

/** What one verification call is given. */
interface Call {
  config: Configuration;
  publicKey: Uint8Array;
  root: Uint8Array;
  epoch: bigint;
  label: Uint8Array;
}

export function configFor(name: VectorInputs['configuration']): Configuration {
  return name === 'whatsapp_v1' ? new WhatsAppV1Configuration() : new ExperimentalConfiguration();
}

function flipBit(bytes: Uint8Array, bit = 0): Uint8Array {
  const out = bytes.slice();
  out[bit >> 3]! ^= 1 << (bit & 7);
  return out;
}

function flipLabel(label: NodeLabel): NodeLabel {
  return new NodeLabel(flipBit(label.val, label.len > 0 ? 7 : 0), label.len);
}

function lastSibling(proof: MembershipProof) {
  return proof.siblingProofs[proof.siblingProofs.length - 1]!;
}

/** An unrelated but valid VRF public key. */
const OTHER_KEY = vrfPublicKeyFromSecret(new Uint8Array(32).fill(7));

/** Returns the mutated proof or bytes, or null when the mutation does not apply to this proof. */
type Mutation<P> = (
  proof: P,
  call: Call,
  bytes: Uint8Array,
) => { proof?: P; bytes?: Uint8Array } | null;

const lookupMutations = {
  'flipped bit in a sibling hash': (p) => {
    const s = p.existenceProof.siblingProofs[2]!.siblings[0];
    s.value = flipBit(s.value, 100);
    return { proof: p };
  },
  'flipped bit in a sibling label': (p) => {
    const s = lastSibling(p.existenceProof).siblings[0];
    s.label = flipLabel(s.label);
    return { proof: p };
  },
  'wrong direction': (p) => {
    const sp = p.existenceProof.siblingProofs[1]!;
    sp.direction = sp.direction === 0 ? 1 : 0;
    return { proof: p };
  },
  'truncated sibling list': (p) => {
    p.existenceProof.siblingProofs.shift();
    return { proof: p };
  },
  'dropped leaf-most sibling': (p) => {
    p.markerProof.siblingProofs.pop();
    return { proof: p };
  },
  'swapped root': (p, call) => {
    call.root = flipBit(call.root, 3);
    return { proof: p };
  },
  'wrong epoch in the proof': (p) => {
    p.epoch -= 1n;
    return { proof: p };
  },
  'epoch+1 in the proof': (p) => {
    p.epoch += 1n;
    return { proof: p };
  },
  'current epoch below the version': (p, call) => {
    call.epoch = p.version - 1n;
    return { proof: p };
  },
  'wrong label': (p, call) => {
    call.label = utf8('17');
    return { proof: p };
  },
  'wrong public key': (p, call) => {
    call.publicKey = OTHER_KEY;
    return { proof: p };
  },
  'wrong value': (p) => {
    p.value = utf8('16,47');
    return { proof: p };
  },
  'wrong version': (p) => {
    p.version -= 1n;
    return { proof: p };
  },
  'version 0': (p) => {
    p.version = 0n;
    return { proof: p };
  },
  'flipped bit in the commitment nonce': (p) => {
    p.commitmentNonce = flipBit(p.commitmentNonce);
    return { proof: p };
  },
  'flipped bit in the existence VRF proof': (p) => {
    p.existenceVrfProof = flipBit(p.existenceVrfProof, 300);
    return { proof: p };
  },
  'marker VRF proof of another version': (p) => {
    p.markerVrfProof = p.existenceVrfProof;
    return { proof: p };
  },
  'dropped marker (existence proof in its place)': (p) => {
    p.markerProof = p.existenceProof;
    p.markerVrfProof = p.existenceVrfProof;
    return { proof: p };
  },
  'freshness proof for the fresh leaf': (p) => {
    p.freshnessVrfProof = p.existenceVrfProof;
    return { proof: p };
  },
  'wrong longest prefix': (p) => {
    p.freshnessProof.longestPrefix = flipLabel(p.freshnessProof.longestPrefix);
    return { proof: p };
  },
  'swapped longest-prefix children': (p) => {
    const [a, b] = p.freshnessProof.longestPrefixChildren;
    p.freshnessProof.longestPrefixChildren = [b, a];
    return { proof: p };
  },
  'flipped bit in a longest-prefix child': (p) => {
    const c = p.freshnessProof.longestPrefixChildren[1];
    c.value = flipBit(c.value, 9);
    return { proof: p };
  },
  'truncated message': (_p, _c, bytes) => ({ bytes: bytes.subarray(0, bytes.length - 7) }),
  'flipped bit in the encoding': (_p, _c, bytes) => ({ bytes: flipBit(bytes, 8 * 600 + 1) }),
} satisfies Record<string, Mutation<LookupProof>>;

/** The codes each lookup mutation may fail with: the check that must catch it. */
const LOOKUP_EXPECTED: Record<keyof typeof lookupMutations, readonly string[]> = {
  'flipped bit in a sibling hash': ['VERIFY_ROOT_MISMATCH'],
  'flipped bit in a sibling label': ['VERIFY_ROOT_MISMATCH'],
  'wrong direction': ['VERIFY_ROOT_MISMATCH'],
  'truncated sibling list': ['VERIFY_ROOT_MISMATCH'],
  'dropped leaf-most sibling': ['VERIFY_ROOT_MISMATCH'],
  'swapped root': ['VERIFY_ROOT_MISMATCH'],
  // the epoch is hashed into the leaf, with the value
  'wrong epoch in the proof': ['VERIFY_VALUE_MISMATCH'],
  'epoch+1 in the proof': ['VERIFY_VALUE_MISMATCH'],
  'current epoch below the version': ['VERIFY_LOOKUP'],
  // the label and version are the VRF's input
  'wrong label': ['VRF_VERIFY_FAILED'],
  'wrong public key': ['VRF_VERIFY_FAILED'],
  'wrong value': ['VERIFY_VALUE_MISMATCH'],
  'wrong version': ['VRF_VERIFY_FAILED'],
  'version 0': ['VERIFY_LOOKUP'],
  'flipped bit in the commitment nonce': ['VERIFY_VALUE_MISMATCH'],
  'flipped bit in the existence VRF proof': ['VRF_VERIFY_FAILED'],
  'marker VRF proof of another version': ['VRF_VERIFY_FAILED'],
  'dropped marker (existence proof in its place)': ['VRF_VERIFY_FAILED'],
  'freshness proof for the fresh leaf': ['VRF_VERIFY_FAILED'],
  'wrong longest prefix': ['VERIFY_NONMEMBERSHIP'],
  'swapped longest-prefix children': ['VERIFY_NONMEMBERSHIP'],
  'flipped bit in a longest-prefix child': ['VERIFY_NONMEMBERSHIP'],
  'truncated message': ['DECODE_MALFORMED'],
  // the bit lands in a sibling hash of one vector's proof and in a VRF proof of the other's
  'flipped bit in the encoding': ['VERIFY_ROOT_MISMATCH', 'VRF_VERIFY_FAILED'],
};

const historyMutations = {
  'flipped bit in a sibling hash': (p) => {
    const s = p.updateProofs[0]!.existenceProof.siblingProofs[3]!.siblings[0];
    s.value = flipBit(s.value, 17);
    return { proof: p };
  },
  'wrong direction': (p) => {
    const sp = p.updateProofs[0]!.existenceProof.siblingProofs[0]!;
    sp.direction = sp.direction === 0 ? 1 : 0;
    return { proof: p };
  },
  'truncated sibling list': (p) => {
    p.updateProofs[0]!.existenceProof.siblingProofs.shift();
    return { proof: p };
  },
  'swapped root': (p, call) => {
    call.root = flipBit(call.root, 200);
    return { proof: p };
  },
  'wrong epoch (0) in the newest update': (p) => {
    p.updateProofs[0]!.epoch = 0n;
    return { proof: p };
  },
  'epoch+1 beyond the current epoch': (p, call) => {
    p.updateProofs[0]!.epoch = call.epoch + 1n;
    return { proof: p };
  },
  'wrong epoch in an older update': (p) => {
    const u = p.updateProofs[p.updateProofs.length - 1]!;
    u.epoch += 1n;
    return { proof: p };
  },
  'wrong label': (p, call) => {
    call.label = utf8('8');
    return { proof: p };
  },
  'wrong public key': (p, call) => {
    call.publicKey = OTHER_KEY;
    return { proof: p };
  },
  'dropped future marker': (p) => {
    p.futureMarkerVrfProofs.pop();
    p.nonExistenceOfFutureMarkerProofs.pop();
    return { proof: p };
  },
  'dropped future marker VRF proof only': (p) => {
    p.futureMarkerVrfProofs.pop();
    return { proof: p };
  },
  'future marker proofs swapped': (p) => {
    p.nonExistenceOfFutureMarkerProofs.reverse();
    return { proof: p };
  },
  'flipped bit in a future marker proof': (p) => {
    const f = p.nonExistenceOfFutureMarkerProofs[0]!;
    f.longestPrefixMembershipProof.hashVal = flipBit(f.longestPrefixMembershipProof.hashVal);
    return { proof: p };
  },
  'dropped past marker': (p) => {
    if (p.pastMarkerVrfProofs.length === 0) return null;
    p.pastMarkerVrfProofs.pop();
    p.existenceOfPastMarkerProofs.pop();
    return { proof: p };
  },
  'extra past marker': (p) => {
    p.pastMarkerVrfProofs.push(p.updateProofs[0]!.existenceVrfProof);
    p.existenceOfPastMarkerProofs.push(p.updateProofs[0]!.existenceProof);
    return { proof: p };
  },
  'dropped oldest update': (p) => {
    if (p.updateProofs.length === 1) return null;
    p.updateProofs.pop();
    return { proof: p };
  },
  'version bumped': (p) => {
    for (const u of p.updateProofs) u.version += 1n;
    return { proof: p };
  },
  'no updates': (p) => {
    p.updateProofs = [];
    return { proof: p };
  },
  'updates out of order': (p) => {
    if (p.updateProofs.length === 1) return null;
    p.updateProofs.reverse();
    return { proof: p };
  },
  'update repeated': (p) => {
    p.updateProofs.push(p.updateProofs[p.updateProofs.length - 1]!);
    return { proof: p };
  },
  'wrong value': (p) => {
    p.updateProofs[0]!.value = utf8('16,49');
    return { proof: p };
  },
  'missing stale-leaf proof': (p) => {
    p.updateProofs[0]!.previousVersionProof = undefined;
    return { proof: p };
  },
  'missing stale-leaf VRF proof': (p) => {
    p.updateProofs[0]!.previousVersionVrfProof = undefined;
    return { proof: p };
  },
  'stale-leaf proof replaced by the fresh leaf': (p) => {
    const u = p.updateProofs[0]!;
    u.previousVersionProof = u.existenceProof;
    return { proof: p };
  },
  'flipped bit in a stale-leaf VRF proof': (p) => {
    const u = p.updateProofs[0]!;
    u.previousVersionVrfProof = flipBit(u.previousVersionVrfProof!, 520);
    return { proof: p };
  },
  'truncated message': (_p, _c, bytes) => ({ bytes: bytes.subarray(0, bytes.length - 40) }),
} satisfies Record<string, Mutation<HistoryProof>>;

/** The codes each history mutation may fail with. */
const HISTORY_EXPECTED: Record<keyof typeof historyMutations, readonly string[]> = {
  'flipped bit in a sibling hash': ['VERIFY_ROOT_MISMATCH'],
  'wrong direction': ['VERIFY_ROOT_MISMATCH'],
  'truncated sibling list': ['VERIFY_ROOT_MISMATCH'],
  'swapped root': ['VERIFY_ROOT_MISMATCH'],
  'wrong epoch (0) in the newest update': ['VERIFY_VALUE_MISMATCH'],
  'epoch+1 beyond the current epoch': ['VERIFY_HISTORY'],
  'wrong epoch in an older update': ['VERIFY_VALUE_MISMATCH'],
  'wrong label': ['VRF_VERIFY_FAILED'],
  'wrong public key': ['VRF_VERIFY_FAILED'],
  'dropped future marker': ['VERIFY_HISTORY'],
  'dropped future marker VRF proof only': ['VERIFY_HISTORY'],
  'future marker proofs swapped': ['VERIFY_FUTURE_MARKER'],
  'flipped bit in a future marker proof': ['VERIFY_FUTURE_MARKER'],
  'dropped past marker': ['VERIFY_HISTORY'],
  'extra past marker': ['VERIFY_HISTORY'],
  'dropped oldest update': ['VERIFY_HISTORY'],
  'version bumped': ['VERIFY_HISTORY'],
  'no updates': ['VERIFY_HISTORY'],
  'updates out of order': ['VERIFY_HISTORY'],
  'update repeated': ['VERIFY_HISTORY'],
  'wrong value': ['VERIFY_VALUE_MISMATCH'],
  'missing stale-leaf proof': ['VERIFY_HISTORY'],
  'missing stale-leaf VRF proof': ['VERIFY_HISTORY'],
  'stale-leaf proof replaced by the fresh leaf': ['VERIFY_STALE_MISMATCH'],
  'flipped bit in a stale-leaf VRF proof': ['VRF_VERIFY_FAILED'],
  'truncated message': ['DECODE_MALFORMED'],
};

export interface MutationOutcome {
  name: string;
  /** The error code, or 'ACCEPTED' when the mutated proof verified (a failure). */
  code: string;
  /** The codes the mutation is expected to fail with. */
  expected: readonly string[];
}

function run<P>(
  mutations: Record<string, Mutation<P>>,
  expected: Record<string, readonly string[]>,
  bytes: Uint8Array,
  base: Call,
  decode: (b: Uint8Array) => P,
  verify: (call: Call, proof: P) => unknown,
): MutationOutcome[] {
  const outcomes: MutationOutcome[] = [];
  for (const [name, mutate] of Object.entries(mutations)) {
    const call = { ...base };
    const code = attempt(mutate, call, bytes, decode, verify);
    outcomes.push({ name, code, expected: expected[name] ?? [] });
  }
  return outcomes.filter((o) => o.code !== 'NOT_APPLICABLE');
}

function attempt<P>(
  mutate: Mutation<P>,
  call: Call,
  bytes: Uint8Array,
  decode: (b: Uint8Array) => P,
  verify: (call: Call, proof: P) => unknown,
): string {
  try {
    const out = mutate(decode(bytes), call, bytes);
    if (out === null) return 'NOT_APPLICABLE';
    const proof = out.bytes !== undefined ? decode(out.bytes) : out.proof!;
    verify(call, proof);
    return 'ACCEPTED';
  } catch (e) {
    return e instanceof AkdError ? e.code : `NOT_AKD_ERROR: ${String(e)}`;
  }
}

/** Verifies the three proofs of a vector file as upstream's test does. */
export function verifyVectors(v: VectorInputs): {
  lookup: VerifyResult;
  complete: VerifyResult[];
  mostRecent1: VerifyResult[];
} {
  const config = configFor(v.configuration);
  const lookup = lookupVerify(
    config,
    v.publicKey,
    v.epochHash,
    v.epoch,
    v.label,
    decodeLookupProof(v.lookupProof),
  );
  const complete = keyHistoryVerify(
    config,
    v.publicKey,
    v.epochHash,
    v.epoch,
    v.label,
    decodeHistoryProof(v.historyComplete),
  );
  const mostRecent1 = keyHistoryVerify(
    config,
    v.publicKey,
    v.epochHash,
    v.epoch,
    v.label,
    decodeHistoryProof(v.historyMostRecent1),
    { historyParams: { kind: 'mostRecent', count: 1 } },
  );
  return { lookup, complete, mostRecent1 };
}

/** Runs every named mutation of the lookup and both history proofs of a vector file. */
export function runMutations(v: VectorInputs): {
  lookup: MutationOutcome[];
  complete: MutationOutcome[];
  mostRecent1: MutationOutcome[];
} {
  const base: Call = {
    config: configFor(v.configuration),
    publicKey: v.publicKey,
    root: v.epochHash,
    epoch: v.epoch,
    label: v.label,
  };
  const history =
    (params: HistoryVerificationParams) =>
    (c: Call, p: HistoryProof): unknown =>
      keyHistoryVerify(c.config, c.publicKey, c.root, c.epoch, c.label, p, params);
  return {
    lookup: run(lookupMutations, LOOKUP_EXPECTED, v.lookupProof, base, decodeLookupProof, (c, p) =>
      lookupVerify(c.config, c.publicKey, c.root, c.epoch, c.label, p),
    ),
    complete: run(
      historyMutations,
      HISTORY_EXPECTED,
      v.historyComplete,
      base,
      decodeHistoryProof,
      history({ historyParams: { kind: 'complete' } }),
    ),
    mostRecent1: run(
      historyMutations,
      HISTORY_EXPECTED,
      v.historyMostRecent1,
      base,
      decodeHistoryProof,
      history({ historyParams: { kind: 'mostRecent', count: 1 } }),
    ),
  };
}
