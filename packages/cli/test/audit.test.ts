import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { fromHex } from '@akd-ts/core';
import { akd, tempDir } from './helpers.js';

const tmp = tempDir();
after(tmp.cleanup);

// The spec 10.5 example (as in packages/core/test/audit.test.ts): publish [hello->world] at
// epoch 1, then [hello->world2, hi->there] at epoch 2, and audit(1, 2).
const EXAMPLES = [
  {
    config: 'whatsapp_v1',
    root1: 'b8d31596e8603a24f3a94bf42ecdcd8f87aee41f798220eb37ea02b4365e7bb4',
    root2: '565a0cf104305cddd624f7fd1cd8799148f2dd94c1ad6d1229118e78279c25ec',
    proof:
      '0aac020a490a250a20b0eb5864ae16a797ae0ffb2ad9073d57581c24c4f602f53cdabd58836291ac901080021220f0fcc7e8' +
      'bd6d86fac0d0b108eb2f6adc024513743769a0617717a3b9360c070b0a490a250a20b2bf229926955cb4f0af54ebef90d724' +
      'a552fb721b40a1c220658e1b6730fa9c10800212202d3adedff11b61f14c886e35afa036736dcd87a74d27b5c1510225d0f5' +
      '92e2130a490a250a20f3e5f535007982bb233742bf46ef575ee64529491cc1c8dd4e28f40d585cfbf01080021220ab314685' +
      'c563af7f23fea85cef35feed883490a5614014c955d159ef21f100b312490a250a2035973b407c2f9bbd7258e4b827ce6374' +
      'ada8cdb306616f4698a2324a14ac2be21080021220c808614ea61081d33722259ac79b3d589b52ec14deea8b3a7b371ab240' +
      'ccf0371001',
  },
  {
    config: 'experimental',
    root1: '794858bdd9e5057338815ce11b40b0ccbd1211e90fab10a4c43c0a608cb57fad',
    root2: '0dda6c0a34e8ee4683b5acb052bf127e91bad9dffe20aa822e2fa9a2c93bf624',
    proof:
      '0aac020a490a250a20479f2e2207236b59950445ee326c032b5fa53fd80bbaeaa83537c5d968bdb5d41080021220000000' +
      '00000000000000000000000000000000000000000000000000000000000a490a250a20b9ac121b2af1e5912df1f233afe900' +
      '87f204169c1042bed5fb9401e43f8e8f761080021220e73418c154676b03e5cdd2bec15e9f51960ae4b1eae9172fc879f731' +
      '00ba76640a490a250a20fe79c12d0f4cc19cbcab36ac3004a0a242ad4d2e538dff82cb89ebd96b38e3951080021220189a64' +
      '2babe44e75120a12e7f596826e93c21a8b2c4a9625e356b0cffe70778f12490a250a20e2be063020e44fedb3a3a884112cef' +
      'e21099ae8cd0bb5401e3dd4bb0f246c34d1080021220d7875c515584973ae13b18af01a4e129ba0eee994ee0d6690a1af9e5' +
      'ae1aaf041001',
  },
];

for (const ex of EXAMPLES) {
  const file = tmp.write(`${ex.config}-audit.bin`, fromHex(ex.proof));
  const audit = (hashes: string, ...extra: string[]) =>
    akd(['verify', 'audit', '--config', ex.config, '--hashes', hashes, ...extra]);

  test(`${ex.config}: the spec 10.5 audit proof verifies and prints the epoch range`, async () => {
    const r = await audit(`${ex.root1},${ex.root2}`, '--proof', file);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, `audit verified: epochs 1 -> 2 (${ex.config}), 1 append-only step\n`);

    const json = await audit(`${ex.root1}, ${ex.root2.toUpperCase()}`, '--proof', file, '--json');
    assert.equal(json.code, 0, json.stderr);
    const out = JSON.parse(json.stdout) as Record<string, unknown>;
    assert.deepEqual(
      [out['proof'], out['startEpoch'], out['endEpoch'], out['steps']],
      ['audit', 1, 2, 1],
    );

    const hex = await audit(
      `${ex.root1},${ex.root2}`,
      '--proof-hex',
      ex.proof,
      '--start-epoch',
      '1',
    );
    assert.equal(hex.code, 0, hex.stderr);
    const stdin = await audit(`${ex.root1},${ex.root2}`, '--proof', '-');
    assert.equal(stdin.code, 1, 'empty stdin is no proof');
  });

  test(`${ex.config}: swapped hashes, a wrong start epoch, too few hashes exit 1`, async () => {
    const swapped = await audit(`${ex.root2},${ex.root1}`, '--proof', file);
    assert.equal(swapped.code, 1);
    assert.equal(swapped.stdout, '');
    assert.match(swapped.stderr, /^error: AUDIT_[A-Z_]+: [^\n]*\n$/);

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
