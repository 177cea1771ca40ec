/**
 * HTTP server under load: `akd serve` (the compiled CLI, as users run it) over a directory of
 * `--labels` labels in 11 epochs, with lookups/s, p50/p99/max latency, errors, the slowest
 * `/healthz` and the server's peak memory in four phases, beside upstream's lookup proofs/s.
 *
 *   npm run bench -- server-load [--json] [--quick] [--store memory,sqlite,postgres]
 *     [--workers N] [--labels 224000] [--epochs 8] [--publish 100000] [--connections 50]
 *     [--seconds 15] [--audits 8] [--lookup-keys 100000] [--lookup-count 2000]
 *     [--lookup-rounds 2] [--no-upstream] [--connection-spread]
 *     [--phases one,alone,audits,abuse,publish] [--store-dir DIR]
 *     [--pipeliners 30] [--pipelined 30000] [--slow-bodies 30] [--leavers 20] [--leave-ms 1]
 *
 * Per core first: lookup proof generation on one thread without HTTP (bench/support/
 * lookup-rate.ts) alternating with upstream's `akd-rs bench-lookup` over the same number of
 * keys, each run in a fresh process; the ratio is ours over upstream's.
 *
 * Then, per store (memory and SQLite by default; `--store postgres` uses
 * AKD_TEST_POSTGRES_URL, a schema of its own dropped afterwards): `akd serve --demo` (its
 * three small epochs) with a publish token, and `--epochs` publishes through
 * `POST /v1/publish` of `--labels` new labels in all (224,000 over 8 more epochs: 11 epochs).
 * A load generator in a process of its own (autocannon, `--connections`) asks for lookups of
 * random existing labels (protobuf answers, as the web page asks); a probe in another process
 * polls `/healthz` every 100 ms on a new connection (so that each poll may reach another proof
 * server; its row gives the five slowest polls as `ms@when`, when in ms since the phase
 * began), and this process samples the resident memory of every server process (the primary, the proof
 * servers, the writer) every 100 ms, and of each proof server its own memory apart (`RssAnon`:
 * without mapped files, among them the SQLite store a proof server reads through a map, whose
 * pages are the file system's cache); the heap-limit target is judged on the latter. Phases:
 *
 * 1. lookups alone, `--workers 1` (then that cluster stops; a memory store is rebuilt);
 * 2. lookups alone, `--workers N` (default: the available cores);
 * 3. lookups during a flood of `--audits` concurrent worst-case audits (`GET /v1/audit` of
 *    the whole range, from another process, each client asking again as soon as it has read
 *    an answer; 503s of the heavy-route limiter are counted apart, any other failure is an
 *    error);
 * 4. lookups during abuse (bench/support/abuse.ts), for `--seconds`: `--pipeliners`
 *    connections each writing `--pipelined` lookups at once and never reading, `--slow-bodies`
 *    connections sending a lookup body a byte a second, and `--leavers` clients asking for a
 *    key history and leaving `--leave-ms` later, before the answer, each coming back when
 *    closed. Afterwards ten
 *    key histories in a row must each be answered 200 (no heavy-route slot leaked), and no
 *    server process may have been started again;
 * 5. lookups during one publish of `--publish` new labels through `POST /v1/publish` (the
 *    window is the publish, from the request to its answer).
 *
 * `--store-dir DIR` keeps the SQLite store in DIR and reuses it in later runs (its writer has
 * then built nothing). `--phases` runs only the phases named (`one` is phase 1; without it the directory is built
 * in the cluster of phases 2-4). Memory is reported per process as well: `primary`,
 * `proof1`, `proof2`, ..., `writer`, when the phase began and at the moment of its peak.
 *
 * Each run of lookups is preceded by a short warm-up that is not counted. Any error, timeout
 * or non-2xx lookup answer fails the run (exit 1); the targets are printed with their
 * figures, met or not. `--quick` is a small run (20,000 labels, 10,000 published, 5 s phases).
 */

import { fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { lookupRate } from './support/lookup-rate.js';
import {
  largestProofAnonMb,
  startServe,
  processTree,
  proofPids,
  residentByRole,
  residentMb,
  type ServeProcess,
} from './support/serve-process.js';
import { measure, measureSelf, ratio, upstreamCommand } from './support/upstream.js';
import { abuseLoad, type AbuseOrder, type AbuseResult } from './support/abuse.js';
import { median } from './support/common.js';

const TOKEN = 'bench-server-load-token-0123456789';
const LOADER = fileURLToPath(new URL('../scripts/bench-loader.mjs', import.meta.url));

function option(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 && process.argv[i + 1] !== undefined ? process.argv[i + 1]! : fallback;
}
const flag = (name: string) => process.argv.includes(`--${name}`);
const quick = flag('quick');
const settings = {
  stores: option('store', 'memory,sqlite').split(','),
  workers: Number(option('workers', String(availableParallelism()))),
  labels: Number(option('labels', quick ? '20000' : '224000')),
  epochs: Number(option('epochs', '8')),
  publish: Number(option('publish', quick ? '10000' : '100000')),
  connections: Number(option('connections', '50')),
  seconds: Number(option('seconds', quick ? '5' : '15')),
  audits: Number(option('audits', '8')),
  lookupKeys: Number(option('lookup-keys', quick ? '20000' : '100000')),
  lookupCount: Number(option('lookup-count', quick ? '500' : '2000')),
  lookupRounds: Number(option('lookup-rounds', quick ? '1' : '2')),
  phases: new Set(option('phases', 'one,alone,audits,abuse,publish').split(',')),
  pipeliners: Number(option('pipeliners', '30')),
  pipelined: Number(option('pipelined', quick ? '10000' : '30000')),
  slowBodies: Number(option('slow-bodies', '30')),
  leavers: Number(option('leavers', '20')),
  leaveMs: Number(option('leave-ms', '1')),
};
for (const p of settings.phases) {
  if (!['one', 'alone', 'audits', 'abuse', 'publish'].includes(p)) {
    throw new Error(`--phases: one, alone, audits, abuse or publish, not ${p}`);
  }
}
/** The proof servers' heap limit (akd serve's default --proof-heap-mb). */
const PROOF_HEAP_MB = 512;
const json = flag('json');
const label = (i: number) => `user-${i}@example.com`;

// ---- child processes: the load generators, and the per-core lookup figure ----

interface Histogram {
  p50: number;
  p99: number;
  max: number;
}
interface AutocannonResult {
  requests: { total: number };
  latency: Histogram;
  duration: number;
  errors: number;
  timeouts: number;
  non2xx: number;
}
interface AutocannonInstance {
  stop(): void;
}
type Autocannon = (
  options: Record<string, unknown>,
  done: (err: Error | null, result: AutocannonResult) => void,
) => AutocannonInstance;

interface LoadOrder {
  kind: 'lookups' | 'audits' | 'health' | 'abuse';
  abuse?: AbuseOrder;
  url: string;
  seconds: number;
  connections: number;
  labels: number;
  to: number;
}

interface AuditResult {
  requests: number;
  ok: number;
  overloaded: number;
  failed: number;
  megabytes: number;
  maxMs: number;
  medianMs: number;
}

/**
 * The bench's 'stop' to a load generator, however early it comes: with the order itself, or
 * before the load has started (a short publish can end before autocannon is loaded).
 */
class StopSignal {
  requested = false;
  readonly #listeners: (() => void)[] = [];

  request(): void {
    if (this.requested) return;
    this.requested = true;
    for (const f of this.#listeners) f();
  }

  onStop(f: () => void): void {
    if (this.requested) f();
    else this.#listeners.push(f);
  }
}

/** Lookups of random existing labels with autocannon, until the time is up or 'stop'. */
async function lookupLoad(order: LoadOrder, stop: StopSignal): Promise<AutocannonResult> {
  const { default: autocannon } = (await import('autocannon' as string)) as {
    default: Autocannon;
  };
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: order.url,
        connections: order.connections,
        duration: order.seconds,
        requests: [
          {
            method: 'GET',
            headers: { accept: 'application/x-protobuf' },
            setupRequest: (req: Record<string, unknown>) => ({
              ...req,
              path: `/v1/lookup/${encodeURIComponent(label(Math.floor(Math.random() * order.labels)))}`,
            }),
          },
        ],
      },
      (err, result) => (err ? reject(err) : resolve(result)),
    );
    stop.onStop(() => instance.stop());
  });
}

