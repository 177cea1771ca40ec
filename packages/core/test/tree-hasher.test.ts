import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  BaseConfiguration,
  ExperimentalConfiguration,
  NodeLabel,
  WhatsAppV1Configuration,
  toHex,
  treeHasherOf,
  type Configuration,
  type TreeHasher,
} from '@akd-ts/core';

const random = (n: number) => crypto.getRandomValues(new Uint8Array(n));

/** A configuration with no tree hasher of its own: WhatsAppV1's bytes through the generic one. */
class Plain extends BaseConfiguration {
  readonly #inner = new WhatsAppV1Configuration();
  readonly name = this.#inner.name;
  readonly emptyRootValue = this.#inner.emptyRootValue;
  readonly emptyNodeHash = this.#inner.emptyNodeHash;
  readonly emptyLabel = this.#inner.emptyLabel;
  readonly staleAzksValue = this.#inner.staleAzksValue;
  hash = (d: Uint8Array) => this.#inner.hash(d);
  getCommitmentNonce = this.#inner.getCommitmentNonce.bind(this.#inner);
  nodeLabelValue = (l: NodeLabel) => this.#inner.nodeLabelValue(l);
  computeParentHashFromChildren = this.#inner.computeParentHashFromChildren.bind(this.#inner);
  computeRootHashFromVal = (v: Uint8Array) => this.#inner.computeRootHashFromVal(v);
}

/** Checks every tree hasher operation against the configuration's own methods. */
function agree(config: Configuration, h: TreeHasher): void {
  assert.equal(toHex(h.emptyNodeHash), toHex(config.emptyNodeHash));
  assert.equal(toHex(h.emptyLabelValue), toHex(config.nodeLabelValue(config.emptyLabel)));
  for (let i = 0; i < 200; i++) {
    const len = i % 257;
    const label = new NodeLabel(random(32), 256).getPrefix(len);
    // operands at odd offsets of larger arrays, results at an offset too
    const src = random(100);
    src.set(label.val, 7);
    const out = random(100);
    h.labelValue(src, 7, len, out, 3);
    const lv = config.nodeLabelValue(label);
    assert.equal(h.labelValueLength, lv.length);
    assert.equal(toHex(out.subarray(3, 3 + lv.length)), toHex(lv), `label value, length ${len}`);

    const epoch = i * 1_000_003 + (i === 199 ? Number.MAX_SAFE_INTEGER - 1_000_003 * 199 : 0);
    h.leafValue(src, 9, epoch, out, 5);
    const leaf = config.hashLeafWithCommitment(src.slice(9, 41), BigInt(epoch));
    assert.equal(toHex(out.subarray(5, 37)), toHex(leaf), `leaf value, epoch ${epoch}`);

    const n = h.labelValueLength;
    const ops = random(300);
    h.parentHash(ops, 1, ops, 40, ops, 90, ops, 130, out, 11);
    const parent = config.computeParentHashFromChildren(
      ops.slice(1, 33),
      ops.slice(40, 40 + n),
      ops.slice(90, 122),
      ops.slice(130, 130 + n),
    );
    assert.equal(toHex(out.subarray(11, 43)), toHex(parent), 'parent hash');
  }
}

test('the tree hashers of both configurations give the bytes of their methods at any offset', () => {
  for (const config of [new WhatsAppV1Configuration(), new ExperimentalConfiguration('Other')]) {
    agree(config, treeHasherOf(config));
  }
});

test('a configuration without a tree hasher gets one built on its public methods', () => {
  const plain = new Plain();
  assert.equal('treeHasher' in plain, false);
  agree(plain, treeHasherOf(plain));
});
