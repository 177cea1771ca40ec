/**
 * What a call that must fail threw: the tests of malicious input check that it is a domain
 * error (AkdError) and then look at its code, so one shape of helper serves them all.
 */

import assert from 'node:assert/strict';
import { AkdError } from '@akd-ts/core';

/** The AkdError `f` throws; fails the test with `acceptedMessage` when `f` returns. */
export function domainError(f: () => unknown, acceptedMessage = 'accepted'): AkdError {
  try {
    f();
  } catch (e) {
    assert.ok(e instanceof AkdError, `a domain error, got ${String(e)}`);
    return e;
  }
  assert.fail(acceptedMessage);
}

/** The AkdError `p` rejects with; fails the test when it resolves. */
export async function domainRejection(p: Promise<unknown>): Promise<AkdError> {
  try {
    await p;
  } catch (e) {
    assert.ok(e instanceof AkdError, `a domain error, got ${String(e)}`);
    return e;
  }
  assert.fail('accepted');
}

/** The code of the AkdError `f` throws, or 'ACCEPTED' when it returns (for tables of cases). */
export function domainCode(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    assert.ok(e instanceof AkdError, `a domain error, got ${String(e)}`);
    return e.code;
  }
  return 'ACCEPTED';
}
