import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  AkdError,
  ExperimentalConfiguration,
  WhatsAppV1Configuration,
  blobEpochOfStep,
  decodeAppendOnlyProof,
  decodeAuditBlob,
  fromHex,
  generateAuditBlobs,
  otherNaming,
  stepStartOfBlob,
  verifyAuditBlob,
  type AuditBlob,
  type Configuration,
} from '@akd-ts/core';
import { LeafHistory, forgedBlob } from './support/audit-blob-history.js';
import { AUDIT_EXAMPLES } from '../../../test/support/audit-example.js';
import { domainError } from '../../../test/support/domain-errors.js';

const CONFIGS: Configuration[] = [new WhatsAppV1Configuration(), new ExperimentalConfiguration()];
const U64_MAX = (1n << 64n) - 1n;

const failure = (f: () => unknown): AkdError => domainError(f, 'the blob verified');

// The spec 10.5 example: [hello->world] at epoch 1, [hello->world2, hi->there] at epoch 2.
const SPEC_10_5 = Object.fromEntries(AUDIT_EXAMPLES.map((ex) => [ex.configuration, ex]));

test('naming helpers: a step s -> s+1 is named s (start) or s+1 (end)', () => {
  assert.equal(blobEpochOfStep(41n, 'end'), 42n);
  assert.equal(blobEpochOfStep(41n, 'start'), 41n);
  assert.equal(stepStartOfBlob(42n, 'end'), 41n);
  assert.equal(stepStartOfBlob(42n, 'start'), 42n);
  assert.equal(stepStartOfBlob(0n, 'end'), undefined);
  assert.equal(stepStartOfBlob(U64_MAX, 'start'), undefined);
  assert.equal(otherNaming('end'), 'start');
  assert.equal(otherNaming('start'), 'end');
});

