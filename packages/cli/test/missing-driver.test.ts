// A store whose driver is not installed (the SQL drivers are optional) is reported on one
// line naming the package to install, as a failure the command explains, not as a bug.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { MissingDriverError } from '@akd-ts/server/drivers';
import { reportFailure } from '../src/errors.js';

test('a missing driver is one plain error line and exit status 1', () => {
  let text = '';
  const code = reportFailure(new MissingDriverError('postgres', new Error('not found')), {
    stdout: { write: () => {} },
    stderr: { write: (t: string) => (text += t) },
    stdin: Readable.from([]),
    env: {},
  });
  assert.equal(code, 1);
  assert.equal(
    text,
    'error: a postgres:// store needs @akd-ts/storage-postgres (with pg), which is not ' +
      'installed here: run npm install @akd-ts/storage-postgres\n',
  );
});
