// Crash test: a child process publishes large epochs to a PostgreSQL store and is killed with
// SIGKILL: at random moments; while the watcher sees its publish being written (an INSERT
// running); or while its publish transaction is held open, everything written but the AZKS row
// (the parent holds that row's lock, so the kill lands inside the commit in every run). After
// each kill the store must be intact: the AZKS epoch is the last one the child reported or the
// next (exactly the last one when the transaction was held open, with none of the held
// epoch's rows visible); lookups, histories and the last audit step verify against the served
// root (roots come from the child's output: past roots are not stored); the writer lock is
// free; a new publish works.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import {
  AkdError,
  auditVerify,
  bytesEqual,
  configurationByName,
  fromHex,
  fromUtf8,
  keyHistoryVerify,
  lookupVerify,
  utf8,
} from '@akd-ts/core';
import { StorageManager } from '@akd-ts/storage';
import { Directory, InMemoryVrfKeyStore, ReadOnlyDirectory } from '@akd-ts/directory';
import { PostgresDatabase } from '@akd-ts/storage-postgres';
import {
  CRASH_CONFIG,
  CRASH_VRF_SEED,
  LABELS_PER_EPOCH,
  UNIVERSE,
  crashUpdates,
} from './support/crash-plan.js';
import { POSTGRES_URL, SKIP, dropSchema, freshSchema, sql } from './support/postgres.js';

/** At least 20 kills; AKD_CRASH_TRIALS raises it for a soak run. */
const TRIALS = Math.max(20, Number(process.env.AKD_CRASH_TRIALS ?? 20));
const config = configurationByName(CRASH_CONFIG);
const vrfKeys = () => new InMemoryVrfKeyStore(createHash('sha256').update(CRASH_VRF_SEED).digest());

let workDir: string;
let childBundle: string;
before(async () => {
  if (SKIP) return;
  // Bundled once, the child starts in ~0.2 s instead of ~1.4 s under tsx.
  const { build } = await import('esbuild');
  workDir = mkdtempSync(join(tmpdir(), 'akd-crash-'));
  childBundle = join(workDir, 'crash-child.mjs');
  await build({
    entryPoints: [fileURLToPath(new URL('./support/crash-child.ts', import.meta.url))],
    bundle: true,
    platform: 'node',
    format: 'esm',
    conditions: ['source'],
    outfile: childBundle,
    external: ['pg-native', 'pg-cloudflare'],
    logLevel: 'warning',
    // pg is CommonJS and requires Node built-ins
    banner: {
      js:
        "import { createRequire as akdCreateRequire } from 'node:module'; " +
        'const require = akdCreateRequire(import.meta.url);',
    },
  });
});
after(() => {
  if (workDir) rmSync(workDir, { recursive: true, force: true });
});

/** Labels in the parent's own publishes: enough to prove that publishing works again. */
const PARENT_LABELS = 20;

/** Whether label `user-k` is updated at epoch e (crash-plan's moving window). */
function updatedAt(k: number, e: bigint, size: number): boolean {
  const start = Number((e * 211n) % BigInt(UNIVERSE));
  return (((k - start) % UNIVERSE) + UNIVERSE) % UNIVERSE < size;
}

/** The epochs <= `epoch` at which label `user-k` got a new version, newest first. */
function versionsOf(k: number, epoch: bigint, parentEpochs: Set<bigint>): bigint[] {
  const out: bigint[] = [];
  for (let e = epoch; e >= 1n; e--) {
    if (updatedAt(k, e, parentEpochs.has(e) ? PARENT_LABELS : LABELS_PER_EPOCH)) out.push(e);
  }
  return out;
}

interface ChildRun {
  lines: { kind: string; epoch: bigint; hash: Uint8Array }[];
  stderr: string;
  mode: Mode;
  sawWrite: boolean;
}

type Mode = 'random' | 'writing' | 'held';
const MODES: Mode[] = ['random', 'writing', 'held'];

/** Polls pg_stat_activity until `app` runs a statement matching `where`; false after ~10 s. */
async function watch(app: string, where: string): Promise<boolean> {
  const watcher = new pg.Client({ connectionString: POSTGRES_URL });
  await watcher.connect();
  try {
    for (let i = 0; i < 2000; i++) {
      const { rows } = await watcher.query(
        `SELECT 1 FROM pg_stat_activity WHERE application_name = $1 AND state = 'active' AND ${where}`,
        [app],
      );
      if (rows.length > 0) return true;
      await sleep(5);
    }
    return false;
  } finally {
    await watcher.end();
  }
}

