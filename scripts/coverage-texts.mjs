// One compiled text per script URL in a run's raw V8 coverage, before c8 reports it.
//
// Under the test runner a source file can be compiled twice: as an ES module by tsx's loader,
// and as CommonJS by its require hook, which worker threads use (piscina requires a worker's
// script first, and tsx's ES module hooks do not reach worker threads). Both texts carry the
// file's URL, and c8 merges raw coverage by URL before it maps it back to the source, so the
// ranges of one text were read against the other: files that their tests cover fully were
// reported at 38%. This keeps, for each URL, only the text most processes ran (the signature
// of a text is its line lengths, from the source-map cache Node writes beside each script's
// coverage), and drops the scripts of any other text: their coverage is lost, which can only
// understate a file's coverage, never overstate it.
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** The compiled text's signature of `url` in one coverage file, or undefined without a map. */
function signature(file, url) {
  const lines = file['source-map-cache']?.[url]?.lineLengths;
  return Array.isArray(lines) ? lines.join(',') : undefined;
}

/**
 * The coverage file `name` of `dir`, parsed, or an empty one when it is not JSON (a process
 * stopped while writing it): such a file is left for c8, as it was before this step.
 */
function read(dir, name) {
  try {
    return JSON.parse(readFileSync(join(dir, name), 'utf8'));
  } catch {
    return { result: [] };
  }
}

/**
 * Rewrites the coverage files of `dir` (NODE_V8_COVERAGE) so that each URL keeps one compiled
 * text. Returns the URLs that had more than one, with the number of scripts dropped. Reads
 * the files twice, one at a time: a full run's files, source maps included, are too large to
 * hold together.
 */
export function keepOneTextPerUrl(dir) {
  const names = readdirSync(dir)
    .filter((n) => n.endsWith('.json'))
    .sort();
  /** url -> signature -> number of scripts */
  const counts = new Map();
  for (const name of names) {
    const file = read(dir, name);
    for (const script of file.result ?? []) {
      const sig = signature(file, script.url);
      if (sig === undefined) continue;
      const bySig = counts.get(script.url) ?? new Map();
      bySig.set(sig, (bySig.get(sig) ?? 0) + 1);
      counts.set(script.url, bySig);
    }
  }
  const kept = new Map();
  for (const [url, bySig] of counts) {
    if (bySig.size < 2) continue;
    kept.set(url, [...bySig].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))[0][0]);
  }
  const dropped = new Map();
  if (kept.size === 0) return dropped;
  for (const name of names) {
    const file = read(dir, name);
    const before = file.result?.length ?? 0;
    file.result = (file.result ?? []).filter((script) => {
      const want = kept.get(script.url);
      if (want === undefined || signature(file, script.url) === want) return true;
      dropped.set(script.url, (dropped.get(script.url) ?? 0) + 1);
      return false;
    });
    if (file.result.length !== before) writeFileSync(join(dir, name), JSON.stringify(file));
  }
  return dropped;
}
