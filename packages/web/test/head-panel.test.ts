// The page's head panel in headless Chromium against a real server behind a proxy that relays
// witness signatures: they show with their age and validity, a trusted witness's counts, a
// quorum older than the maximum age is a stale head with evidence, and the settings are kept;
// a saved state the client cannot read is an error until the person forgets it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { toHex } from '@akd-ts/core';
import { skippedWithoutChromium } from '../../../test/browser/harness.js';
import { demoDirectory } from '../../server/test/support.js';
import { testWitness } from '../../client/test/support/witness.js';
import { headOf, lookUp, provenOffline, useVisits, visit } from './support/visits.js';

const { browser, serve, proxyTo } = useVisits();

test('witness signatures show with their age; a quorum older than the maximum age is stale', async (t) => {
  if (skippedWithoutChromium(t)) return;
  const fixture = await demoDirectory();
  const proxy = await proxyTo(await serve(fixture));
  const witness = testWitness(7);
  const other = testWitness(9);
  const signedAt = Date.now() - 2 * 3_600_000; // two hours before the visit
  proxy.epochBody = (body) => ({
    ...body,
    witnesses: [
      witness.sign('akd-test', 3n, fixture.roots[3]!, signedAt),
      other.sign('akd-test', 3n, fixture.roots[3]!, signedAt, 0x0002),
    ],
  });
  const context = await browser().newContext({ acceptDownloads: true });
  const { page, kind } = await visit(context, proxy.url);
  assert.equal(kind, 'first-use');
  // no keys trusted yet: shown, not counted
  const unchecked = (await page.textContent('#witness-list'))!;
  assert.match(
    unchecked,
    /namespace 'akd-test', ciphersuite 0x0001: epoch 3, the served root hash, signed 2 h ago/,
  );
  assert.match(unchecked, /ciphersuite 0x0002/);
  assert.match(unchecked, /Not checked: no trusted witness keys set/);

  // trust one of the two witnesses
  await page.click('#witness-settings summary');
  await page.fill('#witness-keys', toHex(witness.publicKey));
  await page.fill('#witness-namespace', 'akd-test');
  await page.click('#witness-save');
  await page.waitForSelector('#head-verdict[data-settled]');
  const same = await headOf(page);
  assert.equal(same.kind, 'verified', same.verdict);
  assert.match(same.verdict, /Same head as on your last visit: epoch 3/);
  const rows = await page.$$eval('#witness-list li', (lis) =>
    lis.map((li) => [li.getAttribute('data-status'), li.textContent]),
  );
  assert.equal(rows[0]![0], 'valid');
  assert.match(
    rows[0]![1]!,
    new RegExp(`Valid signature of trusted key ${toHex(witness.publicKey)}`),
  );
  assert.equal(rows[1]![0], 'invalid');
  assert.match(
    (await page.textContent('#witness-status'))!,
    /relayed 2 witness signatures.*You trust 1 witness; a head needs 1 of their signatures/,
  );

  // at most one hour old: the quorum's two-hour-old signatures make the head stale
  await page.fill('#witness-max-age', '1');
  await page.click('#witness-save');
  await page.waitForSelector('#head-verdict[data-settled]');
  const stale = await headOf(page);
  assert.equal(stale.kind, 'failed', stale.verdict);
  assert.match(stale.verdict, /STALE head: CLIENT_STALE_HEAD/);
  const [download] = await Promise.all([
    page.waitForEvent('download'),
    page.click('#evidence-download'),
  ]);
  const evidence = JSON.parse(readFileSync((await download.path())!, 'utf8')) as {
    kind: string;
    witnesses: { keys: string[]; quorum: number; namespace: string; maxAgeMs: number };
    heads: { witnesses: unknown[] }[];
  };
  assert.equal(evidence.kind, 'stale');
  assert.deepEqual(evidence.witnesses, {
    keys: [toHex(witness.publicKey)],
    quorum: 1,
    namespace: 'akd-test',
    maxAgeMs: 3_600_000,
  });
  assert.equal(evidence.heads[0]!.witnesses.length, 1);
  await provenOffline((await download.path())!, 'stale');

  // the settings are kept by the browser: a later visit reads them back
  const later = await visit(context, proxy.url);
  assert.equal(later.kind, 'failed');
  assert.equal(await later.page.inputValue('#witness-max-age'), '1');
  await context.close();
});

test('a saved state the client cannot read is an error until the person forgets it', async (t) => {
  if (skippedWithoutChromium(t)) return;
  const proxy = await proxyTo(await serve(await demoDirectory()));
  const context = await browser().newContext();
  const first = await visit(context, proxy.url);
  // what another page of the origin, or a person, left in the page's storage key
  await first.page.evaluate(() => localStorage.setItem('akd-page-state', '{"format":"other"}'));
  await first.page.close();
  const second = await visit(context, proxy.url);
  assert.equal(second.kind, 'error', second.verdict);
  assert.match(second.verdict, /Could not verify the server's head: CLIENT_STATE/);
  assert.equal(await second.page.isVisible('#evidence-actions'), false, 'no evidence to offer');
  const refused = await lookUp(second.page, 'alice');
  assert.equal(refused.kind, 'failed');
  assert.match(refused.verdict, /head failed its check \(CLIENT_STATE\)/);
  await second.page.click('#forget-head');
  await second.page.waitForSelector('#head-verdict[data-settled][data-verdict="first-use"]');
  const found = await lookUp(second.page, 'alice');
  assert.equal(found.kind, 'verified', found.verdict);
  await context.close();
});
