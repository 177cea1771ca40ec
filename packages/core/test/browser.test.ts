// The verifiers in a real browser: core's TypeScript sources are bundled for the browser (the
// build fails on any Node built-in) and run in headless Chromium, which must give exactly the
// answers Node gives on upstream's vectors, their named mutations and the spec 10.5 audit proof,
// on the WebAssembly arithmetic and on noble's (also in a page whose policy refuses WASM), and
// the two arithmetics must agree on RFC 9381's examples and on random inputs.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  AkdError,
  auditVerify,
  configurationByName,
  decodeAppendOnlyProof,
  fromHex,
  toHex,
  type VrfArithmetic,
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
import { vrfDifferential } from '../../../test/support/vrf-differential.js';
import { RFC_VECTORS } from './support/rfc9381.js';

const executablePath = chromiumPath();

let bundle: Promise<string> | undefined;
const coreBundle = () => (bundle ??= bundleForBrowser('test/browser/entry.ts'));

let session: Promise<BrowserPage> | undefined;
const browserPage = async () =>
  (session ??= coreBundle().then((code) => openInChromium(code, 'akdTest', executablePath!)));

// A page whose Content-Security-Policy refuses WebAssembly (no 'wasm-unsafe-eval'): core must
// fall back to noble there.
let noWasmSession: Promise<BrowserPage> | undefined;
const noWasmPage = async () =>
  (noWasmSession ??= coreBundle().then((code) =>
    openInChromium(code, 'akdTest', executablePath!, {
      'content-security-policy': "default-src 'none'; script-src 'self'",
    }),
  ));

after(async () => {
  for (const s of [session, noWasmSession]) {
    if (s) await (await s.catch(() => undefined))?.close();
  }
});

/** Calls `globalThis.akdTest[method](...args)` in the page (by default the one allowing WASM). */
async function inBrowser<M extends keyof AkdTestApi>(
  method: M,
  ...args: Parameters<AkdTestApi[M]>
): Promise<Plain> {
  return inPage(browserPage, method, ...args);
}

async function inPage<M extends keyof AkdTestApi>(
  which: () => Promise<BrowserPage>,
  method: M,
  ...args: Parameters<AkdTestApi[M]>
): Promise<Plain> {
  const { page } = await which();
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

/** Loads the module in the page and chooses `arithmetic` there. */
async function useArithmetic(arithmetic: VrfArithmetic): Promise<void> {
  const state = (await inBrowser('loadWasm')) as { loaded: boolean; error: string | null };
  assert.deepEqual([state.loaded, state.error], [true, null]);
  assert.equal(await inBrowser('useArithmetic', arithmetic), arithmetic);
}

test('Chromium compiles the WebAssembly module asynchronously and verifies on it', async (t) => {
  if (skippedWithoutChromium(t)) return;
  assert.deepEqual(await inBrowser('loadWasm'), { loaded: true, arithmetic: 'wasm', error: null });
});

test("Chromium: RFC 9381's examples on both arithmetics", async (t) => {
  if (skippedWithoutChromium(t)) return;
  const expected = RFC_VECTORS.map((v) => ({
    pk: v.pk,
    pi: v.pi,
    verify: v.beta,
    proofToHash: v.beta,
    evaluate: v.beta,
  }));
  for (const arithmetic of ['wasm', 'noble'] as const) {
    await useArithmetic(arithmetic);
    assert.deepEqual(await inBrowser('rfc', RFC_VECTORS), expected, arithmetic);
  }
  await inBrowser('useArithmetic', 'wasm');
});

test('Chromium: random keys, inputs and proofs give identical results on both arithmetics', async (t) => {
  if (skippedWithoutChromium(t)) return;
  await useArithmetic('wasm');
  const report = (await inBrowser('differential', 2026, 25)) as {
    compared: number;
    accepted: number;
    rejected: number;
    mismatches: string[];
  };
  assert.deepEqual(report.mismatches, []);
  assert.equal(report.compared, 25 * 11);
  assert.ok(report.accepted >= 25 * 5, `accepted ${report.accepted}`);
  assert.ok(report.rejected >= 25, `rejected ${report.rejected}`);
  // the same seed in Node gives the same counts
  const node = vrfDifferential(2026, 25);
  assert.deepEqual(node, report);
});

test('a page whose policy refuses WebAssembly verifies on noble, with the same answers', async (t) => {
  if (skippedWithoutChromium(t)) return;
  const state = (await inPage(noWasmPage, 'loadWasm')) as {
    loaded: boolean;
    arithmetic: string;
    error: string | null;
  };
  assert.equal(state.loaded, false);
  assert.equal(state.arithmetic, 'noble');
  assert.match(state.error ?? '', /WebAssembly|Content Security Policy|unsafe-eval/i);
  const vectors = loadVectors('whatsapp_v1');
  assert.deepEqual(
    await inPage(noWasmPage, 'verifyVectors', toHexInputs(vectors)),
    plain(verifyVectors(vectors)),
  );
  assert.deepEqual(
    await inPage(noWasmPage, 'runMutations', toHexInputs(vectors)),
    plain(runMutations(vectors)),
  );
});

for (const [name, arithmetic] of (['whatsapp_v1', 'experimental'] as const).flatMap((n) =>
  (['wasm', 'noble'] as const).map((a) => [n, a] as const),
)) {
  const vectors = loadVectors(name);

  test(`${name} on ${arithmetic}: Chromium verifies upstream's lookup and history proofs as Node does`, async (t) => {
    if (skippedWithoutChromium(t)) return;
    await useArithmetic(arithmetic);
    const browser = await inBrowser('verifyVectors', toHexInputs(vectors));
    assert.deepEqual(browser, {
      lookup: result(48, 3, '16,48'),
      complete: [result(48, 3, '16,48'), result(32, 2, '16,32'), result(16, 1, '16,16')],
      mostRecent1: [result(48, 3, '16,48')],
    });
    assert.deepEqual(browser, plain(verifyVectors(vectors)));
  });

  test(`${name} on ${arithmetic}: Chromium rejects every named mutation with Node's error code`, async (t) => {
    if (skippedWithoutChromium(t)) return;
    await useArithmetic(arithmetic);
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
