// A proof server's side of spreading connections (cluster/accept-gate.ts), on plain HTTP
// servers in this process: it reports its count of open connections, stops accepting as soon
// as it holds more than its limit while its connections go on being served, accepts again on
// the same port or on a socket handed to it, and reports a failed start instead of throwing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Agent, createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { once } from 'node:events';
import { gateAccepting } from '../src/cluster/accept-gate.js';

function get(port: number, agent: Agent | false): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/', agent }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve(body));
    });
    req.on('error', reject);
    req.end();
  });
}

async function listening(answer = 'ok'): Promise<{ server: Server; port: number }> {
  const server = createServer((_req, res) => res.end(answer));
  server.listen({ port: 0, host: '127.0.0.1' });
  await once(server, 'listening');
  return { server, port: (server.address() as AddressInfo).port };
}

/** Resolves when `check` holds, checking after each event-loop turn. */
async function until(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((resolve) => setImmediate(resolve));
}

test('past its limit a server stops accepting, keeps its connections, and starts again', async () => {
  const { server, port } = await listening();
  const counts: number[] = [];
  const confirmed: boolean[] = [];
  const gate = gateAccepting({
    server,
    listen: { port, host: '127.0.0.1' },
    onConnections: (count) => counts.push(count),
    onAccepting: (on) => confirmed.push(on),
  });
  assert.equal(gate.accepting, true);
  assert.equal(gate.limit, Infinity);
  gate.limit = 1;
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  assert.equal(await get(port, agent), 'ok');
  await until(() => counts.length > 0);
  assert.deepEqual(counts, [1], 'one report for the new connection');
  assert.deepEqual(confirmed, [], 'within its limit');

  // the second connection is past the limit: served, and the server stops accepting
  assert.equal(await get(port, false), 'ok');
  assert.deepEqual(confirmed, [false]);
  assert.equal(gate.accepting, false);
  assert.equal(server.listening, false);
  await assert.rejects(get(port, false), { code: 'ECONNREFUSED' });
  assert.equal(await get(port, agent), 'ok', 'the open connection is still served');
  await until(() => gate.connections === 1 && counts.at(-1) === 1);

  gate.limit = 10;
  gate.start();
  await until(() => confirmed.length === 2);
  assert.deepEqual(confirmed, [false, true]);
  assert.equal(gate.accepting, true);
  assert.equal(await get(port, false), 'ok', 'new connections again');
  gate.start(); // already accepting: confirmed again
  assert.deepEqual(confirmed, [false, true, true]);

  agent.destroy();
  await until(() => counts.at(-1) === 0);
  assert.equal(gate.connections, 0);
  server.close();
});

test('a server starts again on a socket handed to it', async () => {
  const { server, port } = await listening('gated');
  const donor = await listening('donor');
  const confirmed: boolean[] = [];
  const gate = gateAccepting({
    server,
    listen: { port, host: '127.0.0.1' },
    onConnections: () => {},
    onAccepting: (on) => confirmed.push(on),
  });
  gate.limit = 0;
  assert.equal(await get(port, false), 'gated');
  assert.deepEqual(confirmed, [false]);
  gate.limit = 5;
  gate.start(donor.server);
  await until(() => confirmed.length === 2);
  assert.deepEqual(confirmed, [false, true]);
  assert.equal((server.address() as AddressInfo).port, donor.port);
  assert.equal(await get(donor.port, false), 'gated', "accepting from the donor's socket");
  server.close();
});

test('a start that cannot listen is confirmed as not accepting, with the error', async () => {
  const { server, port } = await listening();
  const confirmed: [boolean, string | undefined][] = [];
  const gate = gateAccepting({
    server,
    listen: { port, host: '127.0.0.1' },
    onConnections: () => {},
    onAccepting: (on, error) => confirmed.push([on, (error as { code?: string })?.code]),
  });
  gate.limit = 0;
  await get(port, false);
  const other = await new Promise<Server>((resolve) => {
    const s = createServer((_req, res) => res.end('other'));
    s.listen({ port, host: '127.0.0.1' }, () => resolve(s));
  });
  const spare = await listening();
  gate.start();
  gate.start(spare.server); // ignored while a start is under way, and the socket closed
  await until(() => confirmed.length === 2);
  assert.deepEqual(confirmed, [
    [false, undefined],
    [false, 'EADDRINUSE'],
  ]);
  assert.equal(gate.accepting, false);
  assert.equal(spare.server.listening, false);
  other.close();
  await once(other, 'close');
  // once stopped, starts are ignored
  gate.stop();
  gate.start();
  await new Promise((resolve) => setTimeout(resolve, 20));
  assert.equal(confirmed.length, 2);
  assert.equal(server.listening, false);
});
