import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  decodeLookupProof,
  encodeLookupProof,
  signWitness,
  toHex,
  witnessPublicKey,
  witnessSignatureToJson,
} from '@akd-ts/core';
import { run } from '../src/program.js';
import { akd, tempDir, vectorCase, withOption, withoutOption } from './helpers.js';

const tmp = tempDir();
after(tmp.cleanup);

/** stderr of a failure: exactly one line, and never a stack trace. */
function oneLine(stderr: string): string {
  const lines = stderr.trimEnd().split('\n');
  assert.equal(lines.length, 1, `one line of stderr, got: ${stderr}`);
  assert.doesNotMatch(stderr, /\n\s+at /);
  return lines[0]!;
}

for (const name of ['whatsapp_v1', 'experimental'] as const) {
  const c = vectorCase(name, tmp.write);
  const lookup = (...extra: string[]) => akd(['verify', 'lookup', ...c.base, ...extra]);
  const history = (...extra: string[]) => akd(['verify', 'history', ...c.base, ...extra]);

  describe(`${name}: verify lookup`, () => {
    test('prints the proven epoch, version and value', async () => {
      const r = await lookup('--proof', c.lookupFile);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stderr, '');
      const lines = r.stdout.trimEnd().split('\n');
      assert.equal(lines[0], `lookup verified: label 16 (${name})`);
      // what was checked: this root, whose epoch is the caller's word
      assert.equal(
        lines[1],
        `checked against root hash ${toHex(c.vectors.epochHash)}, which you gave as the root of epoch 49: the proof does not show which epoch a root is, so that epoch is only as good as its source`,
      );
      assert.deepEqual(lines.slice(2), ['epoch: 48', 'version: 3', 'value: 16,48']);
    });

    test('--json prints one line of JSON with the value as text and hex', async () => {
      const r = await lookup('--proof', c.lookupFile, '--json');
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout.trimEnd().split('\n').length, 1);
      const out = JSON.parse(r.stdout) as Record<string, unknown>;
      assert.equal(out['proof'], 'lookup');
      assert.equal(out['verified'], true);
      assert.equal(out['configuration'], name);
      assert.equal(out['rootEpoch'], 49);
      assert.equal(out['rootHash'], toHex(c.vectors.epochHash));
      assert.equal(out['rootEpochFrom'], 'caller');
      assert.equal(out['epoch'], 48);
      assert.equal(out['version'], 3);
      assert.equal(out['value'], '16,48');
      assert.equal(out['valueHex'], toHex(new TextEncoder().encode('16,48')));
      assert.equal(out['label'], '16');
      assert.equal(out['labelHex'], '3136');
      if (name === 'experimental') assert.equal(out['domainLabel'], 'ExampleLabel');
      else assert.equal(out['domainLabel'], undefined);
    });

    test('--proof-hex, upper-case hex inputs and hex: labels are accepted', async () => {
      const upper = withOption(
        withOption(c.base, '--public-key', toHex(c.vectors.publicKey).toUpperCase()),
        '--label',
        'hex:3136',
      );
      const r = await akd([
        'verify',
        'lookup',
        ...upper,
        '--proof-hex',
        toHex(c.vectors.lookupProof).toUpperCase(),
      ]);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /^value: 16,48$/m);
    });

    test('--proof - and --proof-hex - read stdin', async () => {
      const bytes = await akd(['verify', 'lookup', ...c.base, '--proof', '-'], {
        stdin: c.vectors.lookupProof,
      });
      assert.equal(bytes.code, 0, bytes.stderr);
      assert.match(bytes.stdout, /^version: 3$/m);
      const hex = await akd(['verify', 'lookup', ...c.base, '--proof-hex', '-'], {
        stdin: `${toHex(c.vectors.lookupProof)}\n`,
      });
      assert.equal(hex.code, 0, hex.stderr);
    });

    test('a tampered proof exits 1 with its error code on one line', async () => {
      const proof = decodeLookupProof(c.vectors.lookupProof);
      const sibling = proof.existenceProof.siblingProofs[2]!.siblings[0];
      sibling.value = sibling.value.slice();
      sibling.value[5]! ^= 0x10;
      const file = tmp.write(`${name}-tampered.bin`, encodeLookupProof(proof));
      const r = await lookup('--proof', file);
      assert.equal(r.code, 1);
      assert.equal(r.stdout, '');
      assert.match(oneLine(r.stderr), /^error: VERIFY_ROOT_MISMATCH: /);
    });

    test('a proof for another label, root or configuration exits 1', async () => {
      const wrongLabel = await akd([
        'verify',
        'lookup',
        ...withOption(c.base, '--label', '17'),
        '--proof',
        c.lookupFile,
      ]);
      assert.equal(wrongLabel.code, 1);
      assert.match(oneLine(wrongLabel.stderr), /^error: VRF_VERIFY_FAILED: /);
      // the key is right: the label given is the likely mistake, and it is named as typed
      assert.match(wrongLabel.stderr, /for label "17" .*the proof is of another label/);

      const other = name === 'whatsapp_v1' ? 'experimental' : 'whatsapp_v1';
      const wrongConfig = await akd([
        'verify',
        'lookup',
        ...withOption(c.base, '--config', other),
        '--proof',
        c.lookupFile,
      ]);
      assert.equal(wrongConfig.code, 1);
      // the configurations share the VRF but not the commitment: the leaf does not match
      assert.match(oneLine(wrongConfig.stderr), /^error: VERIFY_VALUE_MISMATCH: /);

      const wrongRoot = await akd([
        'verify',
        'lookup',
        ...withOption(c.base, '--root', '00'.repeat(32)),
        '--proof',
        c.lookupFile,
      ]);
      assert.equal(wrongRoot.code, 1);
      assert.match(oneLine(wrongRoot.stderr), /^error: VERIFY_ROOT_MISMATCH: /);
      assert.match(wrongRoot.stderr, /the proof of label "16" does not lead to the trusted root/);
      assert.doesNotMatch(wrongRoot.stderr, /0x[0-9a-f]+\.\.\., 256\)/);
    });

    test('bytes that are not a lookup proof exit 1 with DECODE_MALFORMED', async () => {
      const r = await lookup('--proof-hex', 'ffff');
      assert.equal(r.code, 1);
      assert.match(oneLine(r.stderr), /^error: DECODE_MALFORMED: LookupProof: /);
    });
  });

  describe(`${name}: verify history`, () => {
    test('a complete history gives every version, newest first', async () => {
      const r = await history('--proof', c.completeFile);
      assert.equal(r.code, 0, r.stderr);
      assert.deepEqual(r.stdout.trimEnd().split('\n'), [
        `history verified: label 16 (${name}), 3 versions, newest first`,
        `checked against root hash ${toHex(c.vectors.epochHash)}, which you gave as the root of epoch 49: the proof does not show which epoch a root is, so that epoch is only as good as its source`,
        'version 3: epoch 48, value 16,48',
        'version 2: epoch 32, value 16,32',
        'version 1: epoch 16, value 16,16',
      ]);
      const json = await history('--proof', c.completeFile, '--json');
      const out = JSON.parse(json.stdout) as { versions: { version: number; value: string }[] };
      assert.deepEqual(
        out.versions.map((v) => [v.version, v.value]),
        [
          [3, '16,48'],
          [2, '16,32'],
          [1, '16,16'],
        ],
      );
    });

    test('--most-recent 1 verifies the one-version proof', async () => {
      const r = await history('--most-recent', '1', '--proof', c.mostRecent1File, '--json');
      assert.equal(r.code, 0, r.stderr);
      const out = JSON.parse(r.stdout) as { versions: { epoch: number }[] };
      assert.deepEqual(
        out.versions.map((v) => v.epoch),
        [48],
      );
      const text = await history('--most-recent', '1', '--proof', c.mostRecent1File);
      assert.match(text.stdout, /1 version, newest first\n.*\nversion 3: epoch 48, value 16,48\n$/);
    });

    test('--allow-tombstones still verifies a history without tombstones', async () => {
      const r = await history('--allow-tombstones', '--proof', c.completeFile);
      assert.equal(r.code, 0, r.stderr);
    });

    test('history parameters other than the requested ones exit 1', async () => {
      const r = await history('--most-recent', '1', '--proof', c.completeFile);
      assert.equal(r.code, 1);
      assert.match(oneLine(r.stderr), /^error: VERIFY_HISTORY: /);
    });
  });
}

