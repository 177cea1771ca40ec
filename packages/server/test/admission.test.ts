// Admission under hostile clients, on real sockets: heavy-route slots are never leaked by
// clients that leave while they wait, slow bodies hold no slot, pipelined floods are closed,
// a connection's requests run a few at a time and wait while its answers are not read, the
// process bounds what runs at once, and requests Node lets through malformed get the
// catalogue's answer.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { EventEmitter, once } from 'node:events';
import type { IncomingMessage } from 'node:http';
import { buildApp, ERROR_CATALOGUE, type ServerErrorCode } from '@akd-ts/server';
import type { Directory } from '@akd-ts/directory';
import { demoDirectory, type Fixture } from './support.js';
import { get, portOf, rawClient, rawRequest, type RawAnswer } from './raw-http.js';
import { SLICE_BYTES } from '../src/request-gate.js';

let fixture: Fixture;
before(async () => {
  fixture = await demoDirectory();
});
after(() => fixture.close());

/**
 * `dir` with its lookups and histories held until `open()`: the test decides when each
 * request's work ends. `started` emits 'call' as each one begins.
 */
function holding(dir: Directory) {
  let open!: () => void;
  let gate = new Promise<void>((resolve) => (open = resolve));
  const calls = { running: 0, most: 0, started: 0 };
  const started = new EventEmitter();
  const held =
    (fn: (...args: never[]) => Promise<unknown>) =>
    async (...args: never[]) => {
      calls.running++;
      calls.most = Math.max(calls.most, calls.running);
      calls.started++;
      started.emit('call', calls.started);
      try {
        await gate;
        return await fn(...args);
      } finally {
        calls.running--;
      }
    };
  const directory = new Proxy(dir, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target) as unknown;
      if (typeof value !== 'function') return value;
      const bound = (value as (...args: never[]) => Promise<unknown>).bind(target);
      return prop === 'lookup' || prop === 'keyHistory' ? held(bound) : bound;
    },
  });
  return {
    directory,
    calls,
    /** Resolves once `n` held calls have started in all. */
    startedCalls: async (n: number) => {
      while (calls.started < n) await once(started, 'call');
    },
    open: () => {
      open();
    },
    /** Holds the calls that start from now on. */
    close: () => {
      gate = new Promise<void>((resolve) => (open = resolve));
    },
  };
}

/** A metric's value in the app's /metrics text. */
async function metric(port: number, name: string): Promise<number> {
  const res = await fetch(`http://127.0.0.1:${port}/metrics`);
  const line = new RegExp(`^${name.replace(/[{}"]/g, (c) => `\\${c}`)} (\\S+)$`, 'm');
  const value = line.exec(await res.text())?.[1];
  assert.ok(value !== undefined, `no metric ${name}`);
  return Number(value);
}

/** Polls `check` until true, failing after 30 s (a deadline, not a measure). */
async function until(what: string, check: () => Promise<boolean> | boolean): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!(await check())) {
    assert.ok(Date.now() < deadline, `timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

function assertCatalogued(answer: RawAnswer, code: ServerErrorCode) {
  const body = JSON.parse(answer.body) as { error: { code: string; message: string } };
  assert.equal(body.error.code, code, answer.body);
  assert.equal(answer.status, ERROR_CATALOGUE[code].status);
  assert.match(answer.headers, /content-type: application\/json/i);
}

async function listening(deps: Partial<Parameters<typeof buildApp>[0]> & { directory: never }) {
  const app = await buildApp({ processMetrics: false, ...deps });
  await app.listen({ port: 0, host: '127.0.0.1' });
  return { app, port: portOf(app) };
}

test('a request that leaves the heavy-route queue gives back nothing it never had: slots stay free', async () => {
  const held = holding(fixture.dir);
  const { app, port } = await listening({
    directory: held.directory as never,
    limits: { maxHeavyRequests: 2, maxHeavyQueued: 8 },
  });
  try {
    // two histories hold both slots; a third waits for one, then its client goes away
    const holders = await Promise.all([rawClient(port), rawClient(port)]);
    for (const h of holders) h.socket.write(get('/v1/history/alice'));
    await held.startedCalls(2);
    const leaver = await rawClient(port);
    leaver.socket.write(get('/v1/history/bob'));
    await until(
      'the third history waits',
      async () => (await metric(port, 'akd_heavy_requests_waiting')) === 1,
    );
    leaver.socket.destroy();
    await until(
      'the waiter left the queue',
      async () => (await metric(port, 'akd_heavy_requests_waiting')) === 0,
    );
    held.open();
    for (const h of holders) assert.equal((await h.waitFor(1))[0]!.status, 200);
    for (const h of holders) h.socket.destroy();
    await until(
      'both slots are free',
      async () => (await metric(port, 'akd_heavy_requests_running')) === 0,
    );
    // the leaver's history never ran: only the holders' two did
    assert.equal(held.calls.started, 2);
    // and the slots serve the next requests at once
    const next = await Promise.all(
      [0, 1].map(() => fetch(`http://127.0.0.1:${port}/v1/history/alice`)),
    );
    assert.deepEqual(
      next.map((r) => r.status),
      [200, 200],
    );
  } finally {
    await app.close();
  }
});

