// Arguments are checked as bytes: Node turns bytes that are not UTF-8 into U+FFFD before any
// code runs, so the command reads what the kernel passed (/proc/self/cmdline) and refuses such
// an argument, naming its option, instead of looking up or publishing another label.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { checkArgumentText, rawArguments } from '../src/argv-text.js';
import { tempDir, vectorCase, withOption } from './helpers.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const tmp = tempDir();
after(tmp.cleanup);

/** Runs the command from its sources through sh, so arguments can hold any bytes (printf). */
function shell(args: string) {
  const r = spawnSync(
    '/bin/sh',
    [
      '-c',
      `exec "$0" --conditions=source --import tsx packages/cli/src/bin.ts ${args}`,
      process.execPath,
    ],
    { cwd: ROOT, encoding: 'utf8', env: { ...process.env, AKD_DEBUG: '' } },
  );
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

test('an argument that is not UTF-8 is refused with its option, exit 2, before anything runs', () => {
  const ff = shell(`lookup --db memory: --label "$(printf 'a\\377')"`);
  assert.equal(ff.code, 2, ff.stderr);
  assert.match(
    ff.stderr,
    /^usage error: --label: the argument is not valid UTF-8; write bytes as hex:<hex> \(labels\) instead\n/,
  );
  const c = vectorCase('whatsapp_v1', tmp.write);
  const args = withOption(c.base, '--label', 'LABEL')
    .map((a) => (a === 'LABEL' ? `"$(printf '\\061\\306')"` : a))
    .join(' ');
  const verify = shell(`verify lookup ${args} --proof ${c.lookupFile}`);
  assert.equal(verify.code, 2);
  assert.match(verify.stderr, /^usage error: --label: the argument is not valid UTF-8/);
  const positional = shell(`publish "$(printf '\\377.jsonl')"`);
  assert.match(positional.stderr, /^usage error: argument 2: the argument is not valid UTF-8/);
  // U+FFFD typed as text is text: the command goes on (and finds no directory in memory:)
  const replacement = shell(`lookup --db memory: --label "$(printf '\\357\\277\\275')"`);
  assert.equal(replacement.code, 1, replacement.stderr);
  assert.match(replacement.stderr, /DIRECTORY_READ_ONLY: memory: holds no directory/);
});

test('rawArguments reads the last arguments of the command line, or is cautious without it', () => {
  const cmdline = tmp.write(
    'cmdline',
    new Uint8Array(Buffer.from('node\0--import\0tsx\0bin.ts\0lookup\0--label\0\xffx\0', 'latin1')),
  );
  const args = ['lookup', '--label', '\ufffdx'];
  const raw = rawArguments(args, cmdline);
  assert.deepEqual(
    raw.map((b) => Buffer.from(b).toString('latin1')),
    ['lookup', '--label', '\xffx'],
  );
  assert.throws(
    () => checkArgumentText(args, raw),
    /^UsageError: --label: the argument is not valid UTF-8/,
  );
  // no /proc: an argument holding U+FFFD may have been anything, so it is refused
  const cautious = rawArguments(args, '/nonexistent/cmdline');
  assert.throws(
    () => checkArgumentText(args, cautious),
    /--label: the argument is not valid UTF-8/,
  );
  assert.doesNotThrow(() => checkArgumentText(['epoch'], rawArguments(['epoch'], '/nonexistent')));
  // a command line that does not end with these arguments is not trusted either
  const other = rawArguments(['epoch', '--label', '\ufffd'], cmdline);
  assert.throws(() => checkArgumentText(['epoch', '--label', '\ufffd'], other), /--label/);
  assert.deepEqual(rawArguments(['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i'], cmdline).length, 9);
  // strings from in-process callers: lone surrogates, named by option or position
  assert.throws(
    () => checkArgumentText(['--domain-label=\ud800']),
    /^UsageError: --domain-label: .*lone surrogate/,
  );
  assert.throws(() => checkArgumentText(['verify', '\udfff']), /^UsageError: argument 2: /);
  assert.doesNotThrow(() => checkArgumentText(['--label', '\u{1f600}', '\ufffd']));
});
