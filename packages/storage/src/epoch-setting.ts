/**
 * Store settings that hold an epoch in decimal (the VRF proofs' mark, the last epoch whose
 * node versions are collected): one reading, one error for a value that is not one.
 */

import { AkdError } from '@akd-ts/core';
import type { Database } from './database.js';

/**
 * The epoch the setting `name` holds, or undefined where it is absent or empty.
 * @throws AkdError `STORAGE_CORRUPT` for a value that is not a decimal epoch
 */
export async function readEpochSetting(db: Database, name: string): Promise<bigint | undefined> {
  const value = await db.getSetting(name);
  if (value === undefined || value === '') return undefined;
  if (!/^\d{1,20}$/.test(value)) {
    throw new AkdError(
      'STORAGE_CORRUPT',
      `the setting ${name} holds ${JSON.stringify(value.slice(0, 40))}, not an epoch`,
    );
  }
  return BigInt(value);
}