/** `connections` clients each asking for the whole audit range again and again. */
async function auditLoad(order: LoadOrder, stop: StopSignal): Promise<AuditResult> {
  const until = performance.now() + order.seconds * 1000;
  const times: number[] = [];
  const result = { requests: 0, ok: 0, overloaded: 0, failed: 0, bytes: 0 };
  const client = async () => {
    while (!stop.requested && performance.now() < until) {
      const t0 = performance.now();
      result.requests++;
      try {
        const res = await fetch(`${order.url}/v1/audit?from=0&to=${order.to}`, {
          headers: { accept: 'application/x-protobuf' },
        });
        const reader = res.body!.getReader();
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          result.bytes += value.length;
        }
        if (res.status === 200) result.ok++;
        else if (res.status === 503 && res.headers.get('retry-after') !== null) {
          result.overloaded++;
          await new Promise((r) => setTimeout(r, 100));
        } else result.failed++;
      } catch {
        result.failed++;
      }
      times.push(performance.now() - t0);
    }
  };
  await Promise.all(Array.from({ length: order.connections }, client));
  return {
    requests: result.requests,
    ok: result.ok,
    overloaded: result.overloaded,
    failed: result.failed,
    megabytes: Math.round(result.bytes / 1e6),
    maxMs: Math.round(Math.max(0, ...times)),
    medianMs: times.length === 0 ? 0 : Math.round(median(times)),
  };
}

