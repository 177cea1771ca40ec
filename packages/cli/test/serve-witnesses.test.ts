// akd serve --witness KEY[@URL] --witness-namespace NS: the options' refusals, and a served
// head that carries the signature a polled witness (Plexi's API, as akd audit witness serves
// it) made of it, checked by the proof servers before they relay it.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import {
  fromHex,
  signWitness,
  toHex,
  witnessPublicKey,
  witnessSignatureToJson,
} from '@akd-ts/core';
import { buildWitnessApp } from '@akd-ts/server';
import { run } from '../src/program.js';
import { parseWitnesses } from '../src/commands/serve-witnesses.js';
import { UsageError } from '../src/errors.js';
import { akd, tempDir } from './helpers.js';
import { eventually } from './support/children.js';

const KEY = 'c9afa9d845ba75166b5c215767b1d6934e50c3db36e89b127b8a622b120f6721';
const SEED = new Uint8Array(32).fill(7);
const WITNESS = toHex(witnessPublicKey(SEED));
const tmp = tempDir();
after(tmp.cleanup);

test('--witness values: keys, URLs and the namespace are checked', () => {
  assert.equal(parseWitnesses(undefined, undefined), undefined);
  assert.deepEqual(parseWitnesses([WITNESS, 'AB'.repeat(32)], 'log'), {
    namespace: 'log',
    witnesses: [{ publicKey: WITNESS }, { publicKey: 'ab'.repeat(32) }],
  });
  assert.deepEqual(parseWitnesses([`${WITNESS}@https://w.example/plexi`], 'log'), {
    namespace: 'log',
    witnesses: [{ publicKey: WITNESS, url: 'https://w.example/plexi' }],
  });
  const refused: [string[] | undefined, string | undefined, RegExp][] = [
    [undefined, 'log', /give the witnesses too/],
    [[WITNESS], undefined, /give --witness-namespace too/],
    [['abcd'], 'log', /32-byte Ed25519 public key/],
    [[WITNESS, WITNESS.toUpperCase()], 'log', /given twice/],
    [[`${WITNESS}@not a url`], 'log', /is not a URL/],
    [[`${WITNESS}@file:///etc/passwd`], 'log', /http or https, not file:/],
  ];
  for (const [values, ns, message] of refused) {
    assert.throws(
      () => parseWitnesses(values, ns),
      (e: unknown) => {
        assert.ok(e instanceof UsageError);
        assert.match(e.message, message);
        return true;
      },
    );
  }
});

test('akd serve relays a polled witness signature of the head it serves', async () => {
  const db = `sqlite:${join(tmp.dir, 'witnessed.db')}`;
  const env = { AKD_VRF_KEY: KEY };
  assert.equal((await akd(['init', '--db', db, '--config', 'whatsapp_v1'], { env })).code, 0);
  const published = await akd(['publish', '--db', db, '-'], {
    env,
    stdin: '{"label":"alice","value":"k1"}\n',
  });
  assert.equal(published.code, 0, published.stderr);
  // the witness serves its heads file, empty until it has verified the directory
  const heads = join(tmp.dir, 'heads.jsonl');
  writeFileSync(heads, '');
  const witness = buildWitnessApp({ heads, keys: [] });
  const witnessUrl = await witness.listen({ port: 0, host: '127.0.0.1' });

  let stderr = '';
  let started: (url: string) => void = () => undefined;
  const listening = new Promise<string>((resolve) => (started = resolve));
  const done = run(
    [
      'serve',
      '--port',
      '0',
      '--db',
      db,
      '--workers',
      '1',
      '--log-level',
      'warn',
      '--witness',
      `${WITNESS}@${witnessUrl}`,
      '--witness-namespace',
      'test.log',
    ],
    {
      stdout: { write: () => true },
      stderr: {
        write: (s: string) => {
          stderr += s;
          const url = /akd serve: (http:\/\/\S+)\//.exec(stderr);
          if (url !== null) started(url[1]!);
          return true;
        },
      },
      stdin: Readable.from([]),
      env,
    },
  );
  try {
    // the line that names the URL; the runner's time limit names a server that never starts
    const url = await listening;
    const head = (await (await fetch(`${url}/v1/epoch`)).json()) as {
      epoch: string;
      rootHash: string;
      witnesses: unknown[];
    };
    assert.deepEqual(head.witnesses, [], 'nothing signed yet');
    // the witness signs the served head; the server asks again after its retry interval
    const signature = witnessSignatureToJson(
      signWitness(
        {
          ciphersuite: 1,
          namespace: 'test.log',
          timestamp: 1_700_000_000_000n,
          epoch: BigInt(head.epoch),
          digest: fromHex(head.rootHash),
        },
        SEED,
      ),
    );
    appendFileSync(heads, JSON.stringify(signature) + '\n');
    let carried: unknown[] = [];
    await eventually('the served head to carry the signature', async () => {
      const now = (await (await fetch(`${url}/v1/epoch`)).json()) as { witnesses: unknown[] };
      carried = now.witnesses;
      return carried.length > 0;
    });
    assert.deepEqual(carried, [signature]);
  } finally {
    process.emit('SIGTERM', 'SIGTERM');
    assert.equal(await done, 0, stderr);
    await witness.close();
  }
});