/**
 * Runs the child until the kill moment chosen by `mode`, then SIGKILLs it. `sawWrite` tells
 * whether the watcher saw the publish being written (writing, held) before the kill.
 */
async function runChild(schema: string, app: string, mode: Mode): Promise<ChildRun> {
  const child = spawn(process.execPath, [childBundle, POSTGRES_URL!, schema, app], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const run: ChildRun = { lines: [], stderr: '', mode, sawWrite: false };
  let buffered = '';
  let ready!: () => void;
  const readyP = new Promise<void>((resolve) => (ready = resolve));
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    buffered += chunk;
    let nl;
    while ((nl = buffered.indexOf('\n')) >= 0) {
      const [kind, epoch, hash] = buffered.slice(0, nl).split(' ');
      buffered = buffered.slice(nl + 1);
      run.lines.push({ kind: kind!, epoch: BigInt(epoch!), hash: fromHex(hash!) });
      if (kind === 'ready') ready();
    }
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (run.stderr += chunk));
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  await Promise.race([
    readyP,
    exited.then(() => assert.fail(`the child exited before it was ready: ${run.stderr}`)),
  ]);
  let holder: pg.Client | undefined;
  try {
    if (mode === 'random') {
      await sleep(Math.random() * 2500);
    } else if (mode === 'writing') {
      // kill while the child's publish is being written (its transaction is open)
      run.sawWrite = await watch(app, `query LIKE 'INSERT INTO%'`);
    } else {
      // let it publish for a while, then hold the AZKS row: the next publish writes its nodes
      // and value states, then waits for the row, its transaction open, until it is killed
      await sleep(Math.random() * 1500);
      holder = new pg.Client({ connectionString: POSTGRES_URL });
      await holder.connect();
      await holder.query('BEGIN');
      await holder.query(`SELECT 1 FROM "${schema}".azks WHERE id = 1 FOR UPDATE`);
      run.sawWrite = await watch(
        app,
        `wait_event_type = 'Lock' AND query LIKE 'INSERT INTO%azks%'`,
      );
    }
    child.kill('SIGKILL');
    await exited;
  } finally {
    child.kill('SIGKILL');
    if (holder) {
      await holder.query('ROLLBACK');
      await holder.end();
    }
  }
  return run;
}

/** Waits for the dead child's sessions to end (terminating them after a while, counted). */
async function takeLockWhenFree(db: PostgresDatabase, app: string): Promise<boolean> {
  for (let i = 0; ; i++) {
    try {
      await (await db.acquireWriterLock()).release();
      return i > 100;
    } catch (e) {
      if (!(e instanceof AkdError && e.code === 'STORAGE_LOCKED')) throw e;
    }
    if (i === 100) {
      // 10 s and PostgreSQL still has not noticed the closed socket: end the sessions
      const client = new pg.Client({ connectionString: POSTGRES_URL });
      await client.connect();
      await client.query(
        'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1',
        [app],
      );
      await client.end();
    }
    assert.ok(i < 150, 'the writer lock stayed held after the child died');
    await sleep(100);
  }
}