/** One GET /healthz on a new connection: its time in ms, and whether it answered 200. */
function pollHealth(url: string): Promise<{ ms: number; ok: boolean }> {
  const t0 = performance.now();
  return new Promise((resolve) => {
    const req = request(`${url}/healthz`, { agent: false, timeout: 30_000 }, (res) => {
      res.resume();
      res.on('end', () => resolve({ ms: performance.now() - t0, ok: res.statusCode === 200 }));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', () => resolve({ ms: performance.now() - t0, ok: false }));
    req.end();
  });
}

interface HealthResult {
  maxMs: number;
  polls: number;
  failures: number;
  /** The slowest polls: when each began (ms since the probe started) and how long it took. */
  slowest: { atMs: number; ms: number }[];
}

/**
 * /healthz every 100 ms until 'stop', as a liveness probe runs: in a process of its own, so
 * that nothing this bench process does (building a publish body, sampling memory) delays a
 * poll's answer.
 */
async function healthLoad(order: LoadOrder, stop: StopSignal): Promise<HealthResult> {
  const t0 = performance.now();
  const polls: { atMs: number; ms: number }[] = [];
  let failures = 0;
  while (!stop.requested) {
    const atMs = performance.now() - t0;
    const { ms, ok } = await pollHealth(order.url);
    polls.push({ atMs: Math.round(atMs), ms: Math.round(ms) });
    if (!ok) failures++;
    if (ms < 100) await new Promise((r) => setTimeout(r, 100 - ms));
  }
  const slowest = [...polls].sort((a, b) => b.ms - a.ms).slice(0, 5);
  return { maxMs: slowest[0]?.ms ?? 0, polls: polls.length, failures, slowest };
}

async function loadChild(): Promise<void> {
  const stop = new StopSignal();
  const order = new Promise<LoadOrder>((resolve) => {
    process.on('message', (m) => (m === 'stop' ? stop.request() : resolve(m as LoadOrder)));
  });
  // a bench that ends, or fails, takes its load generators with it
  process.on('disconnect', () => process.exit(0));
  // loaded: the bench starts its measurement once every generator of a phase is
  process.send!('ready');
  const o = await order;
  const abuse = async (order: LoadOrder, stopped: StopSignal) => {
    const until = performance.now() + order.seconds * 1000;
    return abuseLoad(order.abuse!, () => stopped.requested || performance.now() > until);
  };
  const run = { lookups: lookupLoad, audits: auditLoad, health: healthLoad, abuse }[o.kind];
  const result = await run(o, stop);
  process.send!(result, () => process.exit(0));
}

/** A load generator, loaded and waiting: `go` sends its order, `stop` ends it early. */
interface Load<T> {
  go: () => void;
  result: Promise<T>;
  stop: () => void;
}

/**
 * A load generator in a process of its own, once it has loaded: its start (a node process
 * compiling this file) takes a core for about half a second, which would otherwise fall in
 * the measured window and be counted against the server (a /healthz of 258 ms at 0.5 s into
 * an audit phase, the rest of it under 100 ms).
 */
async function forkLoad<T>(order: LoadOrder): Promise<Load<T>> {
  const child = fork(fileURLToPath(import.meta.url), ['--load-child'], {
    execArgv: ['--import', LOADER],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const exited = new Promise<never>((_, reject) =>
    child.once('exit', (code) => reject(new Error(`the load generator exited (${code})`))),
  );
  exited.catch(() => undefined);
  await Promise.race([new Promise((resolve) => child.once('message', resolve)), exited]);
  const result = Promise.race([
    new Promise<T>((resolve) => child.once('message', (m) => resolve(m as T))),
    exited,
  ]);
  return {
    go: () => child.send(order),
    result,
    stop: () => child.connected && child.send('stop'),
  };
}

/** A load generator, started once loaded. */
async function startLoad<T>(order: LoadOrder): Promise<{ result: Promise<T>; stop: () => void }> {
  const load = await forkLoad<T>(order);
  load.go();
  return load;
}

// ---- while a phase runs: the health probe (a child) and memory (this process) ----

interface Watch {
  healthMaxMs: number;
  healthPolls: number;
  healthFailures: number;
  /** The slowest polls, `ms@atMs` (atMs: since the phase began). */
  healthSlowest: string;
  /** Resident memory of the server processes when the phase began, and at most during it. */
  startRssMb: number;
  peakRssMb: number;
  /** Per process (primary, proof1, ..., writer), when the phase began and at its peak, MB. */
  startRoles: string;
  peakRoles: string;
  /** The most any one proof server held at any sample, MB. */
  maxProofMb: number;
  /**
   * The same, of its own memory alone (`RssAnon`): without the files it maps, the SQLite store
   * a proof server reads through a map among them, whose pages are the file system's cache.
   */
  maxProofAnonMb: number;
  /** Server processes started again during the phase (child pids that changed). */
  restarts: number;
}

const rolesText = (roles: Record<string, number>) =>
  Object.entries(roles)
    .map(([role, mb]) => `${role}=${mb}`)
    .join(' ');

async function watch(serve: ServeProcess): Promise<{ stop: () => Promise<Watch> }> {
  const probe = await forkLoad<HealthResult>({
    kind: 'health',
    url: serve.url,
    seconds: 0,
    connections: 1,
    labels: 0,
    to: 0,
  });
  const w: Watch = {
    healthMaxMs: 0,
    healthPolls: 0,
    healthFailures: 0,
    startRssMb: residentMb(processTree(serve.child.pid!)),
    peakRssMb: 0,
    startRoles: rolesText(residentByRole(serve.child.pid!)),
    peakRoles: '',
    healthSlowest: '',
    maxProofMb: 0,
    maxProofAnonMb: 0,
    restarts: 0,
  };
  const before = proofPids(serve.child.pid!);
  probe.go();
  const sample = () => {
    const roles = residentByRole(serve.child.pid!);
    const total = Object.values(roles).reduce((a, b) => a + b, 0);
    for (const [role, mb] of Object.entries(roles)) {
      if (role.startsWith('proof')) w.maxProofMb = Math.max(w.maxProofMb, mb);
    }
    w.maxProofAnonMb = Math.max(w.maxProofAnonMb, largestProofAnonMb(serve.child.pid!));
    if (total > w.peakRssMb) {
      w.peakRssMb = total;
      w.peakRoles = rolesText(roles);
    }
  };
  sample();
  const timer = setInterval(sample, 100);
  return {
    stop: async () => {
      clearInterval(timer);
      sample();
      // proof servers only: a writer hands over or sleeps by design
      const after = new Set(proofPids(serve.child.pid!));
      w.restarts = before.filter((pid) => !after.has(pid)).length;
      probe.stop();
      const health = await probe.result;
      w.healthMaxMs = health.maxMs;
      w.healthPolls = health.polls;
      w.healthFailures = health.failures;
      w.healthSlowest = health.slowest.map((p) => `${p.ms}@${p.atMs}`).join(' ');
      return w;
    },
  };
}

// ---- phases ----

/** A phase's line: the load generator's figures, then what `watch` saw (its fields). */
interface Row extends Watch {
  bench: 'server-load';
  store: string;
  phase: string;
  workers: number;
  lookupsPerSecond: number;
  p50ms: number;
  p99ms: number;
  maxMs: number;
  lookups: number;
  errors: number;
  [more: string]: string | number;
}

async function warmUp(serve: ServeProcess): Promise<void> {
  const load = await startLoad<AutocannonResult>({
    kind: 'lookups',
    url: serve.url,
    seconds: quick ? 1 : 3,
    connections: settings.connections,
    labels: settings.labels,
    to: 0,
  });
  await load.result;
}

/**
 * Lookups for `--seconds`, or for as long as `during` runs when given (its figures join the
 * row), watched.
 */
async function lookupPhase(
  store: string,
  phase: string,
  workers: number,
  serve: ServeProcess,
  during?: () => Promise<Record<string, number>>,
): Promise<Row> {
  const load = await forkLoad<AutocannonResult>({
    kind: 'lookups',
    url: serve.url,
    seconds: during === undefined ? settings.seconds : 3600,
    connections: settings.connections,
    labels: settings.labels,
    to: 0,
  });
  const w = await watch(serve);
  load.go();
  let extra: Record<string, number> = {};
  if (during !== undefined) {
    extra = await during();
    load.stop();
  }
  const r = await load.result;
  const watched = await w.stop();
  return {
    bench: 'server-load',
    store,
    phase,
    workers,
    lookupsPerSecond: Math.round(r.requests.total / r.duration),
    p50ms: r.latency.p50,
    p99ms: r.latency.p99,
    maxMs: r.latency.max,
    lookups: r.requests.total,
    errors: r.errors + r.timeouts + r.non2xx,
    ...watched,
    ...extra,
  };
}

/**
 * How many of `n` key histories in a row are answered 200 within the heavy-route limiter's
 * wait (10 s): all of them, unless slots leaked.
 */
async function historiesAnswered(url: string, n: number): Promise<number> {
  let ok = 0;
  for (let i = 0; i < n; i++) {
    const res = await fetch(`${url}/v1/history/${encodeURIComponent(label(i))}`, {
      headers: { accept: 'application/x-protobuf' },
    });
    await res.arrayBuffer();
    if (res.status === 200) ok++;
  }
  return ok;
}

async function publish(url: string, from: number, count: number): Promise<number> {
  const updates = Array.from({ length: count }, (_, i) => ({
    label: label(from + i),
    value: `key-${from + i}-1`,
  }));
  const t0 = performance.now();
  const res = await fetch(`${url}/v1/publish`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ updates }),
  });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`publish answered ${res.status}: ${text}`);
  return (performance.now() - t0) / 1000;
}