test('a request whose client left while it waited for its turn costs no proof', async () => {
  const asked: string[] = [];
  const directory = new Proxy(fixture.dir, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target) as unknown;
      if (typeof value !== 'function') return value;
      const bound = (value as (...args: unknown[]) => unknown).bind(target);
      if (prop !== 'lookup') return bound;
      return (label: Uint8Array) => {
        asked.push(Buffer.from(label).toString());
        return bound(label);
      };
    },
  });
  const { app, port } = await listening({ directory: directory as never });
  try {
    // bob's connection closes after his request has queued for its turn (its grant is an
    // immediate queued after this one), before the turn comes
    app.server.prependListener('request', (request: IncomingMessage) => {
      if (request.url === '/v1/lookup/bob') setImmediate(() => request.socket.destroy());
    });
    const leaver = await rawClient(port);
    leaver.socket.write(get('/v1/lookup/bob'));
    await leaver.closed;
    const other = await rawClient(port);
    other.socket.write(get('/v1/lookup/alice'));
    assert.equal((await other.waitFor(1))[0]!.status, 200);
    other.socket.destroy();
    assert.deepEqual(asked, ['alice'], "the leaver's lookup never ran");
  } finally {
    await app.close();
  }
});

test('a client that leaves while its heavy request runs frees the slot at once', async () => {
  const held = holding(fixture.dir);
  const { app, port } = await listening({
    directory: held.directory as never,
    limits: { maxHeavyRequests: 1, maxHeavyQueued: 0 },
  });
  try {
    const client = await rawClient(port);
    client.socket.write(get('/v1/history/alice'));
    await held.startedCalls(1);
    assert.equal(await metric(port, 'akd_heavy_requests_running'), 1);
    client.socket.destroy();
    await until(
      'the slot is free',
      async () => (await metric(port, 'akd_heavy_requests_running')) === 0,
    );
    held.open();
    assert.equal((await fetch(`http://127.0.0.1:${port}/v1/history/alice`)).status, 200);
  } finally {
    await app.close();
  }
});

test('a slow request body holds no heavy slot: the slot is taken once the body is read', async () => {
  const { app, port } = await listening({
    directory: fixture.dir as never,
    // no queue: a request finding both slots taken would be refused at once
    limits: { maxHeavyRequests: 2, maxHeavyQueued: 0 },
  });
  try {
    const body = JSON.stringify({ labels: ['alice', 'bob'] });
    const slow = await Promise.all([rawClient(port), rawClient(port)]);
    for (const s of slow) {
      s.socket.write(
        `POST /v1/lookup HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 5)}`,
      );
    }
    await until(
      'both bodies are being read',
      async () => (await metric(port, 'akd_http_requests_running')) >= 2,
    );
    assert.equal(await metric(port, 'akd_heavy_requests_running'), 0);
    const history = await fetch(`http://127.0.0.1:${port}/v1/history/alice`);
    assert.equal(history.status, 200, await history.text());
    // the bodies end: both batches are answered
    for (const s of slow) s.socket.write(body.slice(5));
    for (const s of slow) assert.equal((await s.waitFor(1))[0]!.status, 200);
    for (const s of slow) s.socket.destroy();
  } finally {
    await app.close();
  }
});

test('a connection sending more pipelined requests than the limit is closed; fewer are all answered in order', async () => {
  const { app, port } = await listening({
    directory: fixture.dir as never,
    http: { maxPipelined: 8 },
  });
  try {
    const polite = await rawClient(port);
    const labels = ['alice', 'bob', 'carol@example.com', 'nobody', 'alice', 'bob', 'alice', 'bob'];
    polite.socket.write(labels.map((l) => get(`/v1/lookup/${encodeURIComponent(l)}`)).join(''));
    const answers = await polite.waitFor(labels.length);
    assert.deepEqual(
      answers.map((a) => a.status),
      labels.map((l) => (l === 'nobody' ? 404 : 200)),
    );
    assert.deepEqual(
      answers.filter((a) => a.status === 200).map((a) => JSON.parse(a.body).label.text),
      labels.filter((l) => l !== 'nobody'),
    );
    polite.socket.destroy();

    const flood = await rawClient(port);
    flood.socket.write(get('/v1/lookup/alice').repeat(5_000));
    await flood.closed;
    assert.ok(flood.answers().length <= 8, `${flood.answers().length} answers`);
    assert.equal(await metric(port, 'akd_http_connections_closed_total{reason="pipelining"}'), 1);
    // the server goes on serving others
    assert.equal((await fetch(`http://127.0.0.1:${port}/v1/lookup/alice`)).status, 200);
  } finally {
    await app.close();
  }
});

