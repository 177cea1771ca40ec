/**
 * What the crash test publishes: at epoch e, the first labels (LABELS_PER_EPOCH for the child,
 * fewer for the parent's check) of a window of a universe of UNIVERSE labels that moves with
 * the epoch, so labels gain versions over the run and new labels keep arriving. Shared by the
 * child that publishes and the parent that checks.
 */

export const CRASH_CONFIG = 'whatsapp_v1';
export const CRASH_VRF_SEED = 'akd-ts storage-postgres crash test key';
export const LABELS_PER_EPOCH = 300;
export const UNIVERSE = 3_000;

/** The label of the i-th update of epoch e. */
export function crashLabel(epoch: bigint, i: number): string {
  const start = Number((epoch * 211n) % BigInt(UNIVERSE));
  return `user-${(start + i) % UNIVERSE}`;
}

/** The updates of epoch `epoch` (the first `count` of its window), as [label, value] strings. */
export function crashUpdates(epoch: bigint, count = LABELS_PER_EPOCH): [string, string][] {
  return Array.from({ length: count }, (_, i) => [
    crashLabel(epoch, i),
    `key of ${crashLabel(epoch, i)} at epoch ${epoch}`,
  ]);
}
