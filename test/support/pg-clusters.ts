/**
 * PostgreSQL clusters a test owns, in a temporary workspace, each on a free port: a primary
 * and a streaming hot standby made with `pg_basebackup`, and the backups (pg_dump, base
 * backups) and restored servers of the backup tests. They come from the server binaries of
 * Debian's postgresql package (or AKD_PG_BIN), so replication, promotion, fencing and restores
 * are tested against real servers without touching the shared one.
 *
 * Without the binaries the tests skip, naming what is missing, except in CI (CI=true), where
 * starting a cluster fails the test instead: CI installs them, so their absence is a fault.
 * initdb refuses to run as root, so as root every server command runs as the `postgres` user.
 */

import { execFile, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { appendFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { delimiter, join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';

const run = promisify(execFile);
const TOOLS = ['initdb', 'pg_ctl', 'pg_basebackup', 'pg_dump', 'pg_restore'] as const;
type Tool = (typeof TOOLS)[number];

/** Where the binaries are, or why they cannot be used. */
function locate(): { bin: string } | { missing: string } {
  const candidates: string[] = [];
  if (process.env['AKD_PG_BIN']) candidates.push(process.env['AKD_PG_BIN']);
  const debian = '/usr/lib/postgresql';
  if (existsSync(debian)) {
    const versions = readdirSync(debian)
      .filter((v) => /^\d+$/.test(v))
      .sort((a, b) => Number(b) - Number(a));
    candidates.push(...versions.map((v) => join(debian, v, 'bin')));
  }
  candidates.push(...(process.env['PATH'] ?? '').split(delimiter).filter(Boolean));
  const bin = candidates.find((dir) => TOOLS.every((t) => existsSync(join(dir, t))));
  if (bin === undefined) {
    return {
      missing:
        `PostgreSQL server binaries (${TOOLS.join(', ')}) not found in AKD_PG_BIN, ` +
        `/usr/lib/postgresql/*/bin or PATH: install Debian's postgresql package`,
    };
  }
  if (userInfo().uid === 0 && spawnSync('id', ['-u', 'postgres']).status !== 0) {
    return { missing: 'a "postgres" user to run the PostgreSQL binaries as (initdb refuses root)' };
  }
  return { bin };
}

const LOCATED = locate();

/**
 * node:test's `skip` option for tests that start their own clusters: false when the binaries
 * are there, and also in CI, where {@link startReplicaPair} then fails naming what is missing.
 */
export const CLUSTERS_SKIP: string | false =
  'missing' in LOCATED && process.env['CI'] !== 'true'
    ? `${LOCATED.missing}: replication tests skipped`
    : false;

/** The owner of the clusters' files: the postgres user when we are root. */
const AS_POSTGRES = userInfo().uid === 0;

function ids(): { uid: number; gid: number } {
  const id = (flag: string) => Number(spawnSync('id', [flag, 'postgres']).stdout.toString());
  return { uid: id('-u'), gid: id('-g') };
}

/** Runs a server binary (as postgres when root); fails with its output. */
export async function tool(name: Tool, args: string[]): Promise<string> {
  if ('missing' in LOCATED) throw new Error(LOCATED.missing);
  const path = join(LOCATED.bin, name);
  const [cmd, argv] = AS_POSTGRES
    ? ['runuser', ['-u', 'postgres', '--', path, ...args]]
    : [path, args];
  try {
    return (await run(cmd, argv, { timeout: 120_000 })).stdout;
  } catch (e) {
    const { stdout, stderr } = e as { stdout?: string; stderr?: string };
    throw new Error(`${name} ${args.join(' ')} failed: ${stderr || stdout || String(e)}`, {
      cause: e,
    });
  }
}

/** A port nothing listens on right now (the server may still lose a race for it: retried). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Clusters still running, stopped if the test process exits without closing them. */
const running = new Set<PgCluster>();
process.once('exit', () => {
  for (const c of running) c.stopNow();
});

/** One running PostgreSQL server of the test's own. */
export class PgCluster {
  private constructor(
    readonly name: string,
    readonly dataDir: string,
    readonly port: number,
  ) {}

  /** A connection URL for `database` on this server. */
  url(database = 'postgres'): string {
    return `postgres://postgres@127.0.0.1:${this.port}/${database}`;
  }

  /** Runs one statement on a connection of its own. */
  async query(text: string, values: unknown[] = []): Promise<pg.QueryResult> {
    const client = new pg.Client({ connectionString: this.url() });
    await client.connect();
    try {
      return await client.query(text, values);
    } finally {
      await client.end();
    }
  }

  /** The server's log so far, for failure messages. */
  log(): string {
    try {
      return readFileSync(`${this.dataDir}.log`, 'utf8');
    } catch {
      return '';
    }
  }

  /**
   * Starts the cluster in `dataDir` (already initialised) with `settings` appended to its
   * postgresql.conf, on a free port (a port lost to a race is retried with another).
   */
  static async start(name: string, dataDir: string, settings: string[]): Promise<PgCluster> {
    for (let attempt = 1; ; attempt++) {
      const port = await freePort();
      await appendFile(join(dataDir, 'postgresql.conf'), `\nport = ${port}\n`);
      const cluster = new PgCluster(name, dataDir, port);
      if (attempt === 1) await appendFile(join(dataDir, 'postgresql.conf'), settings.join('\n'));
      try {
        await tool('pg_ctl', ['-D', dataDir, '-l', `${dataDir}.log`, '-w', '-t', '60', 'start']);
        running.add(cluster);
        return cluster;
      } catch (e) {
        if (attempt >= 3 || !/already in use|could not bind/i.test(cluster.log())) {
          throw new Error(`${(e as Error).message}\n${cluster.log()}`, { cause: e });
        }
      }
    }
  }

  /** Promotes a standby to a primary and waits until it accepts writes. */
  async promote(): Promise<void> {
    await tool('pg_ctl', ['-D', this.dataDir, '-w', '-t', '60', 'promote']);
  }

  /** Stops the server (fast shutdown: sessions are ended, nothing is lost). */
  async stop(): Promise<void> {
    if (!running.delete(this)) return;
    await tool('pg_ctl', ['-D', this.dataDir, '-m', 'fast', '-w', 'stop']);
  }

  /** Stops at once, synchronously (process exit). */
  stopNow(): void {
    if (!running.delete(this) || 'missing' in LOCATED) return;
    const path = join(LOCATED.bin, 'pg_ctl');
    const args = ['-D', this.dataDir, '-m', 'immediate', 'stop'];
    if (AS_POSTGRES) spawnSync('runuser', ['-u', 'postgres', '--', path, ...args]);
    else spawnSync(path, args);
  }
}

/** Settings of both servers: small, quick, and ready for streaming replication. */
const SETTINGS = [
  "listen_addresses = '127.0.0.1'",
  "unix_socket_directories = ''",
  'fsync = off', // throwaway clusters: durability is not what these tests check
  'shared_buffers = 32MB',
  'max_connections = 40',
  'wal_level = replica',
  'max_wal_senders = 5',
  'hot_standby = on',
  // readers' snapshots hold back vacuum on the primary instead of being cancelled
  'hot_standby_feedback = on',
  'wal_receiver_status_interval = 1s',
];

/**
 * A temporary directory owned by the servers' user, where clusters are created, backed up and
 * restored; `close` stops every server started in it and removes it.
 */
export class PgWorkspace {
  private readonly started: PgCluster[] = [];

  private constructor(readonly root: string) {}

  /** A new workspace. @throws Error naming what is missing when the binaries are not there */
  static create(): PgWorkspace {
    if ('missing' in LOCATED) throw new Error(LOCATED.missing);
    const root = mkdtempSync(join(tmpdir(), 'akd-pg-'));
    if (AS_POSTGRES) {
      const { uid, gid } = ids();
      chownSync(root, uid, gid);
    }
    return new PgWorkspace(root);
  }

  /** A path in the workspace. */
  path(name: string): string {
    return join(this.root, name);
  }

  /** Initialises a new cluster (trust authentication on 127.0.0.1) and starts it. */
  async initdb(name: string): Promise<PgCluster> {
    const dir = this.path(name);
    await tool('initdb', ['-D', dir, '-U', 'postgres', '--auth=trust', '-N', '-E', 'UTF8']);
    return this.start(name, SETTINGS);
  }

  /** Starts the cluster in the workspace's directory `name` (a copy made by pg_basebackup). */
  async start(name: string, settings: string[] = []): Promise<PgCluster> {
    const cluster = await PgCluster.start(name, this.path(name), settings);
    this.started.push(cluster);
    return cluster;
  }

  /** `pg_basebackup` of `from` into the directory `name`; `standby` makes it stream (-R). */
  async baseBackup(from: PgCluster, name: string, standby: boolean): Promise<void> {
    await tool('pg_basebackup', [
      ...['-h', '127.0.0.1', '-p', String(from.port), '-U', 'postgres', '-D', this.path(name)],
      ...['-X', 'stream', '-c', 'fast', ...(standby ? ['-R'] : [])],
    ]);
  }

  async close(): Promise<void> {
    for (const c of this.started.reverse()) await c.stop().catch(() => c.stopNow());
    rmSync(this.root, { recursive: true, force: true });
  }
}

/** A primary and its streaming standby, in one workspace. */
export interface ReplicaPair {
  primary: PgCluster;
  standby: PgCluster;
  /** Waits until the standby has replayed everything the primary has written so far. */
  caughtUp(timeoutMs?: number): Promise<void>;
  /** Stops both servers and removes their files. */
  close(): Promise<void>;
}

/**
 * Starts a primary and a hot standby streaming from it (pg_basebackup -R), and waits until
 * the standby streams.
 * @throws Error naming what is missing when the binaries are not there
 */
export async function startReplicaPair(): Promise<ReplicaPair> {
  const space = PgWorkspace.create();
  try {
    const primary = await space.initdb('primary');
    await space.baseBackup(primary, 'standby', true);
    const standby = await space.start('standby');
    await waitFor(
      async () =>
        (await standby.query('SELECT status FROM pg_stat_wal_receiver')).rows[0]?.status ===
        'streaming',
      30_000,
      () => `the standby streams from the primary\n${standby.log()}`,
    );
    return {
      primary,
      standby,
      close: () => space.close(),
      caughtUp: async (timeoutMs = 30_000) => {
        const { lsn } = (await primary.query('SELECT pg_current_wal_lsn()::text AS lsn')).rows[0];
        await waitFor(
          async () =>
            (await standby.query('SELECT pg_last_wal_replay_lsn() >= $1::pg_lsn AS done', [lsn]))
              .rows[0]?.done === true,
          timeoutMs,
          () => `the standby replayed the primary's WAL up to ${lsn}`,
        );
      },
    };
  } catch (e) {
    await space.close();
    throw e;
  }
}

/** Polls `condition` every 50 ms until it holds, failing after `timeoutMs`. */
export async function waitFor(
  condition: () => Promise<boolean> | boolean,
  timeoutMs: number,
  what: () => string,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await condition()) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
