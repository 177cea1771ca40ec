// A VRF job may carry the node label its caller already holds (a value state's label): every
// engine returns that label rather than derive one from the proof, and derives the others; a
// lookup asks for a marker's proof only when the marker is not the version itself.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import {
  NodeLabel,
  VersionFreshness,
  lookupVerify,
  toHex,
  utf8,
  type AkdLabel,
} from '@akd-ts/core';
import { MemoryDatabase, StorageManager, type Database, type VrfProofKey } from '@akd-ts/storage';
import { ReadOnlyDirectory, StoredVrfProofs, type VrfEngine, type VrfJob } from '@akd-ts/directory';
import { LocalVrfEngine, WorkerVrfEngine } from '../src/vrf/engine.js';
import { HARD_CODED_VRF_SECRET } from '../../../test/support/vectors.js';
import { openDirectory } from './support/build.js';

const secret = new Uint8Array(HARD_CODED_VRF_SECRET);
const closing: VrfEngine[] = [];
after(async () => {
  for (const e of closing) await e.close();
});

/** A store whose VRF proof reads are recorded as `freshness/version/label` strings. */
function recorded(db: Database): { db: Database; reads: string[][] } {
  const reads: string[][] = [];
  const spy = Object.create(db) as Database;
  spy.getVrfProofs = (keys: VrfProofKey[]) => {
    reads.push(keys.map((k) => `${k.freshness}/${k.version}/${toHex(k.label)}`));
    return db.getVrfProofs(keys);
  };
  return { db: spy, reads };
}

test('every engine returns the node label a job carries and derives the rest', async () => {
  const { dir, db, config } = await openDirectory('whatsapp_v1');
  try {
    // 40 labels, published twice: versions 1 and 2, so the store holds (Fresh, 1..2) and
    // (Stale, 1..2) of each; 80 jobs make the worker engine use its threads (64 or more)
    const labels: AkdLabel[] = Array.from({ length: 40 }, (_, i) => utf8(`user-${i}`));
    await dir.publish(labels.map((label) => ({ label, value: utf8('v1') })));
    await dir.publish(labels.map((label) => ({ label, value: utf8('v2') })));
    await dir.vrfProofsStored();
    const jobs: VrfJob[] = labels.flatMap((label) => [
      { label, freshness: VersionFreshness.Fresh, version: 2n },
      { label, freshness: VersionFreshness.Stale, version: 1n },
    ]);
    const local = new LocalVrfEngine(config, secret);
    const expected = await local.nodeLabels(jobs);
    const engines: VrfEngine[] = [
      local,
      new WorkerVrfEngine(config, secret, { threads: 1, requireWorkers: true }),
      new StoredVrfProofs(db),
    ];
    closing.push(...engines);
    const known = new NodeLabel(new Uint8Array(32).fill(0xab), 256);
    for (const engine of engines) {
      const derived = await engine.proofs(jobs);
      assert.deepEqual(
        derived.map((p) => p.nodeLabel.toString()),
        expected.map((l) => l.toString()),
        `${engine.name}: labels derived from the proofs`,
      );
      // the even jobs carry a label (deliberately not theirs, to see which one is returned)
      const told = await engine.proofs(
        jobs.map((j, i) => (i % 2 === 0 ? { ...j, nodeLabel: known } : j)),
      );
      told.forEach((p, i) => {
        assert.equal(toHex(p.proof), toHex(derived[i]!.proof), `${engine.name}: proof ${i}`);
        if (i % 2 === 0) assert.equal(p.nodeLabel, known, `${engine.name}: job ${i} told`);
        else
          assert.equal(p.nodeLabel.toString(), expected[i]!.toString(), `${engine.name}: job ${i}`);
      });
    }
  } finally {
    await dir.close();
  }
});

test('a lookup reads the marker proof only when the marker is not the version', async () => {
  const base = new MemoryDatabase();
  const { dir, config } = await openDirectory('whatsapp_v1', { db: base });
  const { db, reads } = recorded(base);
  const reader = await ReadOnlyDirectory.open({
    config,
    storage: new StorageManager(db),
    publicKey: dir.getPublicKey(),
  });
  try {
    const alice = utf8('alice');
    const hex = toHex(alice);
    const fresh = VersionFreshness.Fresh;
    const stale = VersionFreshness.Stale;
    // versions 1, 2 and 4 are their own markers; 3, 5, 6 and 7 have markers 2, 4, 4 and 4
    const expected: Record<number, string[]> = {
      1: [`${fresh}/1/${hex}`, `${stale}/1/${hex}`],
      2: [`${fresh}/2/${hex}`, `${stale}/2/${hex}`],
      3: [`${fresh}/3/${hex}`, `${fresh}/2/${hex}`, `${stale}/3/${hex}`],
      4: [`${fresh}/4/${hex}`, `${stale}/4/${hex}`],
      5: [`${fresh}/5/${hex}`, `${fresh}/4/${hex}`, `${stale}/5/${hex}`],
    };
    for (let version = 1; version <= 5; version++) {
      await dir.publish([{ label: alice, value: utf8(`key ${version}`) }]);
      await dir.vrfProofsStored();
      await reader.refresh();
      reads.length = 0;
      const { proof, epochHash } = await reader.lookup(alice);
      assert.deepEqual(reads, [expected[version]], `version ${version}`);
      assert.equal(proof.version, BigInt(version));
      lookupVerify(config, dir.getPublicKey(), epochHash.hash, epochHash.epoch, alice, proof);
      const mine = await dir.lookup(alice);
      assert.deepEqual(proof, mine.proof, `version ${version}: keyless equals keyed`);
    }
  } finally {
    await reader.close();
    await dir.close();
  }
});
