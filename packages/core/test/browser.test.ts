// The verifiers in a real browser: core's TypeScript sources are bundled for the browser (the
// build fails on any Node built-in) and run in headless Chromium, which must give exactly the
// answers Node gives on upstream's vectors, their named mutations and the spec 10.5 audit proof.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  AkdError,
  auditVerify,
  configurationByName,
  decodeAppendOnlyProof,
  fromHex,
  toHex,
} from '@akd-ts/core';
import { loadVectors } from '../../../test/support/vectors.js';
import { runMutations, verifyVectors } from '../../../test/support/mutations.js';
import {
  bundleForBrowser,
  chromiumPath,
  skippedWithoutChromium,
  openInChromium,
  type BrowserPage,
} from '../../../test/browser/harness.js';
import { plain, toHexInputs, type Plain } from '../../../test/browser/wire.js';
import type { AkdTestApi } from '../../../test/browser/entry.js';
import { AUDIT_EXAMPLES } from '../../../test/support/audit-example.js';

const executablePath = chromiumPath();

let bundle: Promise<string> | undefined;
const coreBundle = () => (bundle ??= bundleForBrowser('test/browser/entry.ts'));

let session: Promise<BrowserPage> | undefined;
const browserPage = async () =>
  (session ??= coreBundle().then((code) => openInChromium(code, 'akdTest', executablePath!)));

after(async () => {
  if (session) await (await session.catch(() => undefined))?.close();
});

/** Calls `globalThis.akdTest[method](...args)` in the page. */
async function inBrowser<M extends keyof AkdTestApi>(
  method: M,
  ...args: Parameters<AkdTestApi[M]>
): Promise<Plain> {
  const { page } = await browserPage();
  return page.evaluate(
    ({ method, args }) =>
      (globalThis as unknown as { akdTest: Record<string, (...a: unknown[]) => Plain> }).akdTest[
        method
      ]!(...args),
    { method, args: args as unknown[] },
  );
}

test('core and the test modules bundle for the browser without any Node built-in', async () => {
  const code = await coreBundle();
  assert.ok(code.includes('akdTest'));
});

test('the bundle guard rejects a Node built-in, with or without the node: prefix', async () => {
  for (const name of ['node:fs', 'path', 'node:crypto']) {
    await assert.rejects(
      bundleForBrowser({ contents: `import * as m from '${name}'; console.log(m);` }),
      (e: Error) => e.message.includes(`"${name}" is a Node built-in`),
    );
  }
});

const hexValue = (s: string) => toHex(new TextEncoder().encode(s));
const result = (epoch: number, version: number, value: string) => ({
  epoch: String(epoch),
  version: String(version),
  value: hexValue(value),
});

for (const name of ['whatsapp_v1', 'experimental'] as const) {
  const vectors = loadVectors(name);

  test(`${name}: Chromium verifies upstream's lookup and history proofs as Node does`, async (t) => {
    if (skippedWithoutChromium(t)) return;
    const browser = await inBrowser('verifyVectors', toHexInputs(vectors));
    assert.deepEqual(browser, {
      lookup: result(48, 3, '16,48'),
      complete: [result(48, 3, '16,48'), result(32, 2, '16,32'), result(16, 1, '16,16')],
      mostRecent1: [result(48, 3, '16,48')],
    });
    assert.deepEqual(browser, plain(verifyVectors(vectors)));
  });

  test(`${name}: Chromium rejects every named mutation with Node's error code`, async (t) => {
    if (skippedWithoutChromium(t)) return;
    const browser = (await inBrowser('runMutations', toHexInputs(vectors))) as Record<
      string,
      { name: string; code: string; expected: string[] }[]
    >;
    const node = runMutations(vectors);
    assert.deepEqual(browser, plain(node));
    for (const [proof, list] of Object.entries(browser)) {
      assert.ok(list.length >= 12, `${proof}: at least twelve mutations, got ${list.length}`);
      for (const { name: mutation, code, expected } of list) {
        assert.ok(
          expected.includes(code),
          `${proof}, ${mutation}: ${code}, expected ${expected.join(' or ')}`,
        );
      }
    }
  });
}

for (const ex of AUDIT_EXAMPLES) {
  test(`${ex.configuration}: Chromium verifies the spec 10.5 audit proof`, async (t) => {
    if (skippedWithoutChromium(t)) return;
    const browser = await inBrowser(
      'auditVerify',
      ex.configuration,
      [ex.root1, ex.root2],
      ex.proof,
    );
    assert.deepEqual(browser, { startEpoch: '1', endEpoch: '2' });
    // a wrong end root is rejected in the browser with Node's code
    const roots = [fromHex(ex.root1), fromHex(ex.root2)];
    roots[1]![0]! ^= 1;
    let nodeCode = 'ACCEPTED';
    try {
      auditVerify(
        configurationByName(ex.configuration),
        roots,
        decodeAppendOnlyProof(fromHex(ex.proof)),
      );
    } catch (e) {
      if (!(e instanceof AkdError)) throw e;
      nodeCode = e.code;
    }
    assert.equal(nodeCode, 'AUDIT_END_HASH_MISMATCH');
    const wrong = await inBrowser('auditVerify', ex.configuration, roots.map(toHex), ex.proof);
    assert.deepEqual(wrong, { code: nodeCode });
  });
}
