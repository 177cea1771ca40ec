// A node:test reporter for scripts/test.mjs: one JSON line per finished test, so the runner can
// close its output with the names of the failing and skipped tests and their reasons instead
// of leaving them thousands of lines up. Suites are left out unless they failed for a reason of
// their own (a hook), which is then the cause of their tests' cancellation.
//
// A file that runs out of time (node's --test-timeout, which node 20 applies to each test
// file as a whole) fails as the file, not as the test that hung: so the tests each file has
// begun and not finished are tracked, and a file that timed out gets one record per such
// test (`hung`, with its suites' names before it), the test that held the file.

function firstLine(error) {
  if (error === undefined || error === null) return undefined;
  const cause = error.cause ?? error;
  const text = cause instanceof Error ? `${cause.name}: ${cause.message}` : String(cause);
  const line = text.split('\n').find((l) => l.trim() !== '') ?? text;
  return line.length > 300 ? `${line.slice(0, 300)}...` : line;
}

/** Per file, the tests begun and not finished: `name` and `nesting`, in the order begun. */
const running = new Map();

/** The innermost unfinished tests of `file`, each as `suite > ... > test`. */
function unfinished(file) {
  const open = running.get(file) ?? [];
  const out = [];
  open.forEach((t, i) => {
    // a test with an unfinished test inside it is a suite (or a parent) of the one that hung
    if (open[i + 1] !== undefined && open[i + 1].nesting > t.nesting) return;
    const path = [t.name];
    for (let j = i - 1, n = t.nesting; j >= 0 && n > 0; j--) {
      if (open[j].nesting < n) {
        path.unshift(open[j].name);
        n = open[j].nesting;
      }
    }
    out.push(path.join(' > '));
  });
  return out;
}

export default async function* testResults(source) {
  for await (const { type, data } of source) {
    if (type === 'test:dequeue' && data.file !== undefined && data.name !== data.file) {
      const open = running.get(data.file) ?? [];
      open.push({ name: data.name, nesting: data.nesting });
      running.set(data.file, open);
      continue;
    }
    if (type === 'test:complete' && data.file !== undefined) {
      const open = running.get(data.file) ?? [];
      const i = open.findIndex((t) => t.name === data.name && t.nesting === data.nesting);
      if (i >= 0) open.splice(i, 1);
      continue;
    }
    if (type !== 'test:pass' && type !== 'test:fail') continue;
    const error = data.details?.error;
    const suite = data.details?.type === 'suite';
    if (suite && (type === 'test:pass' || error?.failureType === 'subtestsFailed')) continue;
    const status =
      type === 'test:fail'
        ? 'fail'
        : data.skip !== undefined && data.skip !== false
          ? 'skip'
          : data.todo !== undefined && data.todo !== false
            ? 'todo'
            : 'pass';
    const record = { status, name: data.name, file: data.file, suite };
    if (status === 'skip' && typeof data.skip === 'string') record.reason = data.skip;
    if (status === 'fail') {
      record.failureType = error?.failureType;
      record.message = firstLine(error);
    }
    if (
      type === 'test:fail' &&
      error?.failureType === 'testTimeoutFailure' &&
      data.file !== undefined &&
      data.name === data.file
    ) {
      record.hung = unfinished(data.file);
    }
    yield `${JSON.stringify(record)}\n`;
  }
}
