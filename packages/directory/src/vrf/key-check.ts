/**
 * A directory opened with a key that is not its own: a writer would place every version it
 * publishes where the directory's key does not (spec 5.4), which no later publish can undo,
 * and a reader would serve proofs that no client accepts. So a directory checks the key it is
 * given against the store before it serves or publishes anything: against the public key the
 * store records, else against one version the store holds. A writer records its public key
 * where the store has none, so that every later open compares with it.
 */

import { AkdError, VersionFreshness, isAkdError, toHex, verifyVrfLabel } from '@akd-ts/core';
import type { DirectoryContext } from '../context.js';
import { StoredVrfProofs, proofKey } from './stored-proofs.js';

/** The setting holding a directory's VRF public key in hex, as `akd init` records it too. */
export const VRF_PUBLIC_KEY_SETTING = 'vrf_public_key';

/** What a directory was given: its secret key (`vrfKeys`) or only its public key. */
export type GivenKey = 'secret' | 'public';

function wrongKey(given: GivenKey, why: string): AkdError {
  return new AkdError(
    given === 'secret' ? 'VRF_INVALID_SECRET_KEY' : 'VRF_INVALID_PUBLIC_KEY',
    `the VRF ${given} key given is not this directory's: ${why}`,
  );
}

/**
 * Why the context's key disagrees with the latest version of the first label the store lists,
 * or undefined where it agrees or the store has nothing to compare with (no label yet, a store
 * that cannot list them, or, without the secret, no stored proof of that version). With the
 * secret: the node label it computes for that version against the one its value state holds.
 * Without: whether the stored proof of that version yields that label under the public key.
 */
async function disagreement(ctx: DirectoryContext): Promise<string | undefined> {
  const { storage } = ctx;
  const [label] = (await storage.db.listUsernames?.(undefined, 1)) ?? [];
  if (label === undefined) return undefined;
  const state = await storage.getUserState(label, { kind: 'maxEpoch' });
  const job = { label, freshness: VersionFreshness.Fresh, version: state.version };
  const which = `version ${state.version} of label ${toHex(label)}`;
  const configuration = ' (or the configuration is not the one it was published with)';
  if (!(ctx.vrf instanceof StoredVrfProofs)) {
    const [computed] = await ctx.vrf.nodeLabels([job]);
    return computed!.equals(state.label)
      ? undefined
      : `under public key ${toHex(ctx.publicKey)}, ${which} is not where the store holds it` +
          configuration;
  }
  const [stored] = await storage.db.getVrfProofs([proofKey(job)]);
  if (stored === undefined) return undefined;
  try {
    const { config, publicKey } = ctx;
    verifyVrfLabel(config, publicKey, label, job.freshness, job.version, stored.proof, state.label);
    return undefined;
  } catch (e) {
    if (!isAkdError(e)) throw e;
    return `the stored proof of ${which} does not verify under public key ${toHex(ctx.publicKey)}${configuration}`;
  }
}

/**
 * Checks the context's key against the store (module comment); with `record` (a writer, which
 * holds the store's writer lock), records its public key where the store has none.
 * @throws AkdError `VRF_INVALID_SECRET_KEY` (given the secret) or `VRF_INVALID_PUBLIC_KEY`
 * (given the public key) when the key is another directory's, or a storage error
 */
export async function checkVrfKey(
  ctx: DirectoryContext,
  given: GivenKey,
  record: boolean,
): Promise<void> {
  const db = ctx.storage.db;
  const mine = toHex(ctx.publicKey);
  const recorded = await db.getSetting(VRF_PUBLIC_KEY_SETTING);
  if (recorded !== undefined) {
    if (recorded.toLowerCase() === mine) return;
    throw wrongKey(given, `its public key is ${recorded} (recorded in the store), not ${mine}`);
  }
  const why = await disagreement(ctx);
  if (why !== undefined) throw wrongKey(given, why);
  if (record) await db.setSetting(VRF_PUBLIC_KEY_SETTING, mine);
}
