/**
 * Test helpers: temporary directories, small records, a raw better-sqlite3 connection for
 * writing rows the driver never would, and spawning TypeScript child processes.
 */

import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import BetterSqlite3 from 'better-sqlite3';
import { AkdError, NodeLabel } from '@akd-ts/core';
import {
  decodeVrfProofEntries,
  vrfProofKeyBytes,
  vrfProofMapKey,
  type TreeNodeRecord,
  type ValueStateRecord,
  type VrfProofRecord,
} from '@akd-ts/storage';
import { leafRecord } from '@akd-ts/storage/conformance';

/** A fresh temporary directory and a function that removes it. */
export function tempDir(prefix: string): {
  dir: string;
  path: (name: string) => string;
  remove: () => void;
} {
  const dir = mkdtempSync(join(tmpdir(), `akd-sqlite-${prefix}-`));
  return {
    dir,
    path: (name) => join(dir, name),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** A 256-bit label whose 32 bytes encode `i`. */
export function leafLabel(i: number): NodeLabel {
  const val = new Uint8Array(32);
  new DataView(val.buffer).setUint32(0, i);
  val[31] = 0xa5;
  return new NodeLabel(val, 256);
}

export function nodeRecord(label: NodeLabel, epoch: bigint): TreeNodeRecord {
  return leafRecord(label, epoch, Number(epoch % 256n));
}

export function stateRecord(name: string, epoch: bigint, version: bigint): ValueStateRecord {
  return {
    kind: 'valueState',
    username: new TextEncoder().encode(name),
    epoch,
    version,
    label: leafLabel(Number(version)),
    value: new TextEncoder().encode(`${name}@${version}`),
  };
}

/** A raw connection to the store at `path`, for rows and pragmas the driver never writes. */
export function raw(path: string): BetterSqlite3.Database {
  const db = new BetterSqlite3(path);
  db.defaultSafeIntegers(true);
  return db;
}

/**
 * Takes the store on `r` back to schema version 9 (before vrf_proof_rows), as that version
 * kept VRF proofs: a row of vrf_proofs per proof, a published version's nonce in vrf_nonces.
 * Nothing to do for a store already there. The header's user_version is left to the caller.
 */
export function vrfProofsByKey(r: BetterSqlite3.Database): void {
  const table = r
    .prepare("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'vrf_proof_rows'")
    .get();
  if (table === undefined) return;
  const rows = r
    .prepare('SELECT label, entries FROM vrf_proof_rows ORDER BY label, seq')
    .raw(true)
    .all() as [Uint8Array, Uint8Array][];
  const merged = new Map<string, VrfProofRecord>();
  for (const [label, entries] of rows) {
    for (const record of decodeVrfProofEntries(label, entries)) {
      // a later row's nonce wins; none never erases one
      const earlier = merged.get(vrfProofMapKey(record))?.nonce;
      merged.set(vrfProofMapKey(record), { ...record, nonce: record.nonce ?? earlier });
    }
  }
  const proofs = r.prepare('INSERT INTO vrf_proofs (key, value) VALUES (?, ?)');
  const nonces = r.prepare('INSERT INTO vrf_nonces (key, nonce) VALUES (?, ?)');
  for (const record of merged.values()) {
    proofs.run(vrfProofKeyBytes(record), record.proof);
    if (record.nonce !== undefined) nonces.run(vrfProofKeyBytes(record), record.nonce);
  }
  r.exec('DROP TABLE vrf_proof_rows');
}

/**
 * Takes the store on `r` back to schema version 7 (before vrf_nonces), as that version kept
 * VRF proofs: each nonce appended to its proof's value (112 bytes), then vrf_nonces dropped.
 * The header's user_version is left to the caller.
 */
export function inlineVrfNonces(r: BetterSqlite3.Database): void {
  vrfProofsByKey(r);
  r.exec(
    'UPDATE vrf_proofs AS p SET value = CAST(substr(p.value, 1, 80) || n.nonce AS BLOB) ' +
      'FROM vrf_nonces AS n WHERE n.key = p.key; DROP TABLE vrf_nonces',
  );
}

/**
 * Takes the store on `r` back to value_states as schema version 8 kept them: keyed by
 * (username, epoch), with no index, the same rows. The header's user_version is left to the
 * caller.
 */
export function valueStatesByUser(r: BetterSqlite3.Database): void {
  vrfProofsByKey(r);
  const columns = 'username, epoch, version, node_label, value';
  r.exec(`ALTER TABLE value_states RENAME TO value_states_v9;
DROP INDEX value_states_by_user;
CREATE TABLE value_states (
  username BLOB NOT NULL,
  epoch INTEGER NOT NULL,
  version INTEGER NOT NULL,
  node_label BLOB NOT NULL,
  value BLOB NOT NULL,
  PRIMARY KEY (username, epoch)
) STRICT, WITHOUT ROWID;
INSERT INTO value_states (${columns}) SELECT ${columns} FROM value_states_v9;
DROP TABLE value_states_v9;`);
}

/** Asserts `p` rejects with an AkdError of `code` whose message matches every pattern. */
export async function rejectsWith(
  p: Promise<unknown>,
  code: string,
  ...patterns: (string | RegExp)[]
): Promise<AkdError> {
  let caught: unknown;
  await assert.rejects(p, (e: unknown) => {
    caught = e;
    return true;
  });
  assert.ok(caught instanceof AkdError, `expected an AkdError, got ${String(caught)}`);
  assert.equal(caught.code, code, caught.message);
  for (const p of patterns) {
    if (typeof p === 'string')
      assert.ok(caught.message.includes(p), `${caught.message} lacks ${p}`);
    else assert.match(caught.message, p);
  }
  return caught;
}

const repoRoot = fileURLToPath(new URL('../../../../', import.meta.url));

/** A child process running a TypeScript file of this test directory with tsx. */
export interface Child {
  process: ChildProcess;
  /** The next line the child prints to stdout (rejects if it ends first). */
  nextLine(): Promise<string>;
  /** Every line the child printed, once its stdout has closed. */
  allLines(): Promise<string[]>;
  /** Resolves with the exit code (or signal) once the child is gone. */
  exited: Promise<number | NodeJS.Signals | null>;
}

export function spawnTs(script: string, args: string[]): Child {
  const child = spawn(
    process.execPath,
    [
      '--conditions=source',
      '--import',
      'tsx',
      fileURLToPath(new URL(script, import.meta.url)),
      ...args,
    ],
    { cwd: repoRoot, stdio: ['pipe', 'pipe', 'inherit'] },
  );
  const lines: string[] = [];
  let cursor = 0;
  let wake: (() => void) | undefined;
  const rl = createInterface({ input: child.stdout! });
  rl.on('line', (line) => {
    lines.push(line);
    wake?.();
  });
  const closed = new Promise<void>((resolve) => rl.on('close', resolve));
  let ended = false;
  void closed.then(() => {
    ended = true;
    wake?.();
  });
  const exited = new Promise<number | NodeJS.Signals | null>((resolve) =>
    child.on('exit', (code, signal) => resolve(code ?? signal)),
  );
  const nextLine = async (): Promise<string> => {
    while (cursor >= lines.length) {
      if (ended) throw new Error(`${script} ended before printing another line`);
      await new Promise<void>((resolve) => (wake = resolve));
    }
    return lines[cursor++]!;
  };
  return { process: child, exited, nextLine, allLines: () => closed.then(() => lines) };
}
