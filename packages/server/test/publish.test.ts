// Publishing through the API: the token, what lookups see afterwards, the server answering
// during a publish, and logs that never hold the VRF key or the token.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { toHex, utf8 } from '@akd-ts/core';
import { startServer, type EpochJson, type LookupJson, type PublishJson } from '@akd-ts/server';
import { SECRET_HEX, TOKEN, captureLogs, demoApp, demoDirectory } from './support.js';

const auth = { authorization: `Bearer ${TOKEN}` };

test('a publish with the token creates an epoch that lookups see at once', async () => {
  const demo = await demoApp({ publishToken: TOKEN });
  const before = (await demo.app.inject({ url: '/v1/epoch' })).json() as EpochJson;
  assert.equal(before.publishing, true);
  const res = await demo.app.inject({
    method: 'POST',
    url: '/v1/publish',
    headers: { authorization: `bearer   ${TOKEN}` },
    payload: {
      updates: [
        { label: 'alice', value: 'alice-key-3' },
        { labelHex: '00ff', valueHex: 'a1b2' },
      ],
    },
  });
  assert.equal(res.statusCode, 200, res.body);
  const body = res.json() as PublishJson;
  assert.equal(body.epoch, '4');
  assert.equal(body.newEpoch, true);
  assert.equal(body.updates, 2);
  assert.equal(res.headers['x-akd-epoch'], '4');
  assert.equal(res.headers['x-akd-root-hash'], body.rootHash);
  assert.equal(body.rootHash, toHex((await demo.dir.getEpochHash()).hash));

  const alice = (await demo.app.inject({ url: '/v1/lookup/alice' })).json() as LookupJson;
  assert.equal(alice.epoch, '4');
  assert.equal(alice.claimed.version, '3');
  assert.equal(alice.claimed.value.text, 'alice-key-3');
  const raw = (await demo.app.inject({ url: '/v1/lookup/hex:00ff' })).json() as LookupJson;
  assert.equal(raw.claimed.value.hex, 'a1b2');

  const again = await demo.app.inject({
    method: 'POST',
    url: '/v1/publish',
    headers: auth,
    payload: { updates: [{ label: 'alice', value: 'alice-key-3' }] },
  });
  assert.deepEqual(
    { epoch: again.json().epoch, newEpoch: again.json().newEpoch },
    { epoch: '4', newEpoch: false },
  );
  const metrics = (await demo.app.inject({ url: '/metrics' })).body;
  assert.match(metrics, /^akd_publish_duration_seconds_count 2$/m);
  assert.match(metrics, /^akd_publish_updates_sum 3$/m);
  // the unchanged publish stops after the vrf phase (it had nothing to compute), and only the
  // epoch it made waited for its VRF proofs
  const phases = { versions: 2, vrf: 2, tree: 1, commit: 1, proofs: 1 };
  for (const [phase, count] of Object.entries(phases)) {
    assert.match(
      metrics,
      new RegExp(`^akd_publish_phase_seconds_count\\{phase="${phase}"\\} ${count}$`, 'm'),
    );
  }
  assert.match(metrics, /^akd_epoch 4$/m);
  await demo.close();
});

test('over a socket, the server answers lookups while a publish runs, then serves the new epoch', async () => {
  const fixture = await demoDirectory();
  const server = await startServer(
    { directory: fixture.dir, publishToken: TOKEN, processMetrics: false },
    { port: 0 },
  );
  const updates = Array.from({ length: 4_000 }, (_, i) => ({ label: `user-${i}`, value: `k${i}` }));
  let published = false;
  const publishing = fetch(`${server.url}/v1/publish`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json' },
    body: JSON.stringify({ updates }),
  }).then(async (res) => {
    published = true;
    return { status: res.status, body: (await res.json()) as PublishJson };
  });
  // three clients look up in a loop until the publish returns
  const during: string[] = [];
  const client = async () => {
    while (!published) {
      const res = await fetch(`${server.url}/v1/lookup/bob`);
      assert.equal(res.status, 200);
      const { epoch } = (await res.json()) as LookupJson;
      if (!published) during.push(epoch);
    }
  };
  await Promise.all([client(), client(), client()]);
  const res = await publishing;
  assert.equal(res.status, 200);
  assert.equal(res.body.epoch, '4');
  assert.ok(during.length >= 2, `lookups were answered during the publish (${during.length})`);
  assert.ok(during.every((e) => e === '3' || e === '4'));
  assert.equal(during[0], '3', 'before the commit, lookups see the old epoch');
  const after = (await (await fetch(`${server.url}/v1/lookup/user-7`)).json()) as LookupJson;
  assert.equal(after.epoch, '4');
  assert.equal(after.claimed.value.text, 'k7');
  await server.close();
});

test('logs during a publish never contain the VRF key, the token, labels or values', async () => {
  const { lines, logger } = captureLogs();
  const demo = await demoApp({ publishToken: TOKEN, logger });
  const res = await demo.app.inject({
    method: 'POST',
    url: '/v1/publish',
    headers: auth,
    payload: { updates: [{ label: 'secret-label-xyz', value: 'secret-value-xyz' }] },
  });
  assert.equal(res.statusCode, 200);
  await demo.app.inject({ url: '/v1/lookup/secret-label-xyz' });
  await demo.app.inject({ url: '/v1/lookup/nobody-xyz' });
  await demo.app.inject({
    method: 'POST',
    url: '/v1/publish',
    headers: { authorization: `Bearer ${TOKEN}-wrong` },
    payload: { updates: [] },
  });
  // a log call that is handed the token or a key by mistake is redacted
  demo.app.log.info({ publishToken: TOKEN, options: { secretKey: SECRET_HEX } }, 'options');
  await demo.close();

  const text = lines.join('\n');
  assert.ok(
    lines.some((l) => JSON.parse(l).msg === 'published'),
    'the publish was logged',
  );
  assert.ok(lines.some((l) => JSON.parse(l).route === '/v1/lookup/:label'));
  for (const secret of [
    SECRET_HEX,
    SECRET_HEX.toUpperCase(),
    Buffer.from(SECRET_HEX, 'hex').toString('base64'),
    TOKEN,
    'secret-label-xyz',
    toHex(utf8('secret-label-xyz')),
    'secret-value-xyz',
    'nobody-xyz',
  ]) {
    assert.ok(!text.includes(secret), `the log holds ${secret.slice(0, 12)}...`);
  }
  for (const line of lines) JSON.parse(line);
});

test('limits are the app options: too many updates in one request is DIRECTORY_LIMIT', async () => {
  const demo = await demoApp({ publishToken: TOKEN, limits: { maxPublishUpdates: 1 } });
  const res = await demo.app.inject({
    method: 'POST',
    url: '/v1/publish',
    headers: auth,
    payload: {
      updates: [
        { label: 'a', value: '1' },
        { label: 'b', value: '2' },
      ],
    },
  });
  assert.equal(res.statusCode, 400);
  assert.equal(res.json().error.code, 'DIRECTORY_LIMIT');
  assert.equal(res.json().error.field, 'updates');
  await demo.close();
});
