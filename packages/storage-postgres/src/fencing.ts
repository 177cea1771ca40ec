/**
 * Writer fencing: a generation number stored with the data, so that a writer cannot publish
 * to a store once it has been replaced, even on another server. The advisory writer lock keeps
 * two writers off one server; after a fail-over the old writer may still hold that lock on
 * the old primary, which no lock on the new primary can reach. The fence travels with the
 * data instead: it is a row of the store, so it replicates, and every write transaction of a
 * writer first checks it.
 *
 * - A writer that takes the lock claims the next generation (refused when the store is
 *   fenced), and each of its write transactions starts by reading the fence row FOR SHARE:
 *   another generation, or a fence, refuses the write; the share lock makes a fence wait for
 *   a publish in flight, so the publish either commits before the fence or is refused.
 * - `fence` retires a store: every writer, present or future, is refused there. It is the
 *   first step of a fail-over, run against the old primary.
 * - `unfence` makes a promoted store writable again (see promote.ts).
 *
 * The row lives in the `settings` table under a reserved name, as a small JSON document.
 */

import { AkdError } from '@akd-ts/core';
import { WriterFencedError } from '@akd-ts/storage';
import { inTransaction, storageError, type PgPool, type PgQuery, type PgRow } from './client.js';
import { quoteIdent } from './queries.js';

/** The settings row holding the fence; `setSetting` refuses this name. */
export const FENCE_SETTING = 'writer_fence';

/** The fence of a store. */
export interface WriterFence {
  /** Bumped by each writer that opens the store, and by fence and unfence. */
  generation: bigint;
  /** True once the store was fenced: no writer may publish to it until it is unfenced. */
  fenced: boolean;
  /** When the fence last changed (ISO 8601), if ever. */
  changedAt: string | undefined;
}

const UNCLAIMED: WriterFence = { generation: 0n, fenced: false, changedAt: undefined };

function table(schema: string): string {
  return `${quoteIdent(schema)}.settings`;
}

function corrupt(schema: string, detail: string): AkdError {
  return new AkdError(
    'STORAGE_CORRUPT',
    `corrupt row in table ${schema}.settings, key name=${FENCE_SETTING}: ${detail}`,
  );
}

/** Decodes the fence row's value (absent: never claimed). */
export function parseFence(schema: string, value: unknown): WriterFence {
  if (value === undefined) return UNCLAIMED;
  let doc: unknown;
  try {
    doc = JSON.parse(String(value));
  } catch {
    throw corrupt(schema, 'value is not JSON');
  }
  const { generation, fenced, changedAt } = (doc ?? {}) as Record<string, unknown>;
  if (typeof generation !== 'string' || !/^(0|[1-9][0-9]{0,18})$/.test(generation)) {
    throw corrupt(schema, 'generation is not a decimal integer');
  }
  if (typeof fenced !== 'boolean') throw corrupt(schema, 'fenced is not a boolean');
  if (changedAt !== undefined && typeof changedAt !== 'string') {
    throw corrupt(schema, 'changedAt is not text');
  }
  return { generation: BigInt(generation), fenced, changedAt };
}

function encodeFence(fence: WriterFence): string {
  return JSON.stringify({
    generation: fence.generation.toString(),
    fenced: fence.fenced,
    changedAt: fence.changedAt,
  });
}

function fencedError(schema: string, fence: WriterFence): WriterFencedError {
  return new WriterFencedError(
    `schema "${schema}" is fenced (generation ${fence.generation}` +
      `${fence.changedAt ? `, since ${fence.changedAt}` : ''}): it is no longer the directory's ` +
      `writable copy, and no writer may publish to it; point the writer at the promoted primary`,
    true,
  );
}

/** The statement a writer's transaction starts with: it holds the fence row until commit. */
export function fenceCheckQuery(schema: string): PgQuery {
  return {
    text: `SELECT value FROM ${table(schema)} WHERE name = $1 FOR SHARE`,
    values: [FENCE_SETTING],
  };
}