describe('usage errors exit 2 with a clear message and no stack trace', () => {
  const c = vectorCase('whatsapp_v1', tmp.write);
  const cases: [string, string[], RegExp][] = [
    [
      'missing --root',
      withoutOption(c.base, '--root'),
      /give the root to check against: --root <hex> with --epoch <n>, or --signed-head <file> with --auditor-key <hex>/,
    ],
    ['missing --epoch', withoutOption(c.base, '--epoch'), /give the root to check against/],
    [
      '--auditor-key without --signed-head',
      [...c.base, '--auditor-key', '00'.repeat(32)],
      /--auditor-key needs --signed-head/,
    ],
    ['bad hex', withOption(c.base, '--root', 'zz'.repeat(32)), /--root: expected hex/],
    ['0x prefix', withOption(c.base, '--root', '0x00'), /without a 0x prefix/],
    ['odd hex', withOption(c.base, '--root', 'abc'), /--root: odd number of hex digits/],
    ['short root', withOption(c.base, '--root', 'ab'), /--root: expected 32 bytes/],
    ['bad label hex', withOption(c.base, '--label', 'hex:xy'), /--label: expected hex/],
    ['bad epoch', withOption(c.base, '--epoch', 'forty'), /--epoch: expected a non-negative/],
    ['negative epoch', withOption(c.base, '--epoch', '-1'), /--epoch: expected a non-negative/],
    ['epoch beyond u64', withOption(c.base, '--epoch', '18446744073709551616'), /64 bits/],
    [
      'invalid public key',
      withOption(c.base, '--public-key', '00'.repeat(32)),
      /--public-key: VRF public key/,
    ],
    ['unknown configuration', withOption(c.base, '--config', 'v2'), /Allowed choices/],
    ['domain label for whatsapp_v1', [...c.base, '--domain-label', 'x'], /--domain-label applies/],
  ];
  for (const [what, args, message] of cases) {
    test(what, async () => {
      const r = await akd(['verify', 'lookup', ...args, '--proof', c.lookupFile]);
      assert.equal(r.code, 2, r.stderr);
      assert.equal(r.stdout, '');
      assert.match(r.stderr, /^usage error: /);
      assert.match(r.stderr, message);
      assert.match(r.stderr, /\(see 'akd verify lookup --help'\)\n$/);
      assert.doesNotMatch(r.stderr, /\n\s+at /);
    });
  }

  test('no proof, two proofs, a missing file, a directory', async () => {
    const none = await akd(['verify', 'lookup', ...c.base]);
    assert.equal(none.code, 2);
    assert.match(none.stderr, /a proof is required/);
    const both = await akd(['verify', 'lookup', ...c.base, '--proof', '-', '--proof-hex', '00']);
    assert.equal(both.code, 2);
    assert.match(both.stderr, /cannot be used with/);
    const missing = await akd(['verify', 'lookup', ...c.base, '--proof', `${tmp.dir}/nope.bin`]);
    assert.equal(missing.code, 2);
    assert.match(
      missing.stderr,
      /^usage error: --proof: cannot read ".*nope\.bin": no such file$/m,
    );
    const dir = await akd(['verify', 'lookup', ...c.base, '--proof', tmp.dir]);
    assert.equal(dir.code, 2);
    assert.match(dir.stderr, /is a directory/);
  });

  test('bad --most-recent', async () => {
    for (const n of ['0', 'one', '1.5']) {
      const r = await akd(['verify', 'history', ...c.base, '--most-recent', n, '--proof', '-']);
      assert.equal(r.code, 2, n);
      assert.match(r.stderr, /--most-recent: expected a positive integer/);
    }
  });

  test('unknown commands and options, and no command at all', async () => {
    const sub = await akd(['verify', 'lookupp']);
    assert.equal(sub.code, 2);
    assert.match(sub.stderr, /^usage error: unknown command 'lookupp'/);
    assert.match(sub.stderr, /Did you mean lookup\?/);
    const top = await akd(['frobnicate']);
    assert.equal(top.code, 2);
    assert.match(top.stderr, /unknown command 'frobnicate'/);
    const option = await akd(['verify', 'lookup', ...c.base, '--frobnicate']);
    assert.equal(option.code, 2);
    assert.match(option.stderr, /unknown option '--frobnicate'/);
    for (const args of [[], ['verify']]) {
      const r = await akd(args);
      assert.equal(r.code, 2, args.join(' '));
      assert.match(r.stderr, /^Usage: akd/);
    }
  });
});

