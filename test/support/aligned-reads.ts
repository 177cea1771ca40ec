/**
 * A store as a driver without the optional aligned node read (`Database.batchGetNodes`) sees
 * it: only what the Database interface requires, so readers fall back to `batchGet`.
 */

import type { Database } from '@akd-ts/storage';

/** `db` without its aligned node read. */
export function withoutAlignedReads(db: Database): Database {
  return new Proxy(db, {
    get: (target, name) =>
      name === 'batchGetNodes'
        ? undefined
        : (Reflect.get(target, name, target) as (...a: unknown[]) => unknown).bind?.(target),
  });
}
