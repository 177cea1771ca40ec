// A node:test reporter for scripts/test.mjs: one JSON line per finished test, so the runner can
// close its output with the names of the failing and skipped tests and their reasons instead
// of leaving them thousands of lines up. Suites are left out unless they failed for a reason of
// their own (a hook), which is then the cause of their tests' cancellation.

function firstLine(error) {
  if (error === undefined || error === null) return undefined;
  const cause = error.cause ?? error;
  const text = cause instanceof Error ? `${cause.name}: ${cause.message}` : String(cause);
  const line = text.split('\n').find((l) => l.trim() !== '') ?? text;
  return line.length > 300 ? `${line.slice(0, 300)}...` : line;
}

export default async function* testResults(source) {
  for await (const { type, data } of source) {
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
    yield `${JSON.stringify(record)}\n`;
  }
}
