/**
 * Appending one array to another. `out.push(...items)` passes every item as an argument, and
 * V8 overflows the stack from about 100,000 of them: a publish into 900,000 labels, whose
 * marker sweep planned a proof for each label, failed with "Maximum call stack size
 * exceeded". Batches of records, proofs and keys grow with the directory, so code that joins
 * them appends them one at a time.
 */

/**
 * Appends `items` to `out`, in order, and returns `out`.
 * @example appendAll(jobs, sweepJobs); // however many sweepJobs there are
 */
export function appendAll<T>(out: T[], items: Iterable<T>): T[] {
  for (const item of items) out.push(item);
  return out;
}