/**
 * The directory of the run: `--labels` new labels over `--epochs` publishes after the demo's
 * (nothing when a kept store already holds them).
 */
async function build(url: string): Promise<number> {
  if ((await latestEpoch(url)) >= 3 + settings.epochs) return latestEpoch(url);
  const per = Math.ceil(settings.labels / settings.epochs);
  const t0 = performance.now();
  for (let from = 0; from < settings.labels; from += per) {
    await publish(url, from, Math.min(per, settings.labels - from));
  }
  if (!json) {
    console.log(
      `  built ${settings.labels} labels in ${settings.epochs} publishes: ${((performance.now() - t0) / 1000).toFixed(1)} s`,
    );
  }
  return latestEpoch(url);
}

async function latestEpoch(url: string): Promise<number> {
  const res = await fetch(`${url}/v1/epoch`);
  return Number(((await res.json()) as { epoch: string }).epoch);
}

/** Where each store lives for the run, and how to remove it. */
function storeOf(name: string): { args: string[]; dispose: () => Promise<void> } {
  if (name === 'memory') return { args: ['--db', 'memory:bench'], dispose: async () => {} };
  const kept = option('store-dir', '');
  if (name === 'sqlite' && kept !== '') {
    mkdirSync(kept, { recursive: true });
    return {
      args: ['--db', `sqlite:${join(kept, 'bench.db')}`, '--key-file', join(kept, 'bench.key')],
      dispose: async () => {},
    };
  }
  const dir = mkdtempSync(join(tmpdir(), 'akd-server-load-'));
  const keyArgs = ['--key-file', join(dir, 'bench.key')];
  if (name === 'sqlite') {
    return {
      args: ['--db', `sqlite:${join(dir, 'bench.db')}`, ...keyArgs],
      dispose: async () => rmSync(dir, { recursive: true, force: true }),
    };
  }
  if (name !== 'postgres') throw new Error(`--store: memory, sqlite or postgres, not ${name}`);
  const base = process.env['AKD_TEST_POSTGRES_URL'];
  if (base === undefined) throw new Error('--store postgres needs AKD_TEST_POSTGRES_URL');
  const schema = `akd_server_load_${randomBytes(4).toString('hex')}`;
  const url = new URL(base);
  url.searchParams.set('schema', schema);
  return {
    args: ['--db', url.toString(), ...keyArgs],
    dispose: async () => {
      rmSync(dir, { recursive: true, force: true });
      const { default: pg } = await import('pg');
      const client = new pg.Client({ connectionString: base });
      await client.connect();
      await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await client.end();
    },
  };
}

