import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { fromHex } from '@akd-ts/core';
import { akd, tempDir } from './helpers.js';
import { AUDIT_EXAMPLES } from '../../../test/support/audit-example.js';

const tmp = tempDir();
after(tmp.cleanup);

// The spec 10.5 example: publish [hello->world] at epoch 1, then [hello->world2, hi->there]
// at epoch 2, and audit(1, 2).
const EXAMPLES = AUDIT_EXAMPLES.map((ex) => ({ ...ex, config: ex.configuration }));

for (const ex of EXAMPLES) {
  const file = tmp.write(`${ex.config}-audit.bin`, fromHex(ex.proof));
  const audit = (hashes: string, ...extra: string[]) =>
    akd(['verify', 'audit', '--config', ex.config, '--hashes', hashes, ...extra]);

  test(`${ex.config}: the spec 10.5 audit proof verifies and prints the epoch range`, async () => {
    const r = await audit(`${ex.root1},${ex.root2}`, '--proof', file);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(
      r.stdout,
      `audit verified: epochs 1 -> 2 (${ex.config}), 1 append-only step\n` +
        `from root hash ${ex.root1} (epoch 1 by the proof's own numbering: pass --start-epoch to check it) to root hash ${ex.root2}\n`,
    );

    const json = await audit(`${ex.root1}, ${ex.root2.toUpperCase()}`, '--proof', file, '--json');
    assert.equal(json.code, 0, json.stderr);
    const out = JSON.parse(json.stdout) as Record<string, unknown>;
    assert.deepEqual(
      [out['proof'], out['startEpoch'], out['endEpoch'], out['steps'], out['epochsFrom']],
      ['audit', 1, 2, 1, 'proof'],
    );
    assert.deepEqual([out['firstRootHash'], out['lastRootHash']], [ex.root1, ex.root2]);

    const hex = await audit(
      `${ex.root1},${ex.root2}`,
      '--proof-hex',
      ex.proof,
      '--start-epoch',
      '1',
    );
    assert.equal(hex.code, 0, hex.stderr);
    assert.match(hex.stdout, /\(epoch 1 as --start-epoch requires\)/);
    const stdin = await audit(`${ex.root1},${ex.root2}`, '--proof', '-');
    assert.equal(stdin.code, 1, 'empty stdin is no proof');
  });

  test(`${ex.config}: swapped hashes, a wrong start epoch, too few hashes exit 1`, async () => {
    const swapped = await audit(`${ex.root2},${ex.root1}`, '--proof', file);
    assert.equal(swapped.code, 1);
    assert.equal(swapped.stdout, '');
    assert.match(swapped.stderr, /^error: AUDIT_START_HASH_MISMATCH: [^\n]*\n$/);

    const gap = await audit(`${ex.root1},${ex.root2}`, '--proof', file, '--start-epoch', '2');
    assert.equal(gap.code, 1);
    assert.match(gap.stderr, /^error: AUDIT_EPOCH_GAP: /);

    const short = await audit(ex.root1, '--proof', file);
    assert.equal(short.code, 1);
    assert.match(short.stderr, /^error: AUDIT_LENGTH_MISMATCH: /);
  });

  test(`${ex.config}: malformed --hashes and --start-epoch exit 2`, async () => {
    for (const [hashes, message] of [
      [`${ex.root1},`, /empty item/],
      [`${ex.root1},abcd`, /--hashes item 2: expected 32 bytes/],
      [`${ex.root1};${ex.root2}`, /--hashes item 1: expected hex/],
    ] as const) {
      const r = await audit(hashes, '--proof', file);
      assert.equal(r.code, 2, hashes);
      assert.match(r.stderr, message);
    }
    const epoch = await audit(`${ex.root1},${ex.root2}`, '--proof', file, '--start-epoch', 'x');
    assert.equal(epoch.code, 2);
    assert.match(epoch.stderr, /--start-epoch: expected a non-negative integer/);
    const missing = await akd(['verify', 'audit', '--config', ex.config, '--proof', file]);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /required option '--hashes/);
  });
}

test('experimental: --domain-label changes every hash, so another label fails', async () => {
  const ex = EXAMPLES[1]!;
  const file = tmp.write('domain.bin', fromHex(ex.proof));
  const args = [
    'verify',
    'audit',
    '--config',
    'experimental',
    '--hashes',
    `${ex.root1},${ex.root2}`,
  ];
  const same = await akd([...args, '--domain-label', 'ExampleLabel', '--proof', file, '--json']);
  assert.equal(same.code, 0, same.stderr);
  assert.equal((JSON.parse(same.stdout) as { domainLabel: string }).domainLabel, 'ExampleLabel');
  const other = await akd([...args, '--domain-label', 'OtherLabel', '--proof', file]);
  assert.equal(other.code, 1);
  assert.match(other.stderr, /^error: AUDIT_/);
});
