/**
 * A store as a driver without the optional aligned node reads (`Database.batchGetNodes`,
 * `batchGetNodeBytes`) sees it: only what the Database interface requires, so readers fall
 * back to `batchGet`.
 */

import type { Database } from '@akd-ts/storage';

/** `db` without its aligned node reads. */
export function withoutAlignedReads(db: Database): Database {
  return new Proxy(db, {
    get: (target, name) => {
      if (name === 'batchGetNodes' || name === 'batchGetNodeBytes') return undefined;
      const value = Reflect.get(target, name, target) as unknown;
      return typeof value === 'function' ? (value as () => unknown).bind(target) : value;
    },
  });
}
