#!/usr/bin/env node
// Runs every test file (packages/*/test/**/*.test.ts) with node:test against the TypeScript
// sources (the "source" export condition, compiled on the fly by tsx), collecting V8 coverage
// that c8 reports, and closes with a summary: the PostgreSQL server used, skipped tests with
// their reasons, line coverage of packages/*/src against its floor (.c8rc.json), and, when the
// run failed, why (the failing tests' names, or the coverage floor), right above the last line
// `tests: N passed, N failed, N skipped`. Arguments narrow the run to files whose path
// contains one of them (`npm test -- vrf proto`); the coverage floor applies to full runs only.
//
// PostgreSQL tests use AKD_TEST_POSTGRES_URL when it is set (CI sets it); otherwise this runner
// starts a throwaway server for the run and removes it afterwards (scripts/test-postgres.mjs).
// With CI=true, a skipped test fails the run: CI has every dependency, so a skip there means a
// check silently did not happen.
//
// Every test file has a time limit (AKD_TEST_TIMEOUT_MS, default 10 minutes; node's
// --test-timeout, which node 20 applies to each file as a whole): a test that waits for
// something that never comes fails its file, and is named in the summary as hung (the tests
// its file had begun and not finished, test-reporter.mjs), instead of holding the run until
// CI's own limit ends it with no name. The limit is no measure of speed: it is far above any
// file's time on a busy machine.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { availableParallelism, tmpdir } from 'node:os';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { keepOneTextPerUrl } from './coverage-texts.mjs';
import { startThrowawayPostgres } from './test-postgres.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));

function walk(dir, out) {
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name === 'dist') continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) walk(path, out);
    else if (name.endsWith('.test.ts')) out.push(relative(root, path));
  }
  return out;
}

const filters = process.argv.slice(2);
const files = walk(join(root, 'packages'), [])
  .filter((f) => filters.length === 0 || filters.some((x) => f.includes(x)))
  .sort();
if (files.length === 0) {
  console.error(`no test files match ${filters.join(' ')}`);
  process.exit(1);
}
const fullRun = filters.length === 0;
const ci = process.env.CI === 'true';

/** Does any selected file use PostgreSQL (directly, or through the shared test stores)? */
const usesPostgres =
  fullRun ||
  files.some((f) => /postgres|support\/stores/i.test(readFileSync(join(root, f), 'utf8')));

const work = mkdtempSync(join(tmpdir(), 'akd-test-run-'));
const env = { ...process.env, AKD_TEST: '1' };
let postgres;
let postgresLine = 'PostgreSQL: not needed by the selected files';
let interrupted;
let child;

async function cleanUp() {
  await postgres?.stop().catch((e) => console.error(`could not stop PostgreSQL: ${e.message}`));
  rmSync(work, { recursive: true, force: true });
}

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    interrupted = signal;
    child?.kill(signal);
  });
}

if (process.env.AKD_TEST_POSTGRES_URL) {
  postgresLine = 'PostgreSQL: the server AKD_TEST_POSTGRES_URL names';
} else if (usesPostgres) {
  try {
    postgres = await startThrowawayPostgres();
  } catch (e) {
    await cleanUp();
    console.error(
      `\nFAILED: could not start a throwaway PostgreSQL server for the tests: ${e.message}`,
    );
    console.error('(set AKD_TEST_POSTGRES_URL to use a server of your own)');
    process.exit(1);
  }
  env.AKD_TEST_POSTGRES_URL = postgres.url;
  postgresLine = `PostgreSQL: a throwaway server for this run (${postgres.source}), removed afterwards`;
  console.log(`started a throwaway PostgreSQL server: ${postgres.source}, ${postgres.url}`);
}

/** Each test file's time limit, ms: long enough for a loaded machine, short of CI's. */
const timeoutMs = Number(process.env.AKD_TEST_TIMEOUT_MS ?? 600_000);
if (!Number.isInteger(timeoutMs) || timeoutMs <= 0) {
  console.error(`AKD_TEST_TIMEOUT_MS must be a positive integer (ms), not ${timeoutMs}`);
  process.exit(1);
}

const results = join(work, 'results.jsonl');
const reportDir = join(work, 'coverage');
const nodeArgs = [
  '--conditions=source',
  '--import',
  'tsx',
  '--test',
  `--test-concurrency=${Math.max(2, availableParallelism())}`,
  `--test-timeout=${timeoutMs}`,
  '--test-reporter=spec',
  '--test-reporter-destination=stdout',
  `--test-reporter=${pathToFileURL(join(root, 'scripts/test-reporter.mjs')).href}`,
  `--test-reporter-destination=${results}`,
  ...files,
];
const v8Dir = mkdtempSync(join(work, 'v8-'));
const c8Args = [
  // each run collects coverage in its own directory, so concurrent runs cannot mix their data
  `--temp-directory=${v8Dir}`,
  `--report-dir=${reportDir}`,
  '--reporter=text',
  '--reporter=json-summary',
  // the floor is checked below, so that its verdict comes last
  '--check-coverage=false',
];

