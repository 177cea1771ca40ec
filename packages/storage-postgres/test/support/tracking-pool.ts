/**
 * An instrumented pool for tests: a real pg.Pool whose queries run on explicitly checked-out
 * connections, recording which server processes had a query in flight at the same time, and
 * which checked-out connection ran each statement (by name, or its text) with its values. It
 * can also fail the n-th query, to break a batch midway, or run `beforeQuery` (given the
 * connection's server process) before a statement on a checked-out connection is sent.
 */

import pg from 'pg';
import type { PgPool, PgPoolClient, PgQuery, PgResult } from '@akd-ts/storage-postgres';

export class TrackingPool implements PgPool {
  readonly real: pg.Pool;
  /** Server process ids with a query in flight right now. */
  private readonly active = new Set<number>();
  /** The most distinct connections that had queries in flight at once. */
  maxConcurrent = 0;
  readonly pids = new Set<number>();
  queries = 0;
  /** When set, the query with this number (1-based, counted from now) fails. */
  failAt: number | undefined;
  /** Every statement: the checked-out connection's number (0 for the pool's own queries). */
  readonly log: { client: number; statement: string; values?: unknown[] }[] = [];
  beforeQuery: ((q: PgQuery, pid: number) => Promise<void>) | undefined;
  private clients = 0;

  constructor(config: pg.PoolConfig) {
    this.real = new pg.Pool(config);
  }

  async query(query: PgQuery): Promise<PgResult> {
    this.log.push({ client: 0, statement: query.name ?? query.text, values: query.values });
    if (++this.queries === this.failAt) throw new Error('Connection terminated unexpectedly');
    const client = await this.real.connect();
    const pid = (client as unknown as { processID: number }).processID;
    this.active.add(pid);
    this.pids.add(pid);
    this.maxConcurrent = Math.max(this.maxConcurrent, this.active.size);
    try {
      return await client.query(query);
    } finally {
      this.active.delete(pid);
      client.release();
    }
  }

  async connect(): Promise<PgPoolClient> {
    const client = await this.real.connect();
    const id = ++this.clients;
    const pid = (client as unknown as { processID: number }).processID;
    // count queries inside transactions too, so failAt can land in the middle of a batch
    return {
      query: async (q: PgQuery) => {
        this.log.push({ client: id, statement: q.name ?? q.text, values: q.values });
        if (++this.queries === this.failAt) throw new Error('Connection terminated unexpectedly');
        await this.beforeQuery?.(q, pid);
        return client.query(q);
      },
      release: (destroy) => client.release(destroy),
      on: (event, listener) => client.on(event, listener),
      removeListener: (event, listener) => client.removeListener(event, listener),
    };
  }

  end(): Promise<void> {
    return this.real.end();
  }

  on(event: 'error', listener: (err: Error) => void): this {
    this.real.on(event, listener);
    return this;
  }
}