for (const config of CONFIGS) {
  const ex = SPEC_10_5[config.name]!;
  const hashes = [fromHex(ex.root1), fromHex(ex.root2)];

  test(`${config.name}: the spec 10.5 proof as blobs: upstream's start-epoch name and WhatsApp's end-epoch name`, () => {
    const proof = decodeAppendOnlyProof(fromHex(ex.proof));
    const [start] = generateAuditBlobs(hashes, proof, 'start');
    const [end] = generateAuditBlobs(hashes, proof);
    assert.equal(start!.name.epoch, 1n, 'generate_audit_blobs names the step 1 -> 2 by epoch 1');
    assert.equal(end!.name.epoch, 2n, 'the kt auditor reads the step 1 -> 2 from a blob named 2');
    assert.deepEqual(start!.data, end!.data);
    // auto detection: each verifies as the step 1 -> 2 under its own reading only
    const s = verifyAuditBlob(config, start!);
    assert.deepEqual(
      [s.naming, s.ambiguous, s.startEpoch, s.endEpoch, s.inserted, s.unchanged],
      ['start', false, 1n, 2n, 3, 1],
    );
    assert.equal(s.bytes, start!.data.length);
    const e = verifyAuditBlob(config, end!);
    assert.deepEqual([e.naming, e.startEpoch, e.endEpoch], ['end', 1n, 2n]);
    assert.equal(verifyAuditBlob(config, start!, { naming: 'start' }).endEpoch, 2n);
    assert.equal(verifyAuditBlob(config, end!, { naming: 'end' }).endEpoch, 2n);
    assert.equal(verifyAuditBlob(config, end!, { prefer: 'start' }).naming, 'end');
    // decode gives upstream's AuditBlob::decode tuple
    const d = decodeAuditBlob(end!);
    assert.equal(d.epoch, 2n);
    assert.equal(d.proof.inserted.length, 3);
  });

  test(`${config.name}: a pinned naming the blob does not use fails with AUDIT_BLOB_EPOCH naming the one it uses`, () => {
    const proof = decodeAppendOnlyProof(fromHex(ex.proof));
    const [start] = generateAuditBlobs(hashes, proof, 'start');
    const [end] = generateAuditBlobs(hashes, proof, 'end');
    const a = failure(() => verifyAuditBlob(config, start!, { naming: 'end' }));
    assert.equal(a.code, 'AUDIT_BLOB_EPOCH');
    assert.match(a.message, /named by its start epoch: it verifies as the step 1 -> 2/);
    assert.match(a.message, /^blob 1\/[0-9a-f]{8}\.\.\.\//);
    const b = failure(() => verifyAuditBlob(config, end!, { naming: 'start' }));
    assert.equal(b.code, 'AUDIT_BLOB_EPOCH');
    assert.match(b.message, /named by its end epoch: it verifies as the step 1 -> 2/);
  });

  test(`${config.name}: an end-named epoch 0 and a start-named 2^64 - 1 cannot exist`, () => {
    const h = new LeafHistory(config).publishMany(1, 3);
    const start0 = h.blob(0n, 'start');
    assert.equal(start0.name.epoch, 0n);
    // auto reads it as start (end is impossible); pinned end says it is start-named
    assert.equal(verifyAuditBlob(config, start0).naming, 'start');
    const e = failure(() => verifyAuditBlob(config, start0, { naming: 'end' }));
    assert.equal(e.code, 'AUDIT_BLOB_EPOCH');
    assert.match(e.message, /named by its start epoch/);
    // a blob named 0 that verifies under no reading reports the possible reading's failure
    const bad = { ...start0, name: { ...start0.name, currentHash: new Uint8Array(32) } };
    assert.equal(
      failure(() => verifyAuditBlob(config, bad, { naming: 'end' })).code,
      'AUDIT_END_HASH_MISMATCH',
    );
    const top = forgedBlob(h.step(0n), U64_MAX, h.roots[0]!, h.roots[1]!);
    const t = failure(() => verifyAuditBlob(config, top, { naming: 'start' }));
    assert.equal(t.code, 'AUDIT_END_HASH_MISMATCH', 'the end reading applies and fails');
    assert.match(t.message, /blob 18446744073709551615\//);
  });

  test(`${config.name}: a step that inserts nothing verifies under both readings and is flagged ambiguous`, () => {
    const h = new LeafHistory(config).publishMany(2, 4);
    const proof = h.step(2n); // nothing was inserted at epoch 3
    const blob = forgedBlob(proof, 3n, h.roots[2]!, h.roots[2]!);
    const v = verifyAuditBlob(config, blob);
    assert.deepEqual([v.naming, v.ambiguous, v.endEpoch], ['end', true, 3n]);
    const s = verifyAuditBlob(config, blob, { prefer: 'start' });
    assert.deepEqual([s.naming, s.ambiguous, s.endEpoch], ['start', true, 4n]);
    // with an end root that differs, it fails the same way under both
    const moved = forgedBlob(proof, 3n, h.roots[2]!, h.roots[1]!);
    const e = failure(() => verifyAuditBlob(config, moved));
    assert.equal(e.code, 'AUDIT_END_HASH_MISMATCH');
    assert.match(e.message, /under either naming/);
  });

  test(`${config.name}: corrupted data and wrong roots fail with their codes, the blob named in the message`, () => {
    const h = new LeafHistory(config).publishMany(3, 5);
    const blob = h.blob(1n);
    const truncated: AuditBlob = { ...blob, data: blob.data.subarray(0, blob.data.length - 7) };
    const t = failure(() => verifyAuditBlob(config, truncated));
    assert.match(t.code, /^DECODE_/);
    assert.match(t.message, /^blob 2\//);
    const garbage: AuditBlob = { ...blob, data: new Uint8Array([0xff, 0xff, 0xff]) };
    assert.match(failure(() => verifyAuditBlob(config, garbage)).code, /^DECODE_/);
    const wrongPrev = { ...blob, name: { ...blob.name, previousHash: h.roots[0]! } };
    const w = failure(() => verifyAuditBlob(config, wrongPrev));
    assert.equal(w.code, 'AUDIT_START_HASH_MISMATCH');
    assert.doesNotMatch(w.message, /either naming/, 'start failures do not depend on the naming');
    const wrongCur = { ...blob, name: { ...blob.name, currentHash: h.roots[3]! } };
    assert.equal(
      failure(() => verifyAuditBlob(config, wrongCur, { naming: 'end' })).code,
      'AUDIT_END_HASH_MISMATCH',
    );
  });

  test(`${config.name}: generateAuditBlobs checks lengths like spec 11.5`, () => {
    const proof = decodeAppendOnlyProof(fromHex(ex.proof));
    assert.equal(
      failure(() => generateAuditBlobs([hashes[0]!], proof)).code,
      'AUDIT_LENGTH_MISMATCH',
    );
    assert.equal(
      failure(() => generateAuditBlobs(hashes, { ...proof, epochs: [1n, 2n] })).code,
      'AUDIT_LENGTH_MISMATCH',
    );
    assert.deepEqual(generateAuditBlobs([hashes[0]!], { proofs: [], epochs: [] }), []);
  });
}