test(
  `a publisher SIGKILLed ${TRIALS} times leaves a consistent, verifiable store`,
  { skip: SKIP, timeout: 180_000 },
  async (t) => {
    const schema = freshSchema('crash');
    const tag = randomBytes(3).toString('hex');
    const roots = new Map<bigint, Uint8Array>();
    const parentEpochs = new Set<bigint>();
    const stats = {
      committedUnreported: 0,
      killedWriting: 0,
      held: 0,
      heldRolledBack: 0,
      forcedTerminations: 0,
      epochs: 0,
    };
    const noteRoot = (epoch: bigint, hash: Uint8Array, where: string) => {
      const known = roots.get(epoch);
      assert.ok(!known || bytesEqual(known, hash), `${where}: root of epoch ${epoch} changed`);
      roots.set(epoch, hash);
    };
    try {
      for (let trial = 0; trial < TRIALS; trial++) {
        const app = `akd-crash-${tag}-${trial}`;
        const mode = MODES[trial % MODES.length]!;
        const run = await runChild(schema, app, mode);
        if (mode !== 'random') {
          assert.ok(run.sawWrite, `trial ${trial} (${mode}): the watcher saw the publish write`);
        }
        for (const l of run.lines) noteRoot(l.epoch, l.hash, `trial ${trial} child`);
        const last = run.lines[run.lines.length - 1]!.epoch;

        const db = await PostgresDatabase.open(POSTGRES_URL!, {
          schema,
          migrate: false,
          applicationName: `akd-crash-${tag}-parent`,
        });
        try {
          // the store: epoch N or N + 1, never anything in between
          const reader = await ReadOnlyDirectory.open({
            config,
            storage: new StorageManager(db),
            vrfKeys: vrfKeys(),
          });
          const { epoch, hash } = await reader.getEpochHash();
          assert.ok(
            epoch === last || epoch === last + 1n,
            `trial ${trial} (${mode}): store at epoch ${epoch}, child reported ${last}`,
          );
          if (epoch === last + 1n) stats.committedUnreported++;
          if (mode !== 'random' && epoch === last) stats.killedWriting++;
          if (mode === 'held') {
            // killed inside its transaction: that epoch is gone, none of its rows visible
            stats.held++;
            assert.equal(epoch, last, `trial ${trial} (held): the held epoch was rolled back`);
            const { rows } = await sql(
              `SELECT count(*)::int AS n FROM "${schema}".value_states WHERE epoch > $1`,
              [String(last)],
            );
            assert.equal(rows[0].n, 0, `trial ${trial} (held): no value state of a later epoch`);
            stats.heldRolledBack++;
          }
          noteRoot(epoch, hash, `trial ${trial} store`);

          // lookups and histories of sampled labels verify against the served root
          const pk = reader.getPublicKey();
          // one label the latest epoch updated, and two from anywhere
          const random = (n: number) => Math.floor(Math.random() * n);
          const start = Number((epoch * 211n) % BigInt(UNIVERSE));
          const size = parentEpochs.has(epoch) ? PARENT_LABELS : LABELS_PER_EPOCH;
          const newest = (start + random(size)) % UNIVERSE;
          const sampled = epoch === 0n ? [] : [newest, random(UNIVERSE), random(UNIVERSE)];
          for (const k of sampled) {
            const versions = versionsOf(k, epoch, parentEpochs);
            const label = utf8(`user-${k}`);
            if (versions.length === 0) {
              await assert.rejects(reader.lookup(label), { code: 'DIRECTORY_LABEL_NOT_FOUND' });
              continue;
            }
            const expected = `key of user-${k} at epoch ${versions[0]}`;
            const { proof, epochHash } = await reader.lookup(label);
            assert.equal(epochHash.epoch, epoch);
            const found = lookupVerify(config, pk, hash, epoch, label, proof);
            assert.equal(fromUtf8(found.value), expected);
            assert.equal(found.version, BigInt(versions.length));
            const history = await reader.keyHistory(label);
            const all = keyHistoryVerify(config, pk, hash, epoch, label, history.proof);
            assert.deepEqual(
              all.map((r) => r.epoch),
              versions,
            );
          }
          // the last step of the log is append-only, from the roots the child reported
          if (epoch >= 2n && roots.has(epoch - 1n)) {
            const proof = await reader.audit(epoch - 1n, epoch);
            auditVerify(config, [roots.get(epoch - 1n)!, hash], proof, { startEpoch: epoch - 1n });
          }
          await reader.close();

          // the dead child's lock is free again, and a new publish succeeds
          if (await takeLockWhenFree(db, app)) stats.forcedTerminations++;
          const dir = await Directory.open({
            config,
            storage: new StorageManager(db),
            vrfKeys: vrfKeys(),
          });
          const next = await dir.publish(
            crashUpdates(epoch + 1n, PARENT_LABELS).map(([l, v]) => ({
              label: utf8(l),
              value: utf8(v),
            })),
          );
          assert.equal(next.epoch, epoch + 1n);
          parentEpochs.add(next.epoch);
          noteRoot(next.epoch, next.hash, `trial ${trial} parent`);
          await dir.close();
          stats.epochs = Number(next.epoch);
        } finally {
          await db.close();
        }
      }
      t.diagnostic(
        `${TRIALS} kills, ${stats.epochs} epochs: ${stats.killedWriting} during a write left ` +
          `the previous epoch (${stats.heldRolledBack} of them held open in the commit), ` +
          `${stats.committedUnreported} committed an epoch the child had not yet reported; ` +
          `dead sessions terminated by hand: ${stats.forcedTerminations}`,
      );
      assert.ok(roots.size > TRIALS);
      // every run kills inside a commit, several times, and sees each rolled back
      const heldTrials = Array.from({ length: TRIALS }, (_, i) => MODES[i % MODES.length]);
      assert.equal(stats.held, heldTrials.filter((m) => m === 'held').length);
      assert.ok(stats.heldRolledBack >= 6 && stats.heldRolledBack === stats.held);
    } finally {
      await dropSchema(schema);
    }
  },
);
