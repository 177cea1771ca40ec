// Workers hash the jobs' VRF inputs themselves where they can build the configuration (a
// built-in one, exactly): the alphas, labels and proofs are those of the calling thread's
// hashing, and a configuration of the caller's keeps the hashing on the calling thread.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import {
  ExperimentalConfiguration,
  VersionFreshness,
  WhatsAppV1Configuration,
  toHex,
  utf8,
  type Configuration,
} from '@akd-ts/core';
import { LocalVrfEngine, WorkerVrfEngine, type VrfJob } from '@akd-ts/directory';
import { alphasOf, packAlphaInputs, taskAlphas } from '../src/vrf/alpha-inputs.js';
import { configOf, describeConfig } from '../src/worker-config.js';

/** A configuration of the caller's: its alphas differ from its parent's. */
class SaltedConfiguration extends WhatsAppV1Configuration {
  override getHashFromLabelInput(label: Uint8Array, f: VersionFreshness, v: bigint) {
    return super.getHashFromLabelInput(utf8(`salt ${toHex(label)}`), f, v);
  }
}

const job = fc.record({
  label: fc.uint8Array({ maxLength: 300 }),
  freshness: fc.constantFrom(VersionFreshness.Stale, VersionFreshness.Fresh),
  version: fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }),
});

test('packed hash inputs give the configuration’s alphas, on every built-in configuration', () => {
  const configs: Configuration[] = [
    new WhatsAppV1Configuration(),
    new ExperimentalConfiguration(),
    // a domain label that is not UTF-8 survives the trip to a worker
    new ExperimentalConfiguration(new Uint8Array([0xff, 0x00, 0xc3])),
  ];
  for (const config of configs) {
    const described = describeConfig(config)!;
    const rebuilt = configOf(structuredClone(described));
    fc.assert(
      fc.property(fc.array(job, { maxLength: 20 }), (jobs: VrfJob[]) => {
        const expected = jobs.map((j) =>
          toHex(config.getHashFromLabelInput(j.label, j.freshness, j.version)),
        );
        assert.deepEqual(alphasOf(rebuilt, packAlphaInputs(jobs)).map(toHex), expected);
      }),
      { numRuns: 50 },
    );
  }
  // a subclass is not rebuilt (as its parent, it would hash otherwise): not for the VRF
  // workers, nor for the tree's and the audit's
  assert.equal(describeConfig(new SaltedConfiguration()), undefined);
});

test("a task's alphas: as given, hashed from inputs, or refused without a configuration", () => {
  const config = new WhatsAppV1Configuration();
  const jobs: VrfJob[] = [{ label: utf8('a'), freshness: VersionFreshness.Fresh, version: 1n }];
  const alpha = config.getHashFromLabelInput(utf8('a'), VersionFreshness.Fresh, 1n);
  const given = new Uint8Array(64);
  given.set(alpha, 32);
  assert.deepEqual(taskAlphas(undefined, given).map(toHex), [
    toHex(new Uint8Array(32)),
    toHex(alpha),
  ]);
  assert.deepEqual(taskAlphas(config, packAlphaInputs(jobs)).map(toHex), [toHex(alpha)]);
  assert.throws(() => taskAlphas(undefined, packAlphaInputs(jobs)), {
    name: 'TypeError',
    message: /no configuration/,
  });
});

test('worker threads give the calling thread’s labels and proofs, hashing or not', async () => {
  const sk = new Uint8Array(32).fill(3);
  const jobs: VrfJob[] = Array.from({ length: 100 }, (_, i) => ({
    label: utf8(`user ${i}`),
    freshness: i % 3 === 0 ? VersionFreshness.Stale : VersionFreshness.Fresh,
    version: BigInt(i + 1),
  }));
  for (const config of [new ExperimentalConfiguration('Other'), new SaltedConfiguration()]) {
    const local = new LocalVrfEngine(config, sk);
    const workers = new WorkerVrfEngine(config, sk, { threads: 2, requireWorkers: true });
    try {
      assert.deepEqual(
        (await workers.nodeLabels(jobs)).map((l) => toHex(l.val)),
        (await local.nodeLabels(jobs)).map((l) => toHex(l.val)),
      );
      assert.deepEqual(
        (await workers.proofBytes(jobs)).map(toHex),
        (await local.proofBytes(jobs)).map(toHex),
      );
    } finally {
      await workers.close();
    }
  }
});