test("a connection's pipelined requests run a few at a time, in order", async () => {
  const held = holding(fixture.dir);
  const { app, port } = await listening({
    directory: held.directory as never,
    http: { connectionConcurrency: 3, maxPipelined: 64 },
  });
  try {
    const client = await rawClient(port);
    client.socket.write(get('/v1/lookup/alice').repeat(20));
    await held.startedCalls(3);
    assert.equal(held.calls.running, 3, 'three run, the others wait');
    held.open();
    const answers = await client.waitFor(20);
    assert.ok(answers.every((a) => a.status === 200));
    assert.equal(held.calls.most, 3);

    client.socket.destroy();
  } finally {
    await app.close();
  }
});

test('the process runs a bounded number of requests, lets a bounded number wait, refuses the rest; probes never wait', async () => {
  const held = holding(fixture.dir);
  const { app, port } = await listening({
    directory: held.directory as never,
    http: { maxActiveRequests: 2, maxWaitingRequests: 1 },
  });
  try {
    const clients = await Promise.all([0, 1, 2].map(() => rawClient(port)));
    for (const c of clients) c.socket.write(get('/v1/lookup/alice'));
    await held.startedCalls(2);
    await until('one waits', async () => (await metric(port, 'akd_http_requests_waiting')) === 1);
    const refused = await rawClient(port);
    refused.socket.write(get('/v1/lookup/bob'));
    const [answer] = await refused.waitFor(1);
    assertCatalogued(answer!, 'HTTP_OVERLOADED');
    assert.match(answer!.headers, /retry-after: 1/i);
    // probes are answered while the process is full
    assert.equal((await fetch(`http://127.0.0.1:${port}/healthz`)).status, 200);
    assert.equal((await fetch(`http://127.0.0.1:${port}/livez`)).status, 200);
    held.open();
    for (const c of clients) assert.equal((await c.waitFor(1))[0]!.status, 200);
    assert.equal(held.calls.most, 2);
    for (const c of [...clients, refused]) c.socket.destroy();
  } finally {
    await app.close();
  }
});

test('requests Node lets through malformed get the catalogue answer; an absolute-form target is served', async () => {
  const { app, port } = await listening({ directory: fixture.dir as never });
  try {
    const noHost = await rawRequest(port, 'GET /v1/epoch HTTP/1.1\r\n\r\n');
    assertCatalogued(noHost, 'HTTP_BAD_REQUEST');
    assert.match(noHost.body, /Host header/);
    const star = await rawRequest(port, 'GET * HTTP/1.1\r\nHost: x\r\n\r\n');
    assertCatalogued(star, 'HTTP_BAD_REQUEST');
    assert.match(star.body, /origin form/);
    // bytes after a CONNECT, even in the same write, reach no parser: the connection's is
    // freed, and would otherwise be another connection's
    // (the gate feeds the parser 4 KiB at a time: the GET begins the second slice)
    const head = 'CONNECT example.com:443 HTTP/1.1\r\nHost: x\r\n\r\n';
    const filler = 'x'.repeat(SLICE_BYTES - head.length);
    const connect = await rawRequest(port, `${head}${filler}${get('/v1/lookup/alice')}`);
    assertCatalogued(connect, 'HTTP_NOT_FOUND');
    assert.match(connect.body, /no route CONNECT example\.com:443/);
    const after = await rawClient(port);
    after.socket.write(get('/v1/lookup/bob'));
    assert.equal((await after.waitFor(1))[0]!.status, 200);
    after.socket.destroy();
    // HTTP/1.0 needs no Host
    const old = await rawClient(port);
    old.socket.write('GET /v1/epoch HTTP/1.0\r\n\r\n');
    assert.equal((await old.waitFor(1))[0]!.status, 200);
    old.socket.destroy();
    const absolute = await rawClient(port);
    absolute.socket.write(get('http://example.com/v1/lookup/alice?x=1'));
    const [served] = await absolute.waitFor(1);
    assert.equal(served!.status, 200, served!.body);
    assert.equal(JSON.parse(served!.body).label.text, 'alice');
    absolute.socket.destroy();
  } finally {
    await app.close();
  }
});
