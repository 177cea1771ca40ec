/**
 * HTTP server under load: lookups per second and p50/p99 latency at a fixed concurrency, on
 * its own and while publishes run on the same server, with autocannon against 127.0.0.1.
 *
 *   npm run bench -- server-load [--json] [--quick] [--users 10000] [--connections 16]
 *                                [--seconds 10] [--publish 5000] [--format protobuf|json]
 *
 * The server (buildApp + startServer over an in-memory Directory holding `--users` labels,
 * publishing enabled) runs in a child process, so the load generator has the other core to
 * itself. Each lookup asks for a random existing label (protobuf by default, as the web page
 * does). Phase 1 measures lookups alone; phase 2 the same while the parent publishes batches
 * of `--publish` new labels back to back through POST /v1/publish for the whole window, so
 * every lookup of phase 2 competes with a publish. Any error or non-2xx answer fails the run.
 * Bounded: two windows of `--seconds` plus the set-up (the initial publish of `--users`).
 */

import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { configurationByName, encodeLookupProof, utf8 } from '@akd-ts/core';
import { MemoryDatabase, StorageManager } from '@akd-ts/storage';
import { Directory, InMemoryVrfKeyStore } from '@akd-ts/directory';
import { startServer } from '@akd-ts/server';

const TOKEN = 'bench-server-load-token-0123456789';

interface Histogram {
  average: number;
  p50: number;
  p99: number;
  max: number;
}
interface AutocannonResult {
  requests: Histogram & { total: number };
  latency: Histogram;
  duration: number;
  errors: number;
  timeouts: number;
  non2xx: number;
}
type Autocannon = (options: Record<string, unknown>) => Promise<AutocannonResult>;

function option(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 && process.argv[i + 1] !== undefined ? process.argv[i + 1]! : fallback;
}
const flag = (name: string) => process.argv.includes(`--${name}`);
const quick = flag('quick');
const settings = {
  users: Number(option('users', quick ? '2000' : '10000')),
  connections: Number(option('connections', '16')),
  seconds: Number(option('seconds', quick ? '4' : '10')),
  publish: Number(option('publish', quick ? '2000' : '5000')),
  format: option('format', 'protobuf') as 'protobuf' | 'json',
};
const label = (i: number) => `user-${i}@example.com`;

/** The child: a server over a directory of `users` labels; prints its URL on the IPC channel. */
async function serveChild(): Promise<void> {
  const users = Number(process.env['BENCH_USERS']);
  const dir = await Directory.open({
    config: configurationByName('whatsapp_v1'),
    storage: new StorageManager(new MemoryDatabase()),
    vrfKeys: InMemoryVrfKeyStore.generate(),
  });
  const started = performance.now();
  for (let i = 0; i < users; i += 5_000) {
    const batch = [];
    for (let j = i; j < Math.min(users, i + 5_000); j++) {
      batch.push({ label: utf8(label(j)), value: utf8(`key-${j}-1`) });
    }
    await dir.publish(batch);
  }
  const setupSeconds = (performance.now() - started) / 1000;
  // the cost of one proof in the server, without HTTP: sequential lookups plus encoding
  const t0 = performance.now();
  for (let i = 0; i < 200; i++) {
    const { proof } = await dir.lookup(utf8(label(Math.floor(Math.random() * users))));
    encodeLookupProof(proof);
  }
  const proofMs = (performance.now() - t0) / 200;
  const server = await startServer(
    { directory: dir, publishToken: TOKEN, processMetrics: false },
    { port: 0, host: '127.0.0.1' },
  );
  process.send!({ url: server.url, setupSeconds, proofMs, engine: dir.vrfEngineName });
  process.on('message', () => {
    void server.close().then(() => process.exit(0));
  });
}

