import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AUDIT_EXAMPLES } from '../../../test/support/audit-example.js';
import {
  AkdError,
  configurationByName,
  ExperimentalConfiguration,
  NodeLabel,
  WhatsAppV1Configuration,
  auditVerify,
  decodeAppendOnlyProof,
  fromHex,
  rootHashOfElements,
  type AppendOnlyProof,
  type AzksElement,
  type Configuration,
} from '@akd-ts/core';

// spec 10.5: publish [hello->world] (epoch 1), then [hello->world2, hi->there] (epoch 2), audit(1, 2)
const EXAMPLES = AUDIT_EXAMPLES.map((ex) => ({
  ...ex,
  config: configurationByName(ex.configuration),
}));

function code(f: () => unknown): string {
  try {
    f();
    return 'ACCEPTED';
  } catch (e) {
    if (e instanceof AkdError) return e.code;
    throw e;
  }
}

function leaf(byte: number, value = byte): AzksElement {
  const val = new Uint8Array(32).fill(byte);
  return { label: new NodeLabel(val, 256), value: new Uint8Array(32).fill(value) };
}

for (const ex of EXAMPLES) {
  const { config } = ex;
  const hashes = [fromHex(ex.root1), fromHex(ex.root2)];
  const fresh = () => decodeAppendOnlyProof(fromHex(ex.proof));

  test(`${config.name}: the spec 10.5 audit proof verifies against the published roots`, () => {
    const proof = fresh();
    assert.equal(proof.proofs[0]!.inserted.length, 3);
    assert.equal(proof.proofs[0]!.unchangedNodes.length, 1);
    assert.deepEqual(auditVerify(config, hashes, proof), { startEpoch: 1n, endEpoch: 2n });
    assert.deepEqual(auditVerify(config, hashes, proof, { startEpoch: 1n }).endEpoch, 2n);
    // element order does not matter
    proof.proofs[0]!.inserted.reverse();
    auditVerify(config, hashes, proof);
  });

  test(`${config.name}: tampered audit proofs fail, each with its own code`, () => {
    const mutate = (f: (p: AppendOnlyProof) => void, h = hashes) => {
      const p = fresh();
      f(p);
      return code(() => auditVerify(config, h, p));
    };
    const step = (p: AppendOnlyProof) => p.proofs[0]!;
    assert.equal(
      mutate(() => {}, [hashes[0]!]),
      'AUDIT_LENGTH_MISMATCH',
    );
    assert.equal(
      mutate((p) => p.epochs.push(2n)),
      'AUDIT_LENGTH_MISMATCH',
    );
    assert.equal(
      mutate((p) => p.proofs.pop() && p.epochs.pop(), [hashes[0]!]),
      'AUDIT_LENGTH_MISMATCH',
    );
    assert.equal(
      code(() => auditVerify(config, hashes, fresh(), { startEpoch: 2n })),
      'AUDIT_EPOCH_GAP',
    );
    assert.equal(
      mutate((p) => (p.epochs[0] = 2n)),
      'AUDIT_END_HASH_MISMATCH',
      'leaves bound to another epoch',
    );
    assert.equal(
      mutate((p) => step(p).unchangedNodes.pop()),
      'AUDIT_START_HASH_MISMATCH',
      'leaf removed',
    );
    assert.equal(
      mutate((p) => (step(p).unchangedNodes[0]!.value = new Uint8Array(32))),
      'AUDIT_START_HASH_MISMATCH',
      'unchanged value replaced',
    );
    assert.equal(
      mutate((p) => (step(p).inserted[0]!.value = new Uint8Array(32).fill(9))),
      'AUDIT_END_HASH_MISMATCH',
      'inserted value replaced',
    );
    assert.equal(
      mutate((p) => step(p).inserted.pop()),
      'AUDIT_END_HASH_MISMATCH',
      'insertion hidden',
    );
    assert.equal(
      mutate((p) => step(p).inserted.push(step(p).unchangedNodes[0]!)),
      'AUDIT_MALFORMED_PROOF',
      'existing leaf re-inserted with a new value',
    );
    assert.equal(
      mutate((p) => step(p).inserted.push(step(p).inserted[0]!)),
      'AUDIT_MALFORMED_PROOF',
      'duplicate inserted label',
    );
    assert.equal(
      mutate((p) =>
        step(p).unchangedNodes.push({
          label: step(p).inserted[0]!.label.getPrefix(3),
          value: new Uint8Array(32),
        }),
      ),
      'AUDIT_MALFORMED_PROOF',
      'nested label',
    );
    assert.equal(
      mutate((p) => (step(p).inserted[0]!.label = step(p).inserted[0]!.label.getPrefix(200))),
      'AUDIT_MALFORMED_PROOF',
      'inserted element that is not a leaf',
    );
    assert.equal(
      mutate((p) => {
        const val = new Uint8Array(32).fill(0xff);
        step(p).unchangedNodes.push({ label: new NodeLabel(val, 3), value: new Uint8Array(32) });
      }),
      'AUDIT_MALFORMED_PROOF',
      'junk bits beyond the label length',
    );
    assert.equal(
      mutate((p) =>
        step(p).unchangedNodes.push({ label: NodeLabel.root(), value: new Uint8Array(32) }),
      ),
      'AUDIT_MALFORMED_PROOF',
      'root label as an element',
    );
  });

  test(`${config.name}: two-step audits reject a skipped epoch`, () => {
    const p = fresh();
    const two: AppendOnlyProof = { proofs: [p.proofs[0]!, p.proofs[0]!], epochs: [1n, 3n] };
    assert.equal(
      code(() => auditVerify(config, [...hashes, hashes[1]!], two)),
      'AUDIT_EPOCH_GAP',
    );
  });

  test(`${config.name}: the nested-label rewrite that upstream 0.12 accepted is rejected`, () => {
    // Old tree: four leaves, two under prefix 0 and two under prefix 1.
    const old = [leaf(0x00), leaf(0x10), leaf(0x80), leaf(0x90)];
    const startHash = rootHashOfElements(config, old);
    // The server rewrites the subtree under "0" (new values for both leaves) and adds a leaf.
    const rewritten = [leaf(0x00, 0xaa), leaf(0x10, 0xbb)];
    const added = leaf(0xc0);
    const endEpoch = 2n;
    const bound = (e: AzksElement) => ({
      label: e.label,
      value: config.hashLeafWithCommitment(e.value, endEpoch),
    });
    const endHash = rootHashOfElements(config, [
      old[2]!,
      old[3]!,
      ...rewritten.map(bound),
      bound(added),
    ]);
    // The proof claims the whole "0" subtree unchanged (its old hash), and smuggles the
    // rewritten leaves in below it: upstream dropped the nested subtree root while rebuilding.
    const subtree0 = {
      label: old[0]!.label.getPrefix(3),
      value: subtreeValue(config, [old[0]!, old[1]!]),
    };
    const subtree1 = {
      label: old[2]!.label.getPrefix(3),
      value: subtreeValue(config, [old[2]!, old[3]!]),
    };
    assert.deepEqual(
      rootHashOfElements(config, [subtree0, subtree1]),
      startHash,
      'subtree roots rebuild the old root',
    );
    const proof: AppendOnlyProof = {
      epochs: [1n],
      proofs: [{ unchangedNodes: [subtree0, subtree1], inserted: [...rewritten, added] }],
    };
    assert.equal(
      code(() => auditVerify(config, [startHash, endHash], proof)),
      'AUDIT_MALFORMED_PROOF',
    );
  });
}

/** Value of the interior node above two sibling leaves (spec 7.3, auditor mode). */
function subtreeValue(config: Configuration, [a, b]: AzksElement[]): Uint8Array {
  return config.computeParentHashFromChildren(
    a!.value,
    config.nodeLabelValue(a!.label),
    b!.value,
    config.nodeLabelValue(b!.label),
  );
}

test('rootHashOfElements: empty set is the empty tree; one side empty uses the empty node', () => {
  for (const config of [new WhatsAppV1Configuration(), new ExperimentalConfiguration()]) {
    assert.deepEqual(
      rootHashOfElements(config, []),
      config.computeRootHashFromVal(config.emptyRootValue),
    );
    const one = leaf(0x80);
    const expected = config.computeRootHashFromVal(
      config.computeParentHashFromChildren(
        config.emptyNodeHash,
        config.nodeLabelValue(config.emptyLabel),
        one.value,
        config.nodeLabelValue(one.label),
      ),
    );
    assert.deepEqual(rootHashOfElements(config, [one]), expected);
  }
});
