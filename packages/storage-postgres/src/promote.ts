/**
 * The new primary's half of a fail-over: wait until the standby has applied the fence the
 * old primary was given (so it holds every epoch the old primary published), promote the
 * standby, and lift the fence, so that a writer may open the store there. Waiting for the
 * fence before promoting is what makes the fail-over lose no epoch: the fence is committed
 * after the old writer's last publish, and replication applies commits in order.
 */

import { setTimeout as delay } from 'node:timers/promises';
import { AkdError } from '@akd-ts/core';
import { storageError, type PgPool } from './client.js';
import { readFence, unfenceStore, type WriterFence } from './fencing.js';

export interface PromoteOptions {
  /**
   * The generation `fence` reported on the old primary. Promotion waits until this store has
   * applied it. Leave it out only when the old primary is gone for good (never fenced): then
   * whatever it published after the standby's last applied change is lost.
   */
  fencedGeneration?: bigint;
  /** How long to wait for the fence to arrive and for the promotion, ms (default 60,000). */
  timeoutMs?: number;
}

export interface PromoteResult {
  /** The fence after promotion: unfenced, at a new generation. */
  fence: WriterFence;
  /** True when this call promoted the server (false: it was a primary already). */
  promotedServer: boolean;
}

const POLL_MS = 100;

async function inRecovery(pool: PgPool): Promise<boolean> {
  try {
    const { rows } = await pool.query({ text: 'SELECT pg_is_in_recovery() AS recovery' });
    return rows[0]?.recovery === true;
  } catch (e) {
    throw storageError(e, 'asking whether the server is a standby');
  }
}

/** Waits until the store's fence generation reaches `generation`. */
async function awaitFence(
  pool: PgPool,
  schema: string,
  generation: bigint,
  deadline: number,
): Promise<void> {
  for (;;) {
    const fence = await readFence(pool, schema);
    if (fence.generation >= generation) return;
    if (Date.now() >= deadline) {
      throw new AkdError(
        'STORAGE_CONNECTION',
        `schema "${schema}" has not applied the fence of generation ${generation} (it is at ` +
          `${fence.generation}): this server lacks the old primary's last changes, so it was ` +
          `not promoted; check that it still streams from the old primary`,
      );
    }
    await delay(POLL_MS);
  }
}

/** Promotes the server (`pg_promote`, PostgreSQL 12+), waiting until it accepts writes. */
async function promoteServer(pool: PgPool, timeoutMs: number): Promise<void> {
  const seconds = Math.max(1, Math.ceil(timeoutMs / 1000));
  let promoted: unknown;
  try {
    const { rows } = await pool.query({
      text: 'SELECT pg_promote(true, $1) AS promoted',
      values: [seconds],
    });
    promoted = rows[0]?.promoted;
  } catch (e) {
    const state = (e as { code?: unknown }).code;
    if (state === '42501') {
      throw new AkdError(
        'STORAGE_TRANSACTION',
        `this role may not call pg_promote: the standby has applied the fence, so promote it ` +
          `by hand (pg_ctl promote) and run this again, or GRANT EXECUTE ON FUNCTION ` +
          `pg_promote TO the role`,
        { cause: e },
      );
    }
    throw storageError(e, 'promoting the server', true);
  }
  if (promoted !== true) {
    throw new AkdError(
      'STORAGE_CONNECTION',
      `the server did not finish promotion within ${seconds} s`,
    );
  }
}

/**
 * Makes the store in `schema` the directory's writable copy: waits for the fence (when
 * given), promotes the server when it is a standby, and lifts the fence.
 * @throws AkdError `STORAGE_CONNECTION` when the fence does not arrive in time or promotion
 * does not finish; `STORAGE_TRANSACTION` when the role may not promote
 */
export async function promoteStore(
  pool: PgPool,
  schema: string,
  options: PromoteOptions = {},
): Promise<PromoteResult> {
  const timeoutMs = options.timeoutMs ?? 60_000;
  const deadline = Date.now() + timeoutMs;
  if (options.fencedGeneration !== undefined) {
    await awaitFence(pool, schema, options.fencedGeneration, deadline);
  }
  const standby = await inRecovery(pool);
  if (standby) await promoteServer(pool, Math.max(1_000, deadline - Date.now()));
  const current = await readFence(pool, schema);
  const fence = current.fenced ? await unfenceStore(pool, schema) : current;
  return { fence, promotedServer: standby };
}