async function serveWith(storeArgs: string[], workers: number): Promise<ServeProcess> {
  return startServe(
    [
      '--demo',
      ...storeArgs,
      '--port',
      '0',
      '--workers',
      String(workers),
      '--log-level',
      'warn',
      // proof servers with per-server connection limits (akd serve's option, off by default)
      ...(flag('connection-spread') ? ['--connection-spread'] : []),
    ],
    { AKD_PUBLISH_TOKEN: TOKEN },
  );
}

async function runStore(name: string): Promise<Row[]> {
  const { args, dispose } = storeOf(name);
  const rows: Row[] = [];
  const report = (row: Row) => {
    rows.push(row);
    if (json) console.log(JSON.stringify(row));
    else console.log(`  ${name}, ${row.phase}: ${JSON.stringify(row)}`);
  };
  const phase = (p: string) => settings.phases.has(p);
  try {
    // phase 1: one proof server
    let serve: ServeProcess;
    if (phase('one')) {
      serve = await serveWith(args, 1);
      try {
        await build(serve.url);
        await warmUp(serve);
        report(await lookupPhase(name, 'lookups alone', 1, serve));
      } finally {
        await serve.stop();
      }
    }
    // phases 2-4: N proof servers (a memory store starts empty again and is rebuilt)
    serve = await serveWith(args, settings.workers);
    try {
      const built = phase('one') && name !== 'memory';
      const to = built ? await latestEpoch(serve.url) : await build(serve.url);
      await warmUp(serve);
      if (phase('alone')) {
        report(await lookupPhase(name, 'lookups alone', settings.workers, serve));
      }
      if (phase('audits')) {
        const audits = await forkLoad<AuditResult>({
          kind: 'audits',
          url: serve.url,
          seconds: settings.seconds,
          connections: settings.audits,
          labels: 0,
          to,
        });
        report(
          await lookupPhase(name, 'during audits', settings.workers, serve, async () => {
            audits.go();
            const a = await audits.result;
            return {
              auditTo: to,
              audits: a.requests,
              auditsOk: a.ok,
              audits503: a.overloaded,
              auditsFailed: a.failed,
              auditMegabytes: a.megabytes,
              auditMedianMs: a.medianMs,
              auditMaxMs: a.maxMs,
            };
          }),
        );
      }
      if (phase('abuse')) {
        const abuse = await forkLoad<AbuseResult>({
          kind: 'abuse',
          url: serve.url,
          seconds: settings.seconds,
          connections: 0,
          labels: settings.labels,
          to: 0,
          abuse: {
            url: serve.url,
            pipeliners: settings.pipeliners,
            pipelined: settings.pipelined,
            slowBodies: settings.slowBodies,
            leavers: settings.leavers,
            leaveMs: settings.leaveMs,
            labels: settings.labels,
          },
        });
        report(
          await lookupPhase(name, 'during abuse', settings.workers, serve, async () => {
            abuse.go();
            const a = await abuse.result;
            return { ...a, historiesAfter: await historiesAnswered(serve.url, 10) };
          }),
        );
      }
      if (phase('publish')) {
        report(
          await lookupPhase(name, 'during publish', settings.workers, serve, async () => ({
            publishedLabels: settings.publish,
            publishSeconds: Number(
              (await publish(serve.url, settings.labels, settings.publish)).toFixed(2),
            ),
          })),
        );
      }
    } finally {
      const code = await serve.stop();
      if (code !== 0) console.error(`akd serve exited ${code}:\n${serve.stderr()}`);
    }
  } finally {
    await dispose();
  }
  return rows;
}