/**
 * Refuses a write by the writer of `generation` unless the fence row (from
 * {@link fenceCheckQuery}) still names that generation, unfenced.
 * @throws WriterFencedError (`STORAGE_LOCKED`) when the store was fenced or another writer
 * claimed it
 */
export function checkFence(schema: string, rows: PgRow[], generation: bigint): void {
  const refusal = fenceRefusal(schema, parseFence(schema, rows[0]?.value), generation);
  if (refusal !== undefined) throw refusal;
}

/**
 * Why `fence` refuses the writer of `generation` for good (the store fenced, or claimed by a
 * newer writer), or undefined when that writer may write.
 */
export function fenceRefusal(
  schema: string,
  fence: WriterFence,
  generation: bigint,
): WriterFencedError | undefined {
  if (fence.fenced) return fencedError(schema, fence);
  if (fence.generation === generation) return undefined;
  return new WriterFencedError(
    `another writer opened schema "${schema}" since this one (generation ` +
      `${fence.generation}, this writer's is ${generation}): this writer is fenced and ` +
      `must not publish; reopen the directory`,
    false,
  );
}

/** Runs `change` on the fence row, locked, in one transaction, and stores its result. */
async function updateFence(
  pool: PgPool,
  schema: string,
  operation: string,
  change: (fence: WriterFence) => WriterFence,
): Promise<WriterFence> {
  try {
    return await inTransaction(pool, 'BEGIN', async (client) => {
      // the row exists before it is locked, so two first changes cannot both start from
      // "absent" and the later overwrite the earlier
      await client.query({
        text: `INSERT INTO ${table(schema)} (name, value) VALUES ($1, $2) ON CONFLICT DO NOTHING`,
        values: [FENCE_SETTING, encodeFence(UNCLAIMED)],
      });
      const { rows } = await client.query({
        text: `SELECT value FROM ${table(schema)} WHERE name = $1 FOR UPDATE`,
        values: [FENCE_SETTING],
      });
      const next = change(parseFence(schema, rows[0]?.value));
      await client.query({
        text: `UPDATE ${table(schema)} SET value = $2 WHERE name = $1`,
        values: [FENCE_SETTING, encodeFence(next)],
      });
      return next;
    });
  } catch (e) {
    throw storageError(e, operation, true);
  }
}

/**
 * Claims the next generation for a writer that has just taken the writer lock.
 * @throws WriterFencedError (`STORAGE_LOCKED`) when the store is fenced
 */
export async function claimGeneration(pool: PgPool, schema: string): Promise<bigint> {
  const fence = await updateFence(pool, schema, 'claiming the writer generation', (f) => {
    if (f.fenced) throw fencedError(schema, f);
    return { ...f, generation: f.generation + 1n };
  });
  return fence.generation;
}

/** The store's fence as it stands (read-only: works on a standby too). */
export async function readFence(pool: PgPool, schema: string): Promise<WriterFence> {
  try {
    const { rows } = await pool.query({
      text: `SELECT value FROM ${table(schema)} WHERE name = $1`,
      values: [FENCE_SETTING],
    });
    return parseFence(schema, rows[0]?.value);
  } catch (e) {
    throw storageError(e, 'reading the writer fence');
  }
}

/**
 * Fences the store: from now on no writer may publish to it, neither the one that holds it
 * (its next write is refused) nor one that opens it later. A publish in flight finishes
 * first. Idempotent apart from the generation, which it bumps.
 */
export function fenceStore(pool: PgPool, schema: string): Promise<WriterFence> {
  return updateFence(pool, schema, 'fencing the store', (f) => ({
    generation: f.generation + 1n,
    fenced: true,
    changedAt: new Date().toISOString(),
  }));
}

/** Lifts a fence, making the store writable again (a new generation). */
export function unfenceStore(pool: PgPool, schema: string): Promise<WriterFence> {
  return updateFence(pool, schema, 'lifting the fence', (f) => ({
    generation: f.generation + 1n,
    fenced: false,
    changedAt: new Date().toISOString(),
  }));
}