/** Runs `args` with this Node; resolves to its exit status. */
function run(args, childEnv) {
  return new Promise((resolve) => {
    child = spawn(process.execPath, args, { cwd: root, stdio: 'inherit', env: childEnv });
    child.on('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}

// the tests write raw V8 coverage, which is reported once each URL keeps one compiled text
// (coverage-texts.mjs): c8 wraps nothing, it only reports
const status = await run(nodeArgs, { ...env, NODE_V8_COVERAGE: v8Dir });
if (!interrupted) {
  keepOneTextPerUrl(v8Dir);
  await run([join(root, 'node_modules/c8/bin/c8.js'), 'report', ...c8Args], env);
}

// ---- the summary --------------------------------------------------------------------------

const tests = existsSync(results)
  ? readFileSync(results, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l))
  : [];
// (no line numbers: under tsx they point into the compiled code)
const where = (t) => (t.file ? `${relative(root, t.file)}: ` : '');
// suites are listed when a hook of theirs failed, but counted as tests never
const failed = tests.filter((t) => t.status === 'fail' && !t.suite);
// a test whose subtests failed says only that, and a cancelled one only that its parent
// failed: the causes are the others (a suite's failing hook among them)
const causes = tests.filter(
  (t) =>
    t.status === 'fail' &&
    t.failureType !== 'subtestsFailed' &&
    t.failureType !== 'cancelledByParent',
);
const cancelled = failed.filter((t) => t.failureType === 'cancelledByParent');
const skipped = tests.filter((t) => t.status === 'skip' || t.status === 'todo');
const passed = tests.filter((t) => t.status === 'pass');
// files that ran out of time, with the tests they had begun and not finished
const hung = causes.filter((t) => t.failureType === 'testTimeoutFailure');

/** Line coverage, overall and per package (lowest first). */
function coverage() {
  const path = join(reportDir, 'coverage-summary.json');
  if (!existsSync(path)) return undefined;
  const summary = JSON.parse(readFileSync(path, 'utf8'));
  const packages = new Map();
  for (const [file, s] of Object.entries(summary)) {
    if (file === 'total') continue;
    const name = relative(root, file).split('/').slice(0, 3).join('/');
    const p = packages.get(name) ?? { covered: 0, total: 0 };
    p.covered += s.lines.covered;
    p.total += s.lines.total;
    packages.set(name, p);
  }
  const lowest = [...packages]
    .filter(([, p]) => p.total > 0)
    .map(([name, p]) => ({ name, pct: (100 * p.covered) / p.total }))
    .sort((a, b) => a.pct - b.pct);
  return { pct: summary.total.lines.pct, lowest };
}

const floor = JSON.parse(readFileSync(join(root, '.c8rc.json'), 'utf8')).lines;
const cov = coverage();
const problems = [];
if (interrupted) problems.push(`interrupted by ${interrupted}`);
/** 'test', 'tests', 'suite', 'tests or suites'... for a list of failures. */
function noun(list) {
  const suites = list.filter((t) => t.suite).length;
  const word = suites === 0 ? 'test' : suites === list.length ? 'suite' : 'test or suite';
  return list.length === 1 ? word : word.replace(/(test|suite)/g, '$1s');
}

if (causes.length > 0) {
  const also =
    cancelled.length === 0
      ? ''
      : `\n  (and ${cancelled.length} test${cancelled.length === 1 ? '' : 's'} cancelled by these failures: ${cancelled.map((t) => t.name).join('; ')})`;
  problems.push(
    `${causes.length} ${noun(causes)} failed:\n` +
      causes.map((t) => `  ${where(t)}${t.name}\n    ${t.message ?? ''}`).join('\n') +
      also,
  );
} else if (failed.length > 0) {
  problems.push(`${failed.length} tests failed: ${failed.map((t) => t.name).join(', ')}`);
}
if (hung.length > 0) {
  problems.push(
    `${hung.length} test file${hung.length === 1 ? '' : 's'} ran out of time (${timeoutMs / 1000} s, AKD_TEST_TIMEOUT_MS); hung:\n` +
      hung
        .map((t) =>
          (t.hung?.length ? t.hung : ['(no test had begun)']).map((h) => `  ${where(t)}${h}`),
        )
        .flat()
        .join('\n'),
  );
}
if (ci && skipped.length > 0) {
  problems.push(
    `${skipped.length} test${skipped.length === 1 ? '' : 's'} skipped with CI=true (CI must run every test): ` +
      skipped.map((t) => t.name).join('; '),
  );
}
if (fullRun && cov !== undefined && cov.pct < floor) {
  const low = cov.lowest
    .slice(0, 3)
    .map((p) => `${p.name} ${p.pct.toFixed(1)}%`)
    .join(', ');
  problems.push(`line coverage ${cov.pct}% is below the ${floor}% floor (least covered: ${low})`);
}
if (fullRun && cov === undefined && !interrupted) problems.push('no coverage report was written');
if (status !== 0 && problems.length === 0) {
  problems.push(`the test process exited with status ${status} (see its output above)`);
}

await cleanUp();
const out = ['', '─── summary ───', postgresLine];
if (skipped.length > 0) {
  out.push(
    `skipped (${skipped.length}):`,
    ...skipped.map((t) => `  ${where(t)}${t.name}${t.reason ? ` (${t.reason})` : ''}`),
  );
}
if (cov !== undefined) {
  out.push(
    `line coverage: ${cov.pct}%${fullRun ? ` (floor ${floor}%)` : ' (floor not checked: a partial run)'}`,
  );
}
for (const p of problems) out.push(`FAILED: ${p}`);
out.push(`tests: ${passed.length} passed, ${failed.length} failed, ${skipped.length} skipped`);
console.log(out.join('\n'));
process.exit(problems.length > 0 ? 1 : 0);