describe('help and version', () => {
  test('akd --help lists the commands and the exit statuses', async () => {
    const r = await akd(['--help']);
    assert.equal(r.code, 0);
    assert.equal(r.stderr, '');
    assert.match(r.stdout, /^Usage: akd \[options\] \[command\]/);
    assert.match(r.stdout, /verify\s+verify proofs offline/);
    assert.match(r.stdout, /Exit status:\n {2}0 {2}.*\n {2}1 {2}.*\n {2}2 {2}usage error/);
  });

  for (const sub of ['lookup', 'history', 'audit']) {
    test(`akd verify ${sub} --help describes each option and gives an example`, async () => {
      const r = await akd(['verify', sub, '--help']);
      assert.equal(r.code, 0);
      for (const option of ['--config', '--domain-label', '--proof', '--proof-hex', '--json']) {
        assert.match(r.stdout, new RegExp(`^ {2}${option}(?: <[^>]+>)? {2,}\\S`, 'm'), option);
      }
      assert.match(r.stdout, new RegExp(`Example:\\n {2}\\$ akd verify ${sub} --config`));
    });
  }

  test('akd --version prints the package version', async () => {
    const r = await akd(['--version']);
    assert.equal(r.code, 0);
    assert.match(r.stdout, /^\d+\.\d+\.\d+\n$/);
  });
});