async function main(): Promise<void> {
  const { default: autocannon } = (await import('autocannon' as string)) as {
    default: Autocannon;
  };
  const child = fork(fileURLToPath(import.meta.url), ['--child'], {
    env: { ...process.env, BENCH_USERS: String(settings.users) },
    execArgv: ['--conditions=source', '--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const ready = await new Promise<{
    url: string;
    setupSeconds: number;
    proofMs: number;
    engine: string;
  }>((resolve, reject) => {
    child.once('message', (m) => resolve(m as never));
    child.once('exit', (code) => reject(new Error(`the server exited (${code})`)));
  });
  const accept = settings.format === 'protobuf' ? 'application/x-protobuf' : 'application/json';
  const load = () =>
    autocannon({
      url: ready.url,
      connections: settings.connections,
      duration: settings.seconds,
      requests: [
        {
          method: 'GET',
          headers: { accept },
          setupRequest: (req: Record<string, unknown>) => ({
            ...req,
            path: `/v1/lookup/${encodeURIComponent(label(Math.floor(Math.random() * settings.users)))}`,
          }),
        },
      ],
    });

  const alone = await load();

  // phase 2: publishes back to back for the whole window
  let stop = false;
  let next = settings.users;
  const publishes: number[] = [];
  const publishing = (async () => {
    while (!stop) {
      const updates = Array.from({ length: settings.publish }, () => ({
        label: label(next),
        value: `key-${next++}-1`,
      }));
      const t0 = performance.now();
      const res = await fetch(`${ready.url}/v1/publish`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ updates }),
      });
      if (res.status !== 200)
        throw new Error(`publish answered ${res.status}: ${await res.text()}`);
      await res.arrayBuffer();
      publishes.push((performance.now() - t0) / 1000);
    }
  })();
  const during = await load();
  stop = true;
  await publishing;
  child.send('stop');
  await new Promise((resolve) => child.once('exit', resolve));

  const row = (name: string, r: AutocannonResult) => ({
    phase: name,
    lookupsPerSecond: Math.round(r.requests.total / r.duration),
    p50ms: r.latency.p50,
    p99ms: r.latency.p99,
    maxMs: r.latency.max,
    requests: r.requests.total,
    errors: r.errors + r.timeouts + r.non2xx,
  });
  const rows = [row('lookups alone', alone), row('lookups during publishes', during)];
  const publishSummary = {
    publishes: publishes.length,
    labelsPerPublish: settings.publish,
    medianSeconds: publishes.sort((a, b) => a - b)[Math.floor(publishes.length / 2)] ?? 0,
  };
  if (flag('json')) {
    for (const r of rows) console.log(JSON.stringify({ bench: 'server-load', ...settings, ...r }));
    console.log(JSON.stringify({ bench: 'server-load', phase: 'publish', ...publishSummary }));
    console.log(JSON.stringify({ bench: 'server-load', phase: 'proof', ms: ready.proofMs }));
  } else {
    console.log(
      `server-load: ${settings.users} labels (set up in ${ready.setupSeconds.toFixed(1)} s, VRF engine ${ready.engine}), ${settings.connections} connections, ${settings.seconds} s per phase, ${settings.format} answers`,
    );
    console.log(
      `one lookup proof in the server (no HTTP): ${ready.proofMs.toFixed(2)} ms (${Math.round(1000 / ready.proofMs)}/s on one core)`,
    );
    console.log('| phase | lookups/s | p50 ms | p99 ms | max ms | requests | errors |');
    console.log('| --- | ---: | ---: | ---: | ---: | ---: | ---: |');
    for (const r of rows) {
      console.log(
        `| ${r.phase} | ${r.lookupsPerSecond} | ${r.p50ms} | ${r.p99ms} | ${r.maxMs} | ${r.requests} | ${r.errors} |`,
      );
    }
    console.log(
      `publishes during phase 2: ${publishSummary.publishes} of ${settings.publish} new labels, median ${publishSummary.medianSeconds.toFixed(2)} s each`,
    );
  }
  const errors = rows.reduce((n, r) => n + r.errors, 0);
  if (errors > 0 || publishes.length === 0) {
    console.error(`server-load: FAILED (${errors} errors, ${publishes.length} publishes)`);
    process.exit(1);
  }
}

if (process.argv.includes('--child')) await serveChild();
else await main();
