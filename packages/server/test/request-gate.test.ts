// The request gate on its own, behind a plain Node HTTP server and with the test's clock:
// answers nobody reads stop the connection's next requests and, once stuck for the stall
// timeout, close it; a body that does not arrive in time gets a 408; idle connections and
// publish bodies are left alone.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EventEmitter, once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { RequestGate, type CloseReason } from '../src/request-gate.js';
import { rawClient } from './raw-http.js';

/** A server behind a gate with a clock of the test's; `handled` emits each request. */
async function gated(
  limits: ConstructorParameters<typeof RequestGate>[0],
  handler: (request: IncomingMessage, response: ServerResponse) => void,
  attach = false,
) {
  const closes: CloseReason[] = [];
  const refusals: string[] = [];
  let now = 1_000_000;
  const gate = new RequestGate(
    limits,
    { onClose: (r) => closes.push(r), onRefuse: (c) => refusals.push(c) },
    () => now,
  );
  const handled = new EventEmitter();
  let count = 0;
  const server = createServer(
    gate.wrap((request, response) => {
      count++;
      handled.emit('request', request);
      handler(request, response);
    }),
  );
  if (attach) gate.attach(server);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    gate,
    closes,
    refusals,
    port: (server.address() as { port: number }).port,
    handledCount: () => count,
    /** Resolves once `n` requests have reached the handler. */
    handledAt: async (n: number) => {
      while (count < n) await once(handled, 'request');
    },
    /** Moves the clock on by `ms` and sweeps. */
    advance: (ms: number) => {
      now += ms;
      gate.sweep();
    },
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
}

test('limits are positive integers', () => {
  assert.throws(() => new RequestGate({ maxPipelined: 0 }), /maxPipelined/);
  assert.throws(() => new RequestGate({ stallTimeoutMs: 1.5 }), /stallTimeoutMs/);
  assert.doesNotThrow(() => new RequestGate({ maxWaitingRequests: 0 }));
});

test('answers nobody reads: later requests wait unstarted, and the stuck connection closes after the stall timeout', async () => {
  const answer = Buffer.alloc(4 << 20, 'x'); // 4 MiB each: kernel buffers fill after a few
  const server = await gated({ stallTimeoutMs: 30_000, maxPipelined: 64 }, (_q, response) => {
    response.writeHead(200, { 'content-length': answer.length });
    response.end(answer);
  });
  try {
    const client = await rawClient(server.port);
    client.socket.pause();
    client.socket.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n'.repeat(32));
    await server.handledAt(1);
    // sweeps a simulated second apart, until the output has not moved for 30 of them: the
    // kernel's buffers hold a few answers, never all 32 (128 MiB)
    const deadline = Date.now() + 30_000;
    let sweeps = 0;
    while (server.closes.length === 0) {
      assert.ok(Date.now() < deadline, 'the stuck connection was never closed');
      await new Promise((resolve) => setTimeout(resolve, 5));
      server.advance(1_000);
      sweeps++;
    }
    assert.ok(sweeps >= 30, `closed after ${sweeps} sweeps, before the stall timeout`);
    assert.deepEqual(server.closes, ['stalled']);
    assert.ok(server.handledCount() < 32, `${server.handledCount()} of 32 started`);
    // a paused socket never reads the end: read what is left, then the close comes
    client.socket.resume();
    await client.closed;
    assert.equal(server.gate.stats.active, 0);
    assert.equal(server.gate.stats.connections, 0);
  } finally {
    server.close();
  }
});

test('an idle connection is never closed by the sweep, however long', async () => {
  const server = await gated({ stallTimeoutMs: 1_000 }, (_q, response) => response.end('ok'));
  try {
    const client = await rawClient(server.port);
    client.socket.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
    await client.waitFor(1);
    for (let i = 0; i < 5; i++) server.advance(10_000);
    assert.deepEqual(server.closes, []);
    client.socket.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n');
    assert.equal((await client.waitFor(2))[1]!.status, 200);
    client.socket.destroy();
  } finally {
    server.close();
  }
});

test("a body that does not arrive within the body timeout gets the catalogue's 408; a publish body is Node's to bound", async () => {
  const server = await gated({ bodyTimeoutMs: 10_000 }, (request, response) => {
    request.resume();
    request.on('end', () => response.end('read'));
  });
  try {
    const slow = await rawClient(server.port);
    slow.socket.write(
      'POST /v1/lookup HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"la',
    );
    const publish = await rawClient(server.port);
    publish.socket.write(
      'POST /v1/publish HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"up',
    );
    await server.handledAt(2);
    server.advance(9_999);
    assert.deepEqual(server.closes, []);
    server.advance(1);
    const [answer] = await slow.waitFor(1);
    assert.equal(answer!.status, 408);
    assert.equal(JSON.parse(answer!.body).error.code, 'HTTP_TIMEOUT');
    assert.match(answer!.body, /did not arrive within 10000 ms/);
    await slow.closed;
    assert.deepEqual(server.closes, ['body_timeout']);
    assert.deepEqual(server.refusals, ['HTTP_TIMEOUT']);
    // the publish goes on: its body may take as long as Node's request timeout allows
    server.advance(60_000);
    publish.socket.write('x'.repeat(96));
    assert.equal((await publish.waitFor(1))[0]!.body, 'read');
    publish.socket.destroy();
  } finally {
    server.close();
  }
});

test('a request whose connection already closed never reaches the handler', async () => {
  const server = await gated({ connectionConcurrency: 1, maxPipelined: 4 }, (_q, response) => {
    setImmediate(() => response.end('ok'));
  });
  try {
    const client = await rawClient(server.port);
    // five in one write: the fifth closes the connection, the rest of the chunk is dropped
    client.socket.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n'.repeat(50));
    await client.closed;
    assert.deepEqual(server.closes, ['pipelining']);
    assert.ok(server.handledCount() <= 1, `${server.handledCount()} handled`);
    assert.equal(server.gate.stats.active, 0);
  } finally {
    server.close();
  }
});

test('attached, the gate feeds the parser a slice at a time: a long pipelined write is parsed as requests are answered', async () => {
  // requests of about 1 KiB: four to a slice, fifty in one write
  const request = `GET / HTTP/1.1\r\nHost: x\r\nX-Pad: ${'p'.repeat(1000)}\r\n\r\n`;
  const serve = async (attach: boolean) => {
    const server = await gated(
      { connectionConcurrency: 1, maxPipelined: 8 },
      (_q, response) => setImmediate(() => response.end('ok')),
      attach,
    );
    const client = await rawClient(server.port);
    if (attach)
      assert.equal(server.gate.stats.fed, 1, "this Node's parser listeners are the expected ones");
    client.socket.write(request.repeat(50));
    return { server, client };
  };
  const fed = await serve(true);
  const answers = await fed.client.waitFor(50);
  assert.ok(answers.every((a) => a.status === 200 && a.body === 'ok'));
  assert.deepEqual(fed.server.closes, []);
  fed.client.socket.destroy();
  fed.server.close();

  // not attached, Node parses the whole write at once: the connection passes its limit
  const whole = await serve(false);
  await whole.client.closed;
  assert.deepEqual(whole.server.closes, ['pipelining']);
  assert.equal(whole.server.gate.stats.fed, 0);
  whole.server.close();
});