// ---- the run ----

interface PerCore {
  ours: number[];
  oursEncoded: number[];
  upstream: number[];
}

function perCore(): PerCore {
  const out: PerCore = { ours: [], oursEncoded: [], upstream: [] };
  const upstream = upstreamCommand(process.argv);
  const keys = String(settings.lookupKeys);
  const count = String(settings.lookupCount);
  for (let round = 0; round < settings.lookupRounds; round++) {
    if (upstream !== undefined) {
      const u = measure(upstream, ['bench-lookup', '--keys', keys, '--lookups', count]);
      out.upstream.push(Math.round(Number(u.json['lookups_per_s'])));
    }
    const o = measureSelf(import.meta.url, ['--lookup-rate-child', keys, count]);
    out.ours.push(Number(o.json['lookupsPerSecond']));
    out.oursEncoded.push(Number(o.json['encodedPerSecond']));
  }
  return out;
}

async function main(): Promise<void> {
  const load = loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
  if (!json) {
    console.log(
      `server-load: ${settings.labels} labels over ${settings.epochs} publishes after the demo's 3 epochs, ${settings.connections} connections, ${settings.seconds} s phases, ${settings.audits} concurrent audits, a publish of ${settings.publish}; load average ${load}`,
    );
  }
  const core = perCore();
  const ours = median(core.ours);
  const up = core.upstream.length > 0 ? median(core.upstream) : null;
  const coreRow = {
    bench: 'server-load',
    phase: 'lookup proofs per core (no HTTP)',
    keys: settings.lookupKeys,
    lookups: settings.lookupCount,
    oursPerSecond: core.ours.join(','),
    oursEncodedPerSecond: core.oursEncoded.join(','),
    upstreamPerSecond: core.upstream.join(','),
    ratio: ratio(ours, up) ?? 'n/a',
  };
  console.log(json ? JSON.stringify(coreRow) : `  ${JSON.stringify(coreRow)}`);

  const rows: Row[] = [];
  for (const store of settings.stores) rows.push(...(await runStore(store)));

  // the targets, with their figures
  const targets: { target: string; met: boolean; figures: string }[] = [];
  if (up !== null) {
    targets.push({
      target: 'lookup proofs per core at least upstream',
      met: ours >= up,
      figures: `${ours}/s against ${up}/s`,
    });
  }
  for (const store of settings.stores) {
    const of = (phase: string, workers = settings.workers) =>
      rows.find((r) => r.store === store && r.phase === phase && r.workers === workers);
    const one = of('lookups alone', 1);
    const alone = of('lookups alone');
    const pub = of('during publish');
    const aud = of('during audits');
    if (one !== undefined && alone !== undefined) {
      targets.push({
        // a gain within a run's noise is not growth: ask for a tenth more at least
        target: `${store}: lookups/s grow with workers (at least 1.1x)`,
        met: alone.lookupsPerSecond >= 1.1 * one.lookupsPerSecond,
        figures: `${one.lookupsPerSecond}/s (1) -> ${alone.lookupsPerSecond}/s (${settings.workers})`,
      });
    }
    if (pub !== undefined && alone !== undefined) {
      targets.push({
        target: `${store}: p99 during a publish at most 3x alone`,
        met: pub.p99ms <= 3 * alone.p99ms,
        figures: `${pub.p99ms} ms against ${alone.p99ms} ms (${(pub.p99ms / alone.p99ms).toFixed(2)}x)`,
      });
    }
    const abused = of('during abuse');
    if (abused !== undefined && alone !== undefined) {
      targets.push(
        {
          target: `${store}: /healthz under 250 ms during abuse`,
          met: abused.healthMaxMs < 250,
          figures: `${abused.healthMaxMs} ms (slowest: ${abused.healthSlowest})`,
        },
        {
          // its own memory: the pages of a store it maps are the file system's cache, which
          // the kernel takes back under pressure and no heap limit counts
          target: `${store}: each proof server under 80% of its ${PROOF_HEAP_MB} MB heap limit during abuse (its own memory, RssAnon)`,
          met: abused.maxProofAnonMb < 0.8 * PROOF_HEAP_MB,
          figures: `${abused.maxProofAnonMb} MB at most (${abused.maxProofMb} MB resident with mapped files)`,
        },
        {
          target: `${store}: well-behaved lookups during abuse at least half their rate alone`,
          met: abused.lookupsPerSecond >= 0.5 * alone.lookupsPerSecond,
          figures: `${abused.lookupsPerSecond}/s against ${alone.lookupsPerSecond}/s (${(abused.lookupsPerSecond / alone.lookupsPerSecond).toFixed(2)}x)`,
        },
        {
          target: `${store}: no proof server restarted, and no heavy-route slot leaked, during abuse`,
          met: abused.restarts === 0 && abused['historiesAfter'] === 10,
          figures: `${abused.restarts} restarts, ${abused['historiesAfter']} of 10 histories answered after`,
        },
      );
    }
    const busy = [pub, aud].filter((r) => r !== undefined);
    if (busy.length > 0) {
      targets.push({
        target: `${store}: /healthz under 250 ms during the publish and the audits`,
        met: busy.every((r) => r.healthMaxMs <= 250),
        figures: busy.map((r) => `${r.healthMaxMs} ms (${r.phase})`).join(', '),
      });
    }
    if (aud !== undefined) {
      targets.push({
        target: `${store}: server memory under 1 GB during the audits`,
        met: aud.peakRssMb < 1024,
        figures: `${aud.peakRssMb} MB at most (${aud.peakRssMb - aud.startRssMb} MB more than when the audits began)`,
      });
    }
    targets.push({
      target: `${store}: no errors`,
      met: rows
        .filter((r) => r.store === store)
        .every(
          (r) => r.errors === 0 && r.healthFailures === 0 && Number(r['auditsFailed'] ?? 0) === 0,
        ),
      figures: rows
        .filter((r) => r.store === store)
        .map((r) => `${r.errors}/${r.healthFailures}/${r['auditsFailed'] ?? 0}`)
        .join(' '),
    });
  }
  if (json) {
    for (const t of targets) console.log(JSON.stringify({ bench: 'server-load', ...t }));
  } else {
    console.log(
      '\n| store | phase | workers | lookups/s | p50 ms | p99 ms | max ms | errors | slowest /healthz ms | RSS MB start -> peak | per process at start | per process at peak | largest proof server MB (its own) | restarts |',
    );
    console.log(
      '| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- | ---: | ---: |',
    );
    for (const r of rows) {
      console.log(
        `| ${r.store} | ${r.phase} | ${r.workers} | ${r.lookupsPerSecond} | ${r.p50ms} | ${r.p99ms} | ${r.maxMs} | ${r.errors} | ${r.healthMaxMs} | ${r.startRssMb} -> ${r.peakRssMb} | ${r.startRoles} | ${r.peakRoles} | ${r.maxProofMb} (${r.maxProofAnonMb}) | ${r.restarts} |`,
      );
    }
    console.log('');
    for (const t of targets)
      console.log(`${t.met ? 'met    ' : 'NOT MET'} ${t.target}: ${t.figures}`);
    console.log(
      `load average at the end: ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
    );
  }
  const failed = rows.some(
    (r) => r.errors > 0 || r.healthFailures > 0 || Number(r['auditsFailed'] ?? 0) > 0,
  );
  if (failed) {
    console.error('server-load: FAILED (errors in a phase)');
    process.exit(1);
  }
}

if (process.argv.includes('--load-child')) await loadChild();
else if (process.argv.includes('--lookup-rate-child')) {
  const i = process.argv.indexOf('--lookup-rate-child');
  console.log(
    JSON.stringify(await lookupRate(Number(process.argv[i + 1]), Number(process.argv[i + 2]))),
  );
  process.exit(0);
} else await main();