describe('unexpected failures', () => {
  test('exit 1 with one line, and a stack trace only when AKD_DEBUG=1', async () => {
    const c = vectorCase('whatsapp_v1', tmp.write);
    const args = ['verify', 'lookup', ...c.base, '--proof', c.lookupFile];
    const io = (env: Record<string, string>) => ({
      stdout: {
        write: () => {
          throw new Error('disk full\nsecond line');
        },
      },
      stderr: { write: (s: string) => (stderr += s) },
      stdin: (async function* () {})(),
      env,
    });
    let stderr = '';
    assert.equal(await run(args, io({})), 1);
    assert.equal(
      oneLine(stderr),
      'error: unexpected Error: disk full second line (set AKD_DEBUG=1 for a stack trace)',
    );
    stderr = '';
    assert.equal(await run(args, io({ AKD_DEBUG: '1' })), 1);
    assert.match(stderr, /^error: unexpected Error: disk full second line\nError: disk full/);
    assert.match(stderr, /\n\s+at /);
  });
});

describe('a signed head binds the root to its epoch', () => {
  const c = vectorCase('whatsapp_v1', tmp.write);
  const auditorSecret = new Uint8Array(32).fill(9);
  const auditorKey = toHex(witnessPublicKey(auditorSecret));
  const namespace = 'https://kt.example/v1/audit-blobs';
  const head = (epoch: bigint, rootHash: Uint8Array = c.vectors.epochHash) =>
    witnessSignatureToJson(
      signWitness(
        { ciphersuite: 1, namespace, epoch, timestamp: 1_700_000_000_000n, digest: rootHash },
        auditorSecret,
      ),
    );
  const lines = (...heads: object[]) =>
    new TextEncoder().encode(heads.map((h) => JSON.stringify(h)).join('\n') + '\n');
  // a heads file as akd audit verify --heads writes it: the newest head last
  const headsFile = tmp.write('heads.jsonl', lines(head(48n, new Uint8Array(32)), head(49n)));
  const bare = withoutOption(withoutOption(c.base, '--root'), '--epoch');
  const signed = (key: string) => ['--signed-head', headsFile, '--auditor-key', key];
  const check = (...extra: string[]) =>
    akd(['verify', 'lookup', ...bare, '--proof', c.lookupFile, ...extra]);
  /** With the head and --root/--epoch options `base` gives as well. */
  const withHead = (base: string[]) =>
    akd(['verify', 'lookup', ...base, '--proof', c.lookupFile, ...signed(auditorKey)]);

  test("the proof is checked against the head's root and epoch, and the output says who bound them", async () => {
    const r = await check(...signed(auditorKey));
    assert.equal(r.code, 0, r.stderr);
    assert.equal(
      r.stdout.split('\n')[1],
      `checked against root hash ${toHex(c.vectors.epochHash)}, the root of epoch 49 in a head signed by auditor ${auditorKey} for "${namespace}" at 2023-11-14T22:13:20.000Z`,
    );
    const json = await check(...signed(auditorKey), '--json');
    const out = JSON.parse(json.stdout) as Record<string, unknown>;
    assert.equal(out['rootEpochFrom'], 'signed-head');
    assert.equal(out['rootEpoch'], 49);
    assert.deepEqual(out['signedHead'], head(49n));
    // --root and --epoch may be given too, when they are the head's
    const both = await withHead(c.base);
    assert.equal(both.code, 0, both.stderr);
  });

  test('another auditor, an edited head, or a root or epoch that disagrees with it is refused', async () => {
    const other = toHex(witnessPublicKey(new Uint8Array(32).fill(8)));
    const wrongKey = await check(...signed(other));
    assert.equal(wrongKey.code, 1);
    assert.match(
      oneLine(wrongKey.stderr),
      /^error: WITNESS_KEY_MISMATCH: the signature names key id \d+, not \d+ of witness key [0-9a-f]{64}$/,
    );
    const edited = tmp.write('edited.json', lines({ ...head(49n), epoch: 50 }));
    const forged = await check('--signed-head', edited, '--auditor-key', auditorKey);
    assert.equal(forged.code, 1);
    assert.match(
      oneLine(forged.stderr),
      /^error: WITNESS_MESSAGE_MISMATCH: serialized_message is not the encoding of the signed fields$/,
    );
    // without its serialized message the fields are what is checked: the signature fails
    const noMessage: Record<string, unknown> = { ...head(49n), epoch: 50 };
    delete noMessage['serialized_message'];
    const resigned = await check(
      '--signed-head',
      tmp.write('resigned.json', lines(noMessage)),
      '--auditor-key',
      auditorKey,
    );
    assert.equal(resigned.code, 1);
    assert.match(
      oneLine(resigned.stderr),
      /^error: WITNESS_SIGNATURE_INVALID: the witness signature of .* epoch 50 does not verify$/,
    );
    const shortDigest = witnessSignatureToJson(
      signWitness(
        { ciphersuite: 2, namespace, epoch: 49n, timestamp: 0n, digest: new Uint8Array(31) },
        auditorSecret,
      ),
    );
    const notRoot = await check(
      '--signed-head',
      tmp.write('short.json', lines(shortDigest)),
      '--auditor-key',
      auditorKey,
    );
    assert.equal(notRoot.code, 1);
    assert.match(oneLine(notRoot.stderr), /^error: DECODE_INVALID_LENGTH: .*31 bytes/);
    const epoch = await withHead(withOption(c.base, '--epoch', '48'));
    assert.equal(epoch.code, 2);
    assert.match(epoch.stderr, /^usage error: --epoch: the signed head is for epoch 49\n/);
    const root = await withHead(withOption(c.base, '--root', '11'.repeat(32)));
    assert.equal(root.code, 2);
    assert.match(
      root.stderr,
      /^usage error: --root: the signed head's root hash is [0-9a-f]{64}\n/,
    );
    const noKey = await check('--signed-head', headsFile);
    assert.equal(noKey.code, 2);
    assert.match(noKey.stderr, /--signed-head needs --auditor-key/);
    const malformed = await check(
      '--signed-head',
      tmp.write('bad.json', lines({ epoch: '1' })),
      '--auditor-key',
      auditorKey,
    );
    assert.equal(malformed.code, 1);
    assert.match(
      oneLine(malformed.stderr),
      /^error: WITNESS_DECODE: witness signature: ciphersuite is missing$/,
    );
    const notJson = await check(
      '--signed-head',
      tmp.write('not.json', new TextEncoder().encode('hello\n')),
      '--auditor-key',
      auditorKey,
    );
    assert.equal(notJson.code, 2);
    assert.match(notJson.stderr, /--signed-head: ".*not\.json" holds no JSON head/);
    const missing = await check(
      '--signed-head',
      '/nonexistent/head.json',
      '--auditor-key',
      auditorKey,
    );
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /--signed-head: cannot read "\/nonexistent\/head.json"/);
  });
});
