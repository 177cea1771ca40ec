/**
 * The V8 heap limit given to each proof server of `akd serve` (launcher.ts).
 */

/**
 * The default old-space limit of a proof server, MiB. What a proof server holds for good is
 * its bounded record cache (about 77 MiB at the default `--cache-mb` over a SQL store)
 * and what requests in flight hold; but V8 lets the heap grow to several times what it kept
 * at its last full collection before collecting again, and sizes that factor by the heap
 * limit (on a machine with GBs of memory, a limit of GBs and a factor up to 4). Under a
 * stream of lookups, whose cache entries are promoted and then evicted, a proof server then
 * held 400-600 MB, mostly garbage (cache of 32 MiB). With a limit of 512 MiB the factor is
 * smaller and the same proof server stayed near 350 MB of resident memory, as many lookups
 * a second answered.
 */
export const DEFAULT_PROOF_HEAP_MB = 512;

/**
 * The V8 flag that limits a proof server's heap to `mb` MiB (none for 0), unless the
 * operator already set a limit in NODE_OPTIONS, which the children inherit: theirs applies.
 * @throws RangeError unless `mb` is 0 or an integer of at least 64
 */
export function proofHeapArgs(
  mb: number = DEFAULT_PROOF_HEAP_MB,
  env: NodeJS.ProcessEnv = process.env,
): string[] {
  if (!Number.isInteger(mb) || (mb !== 0 && mb < 64)) {
    throw new RangeError(`a proof server's heap limit is 0 (none) or at least 64 MiB, not ${mb}`);
  }
  const set = (env['NODE_OPTIONS'] ?? '')
    .split(/\s+/)
    .some((a) => /^--max[-_]old[-_]space[-_]size(=|$)/.test(a));
  return mb === 0 || set ? [] : [`--max-old-space-size=${mb}`];
}
