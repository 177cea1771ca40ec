// The page's memory across visits, in headless Chromium against real servers on 127.0.0.1
// behind a proxy that switches directories between two visits of one browser: a second
// visit after a publish is proven to extend the first; a server that forks (another
// directory's root for the epoch the browser verified) or rolls back is a failed verdict whose
// evidence downloads as the client's JSON, which `akd verify evidence` finds proven.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { toHex, utf8 } from '@akd-ts/core';
import { skippedWithoutChromium } from '../../../test/browser/harness.js';
import { demoDirectory, EPOCHS, type Fixture } from '../../server/test/support.js';
import { directoryOf, headOf, lookUp, provenOffline, useVisits, visit } from './support/visits.js';

const { browser, serve, proxyTo } = useVisits();

/**
 * The demo directory's first two epochs, then another third epoch: what a server forking its
 * clients at epoch 3 serves to some of them (same VRF key and configuration, another root).
 */
function forkedDirectory(): Promise<Fixture> {
  return directoryOf([
    ...EPOCHS.slice(0, 2),
    [{ label: utf8('alice'), value: utf8('mallory-key') }],
  ]);
}

test('a second visit after a publish is proven to extend the first (append-only proof)', async (t) => {
  if (skippedWithoutChromium(t)) return;
  const fixture = await demoDirectory();
  const proxy = await proxyTo(await serve(fixture));
  const context = await browser().newContext();
  const first = await visit(context, proxy.url);
  assert.equal(first.kind, 'first-use', first.verdict);
  assert.match(first.verdict, /First visit: this browser now remembers epoch 3/);
  assert.match(first.remembered, /epoch 3, root hash [0-9a-f]{64}, trusted on first use/);
  await first.page.close();

  const root4 = (await fixture.dir.publish([{ label: utf8('dave'), value: utf8('dave-key') }]))
    .hash;
  const second = await visit(context, proxy.url);
  assert.equal(second.kind, 'verified', second.verdict);
  assert.match(second.verdict, /Epoch 4 extends your last visit's epoch 3/);
  assert.match(
    second.remembered,
    new RegExp(`epoch 4, root hash ${toHex(root4)}, proven to extend`),
  );
  // lookups verify against the head the browser verified
  const found = await lookUp(second.page, 'dave');
  assert.equal(found.kind, 'verified', found.verdict);
  assert.match(
    (await second.page.textContent('#details'))!,
    /Root hash fromthe head this browser verified/,
  );
  // a publish while the page is open: the lookup's newer epoch is proven before it is used
  const root5 = (await fixture.dir.publish([{ label: utf8('erin'), value: utf8('erin-key') }]))
    .hash;
  const fresh = await lookUp(second.page, 'erin');
  assert.equal(fresh.kind, 'verified', fresh.verdict);
  assert.match(fresh.verdict, /at epoch 5/);
  const now = await headOf(second.page);
  assert.match(now.verdict, /Epoch 5 extends your last visit's epoch 4/);
  assert.match(now.remembered, new RegExp(`epoch 5, root hash ${toHex(root5)}`));
  await context.close();
});

test('a server that forks between two visits is a failed verdict with evidence to download', async (t) => {
  if (skippedWithoutChromium(t)) return;
  const honest = await demoDirectory();
  const forked = await forkedDirectory();
  const honestServer = await serve(honest);
  const proxy = await proxyTo(honestServer);
  const context = await browser().newContext({ acceptDownloads: true });
  const first = await visit(context, proxy.url);
  assert.equal(first.kind, 'first-use', first.verdict);
  await first.page.close();

  // the same origin now serves another directory's root and proofs for epoch 3
  proxy.target = (await serve(forked)).url;
  const second = await visit(context, proxy.url);
  assert.equal(second.kind, 'failed', second.verdict);
  assert.match(second.verdict, /FORK: CLIENT_FORK/);
  assert.match(second.verdict, new RegExp(toHex(forked.roots[3]!)));
  // the browser still remembers the head it verified, not the forked one
  assert.match(second.remembered, new RegExp(`epoch 3, root hash ${toHex(honest.roots[3]!)}`));
  assert.equal(await second.page.textContent('#server-root-hash'), toHex(forked.roots[3]!));
  // AKD_SCREENSHOT_DIR keeps a picture of the verdict for a person to look at
  const shots = process.env.AKD_SCREENSHOT_DIR;
  if (shots) await second.page.screenshot({ path: join(shots, 'head-fork.png'), fullPage: true });

  const [download] = await Promise.all([
    second.page.waitForEvent('download'),
    second.page.click('#evidence-download'),
  ]);
  assert.equal(download.suggestedFilename(), 'akd-evidence-fork-epoch-3.json');
  const evidence = JSON.parse(readFileSync((await download.path())!, 'utf8')) as {
    format: string;
    kind: string;
    code: string;
    directory: { server: string; publicKey: string };
    heads: { epoch: string; rootHash: string; source: string }[];
  };
  assert.equal(evidence.format, 'akd-evidence');
  assert.equal(evidence.kind, 'fork');
  assert.equal(evidence.code, 'CLIENT_FORK');
  assert.equal(evidence.directory.server, proxy.url);
  const served = (await (await fetch(`${honestServer.url}/v1/epoch`)).json()) as {
    publicKey: string;
  };
  assert.equal(evidence.directory.publicKey, served.publicKey);
  assert.deepEqual(
    evidence.heads.map((h) => [h.epoch, h.rootHash, h.source]),
    [
      ['3', toHex(honest.roots[3]!), 'verified (first-use)'],
      ['3', toHex(forked.roots[3]!), 'served'],
    ],
  );
  await provenOffline((await download.path())!, 'fork');

  // nothing the forked server proves is shown as verified
  const lookup = await lookUp(second.page, 'alice');
  assert.equal(lookup.kind, 'failed');
  assert.match(lookup.verdict, /head failed its check \(CLIENT_FORK\)/);
  assert.doesNotMatch((await second.page.textContent('#details'))!, /mallory-key/);
  await context.close();
});

test('a server that rolls back between two visits is a failed verdict with evidence', async (t) => {
  if (skippedWithoutChromium(t)) return;
  const proxy = await proxyTo(await serve(await demoDirectory()));
  const context = await browser().newContext({ acceptDownloads: true });
  const first = await visit(context, proxy.url);
  assert.equal(first.kind, 'first-use', first.verdict);
  await first.page.close();

  // the same directory as it was at epoch 2 (same key, same roots up to there)
  const older = await directoryOf(EPOCHS.slice(0, 2));
  proxy.target = (await serve(older)).url;
  const second = await visit(context, proxy.url);
  assert.equal(second.kind, 'failed', second.verdict);
  assert.match(second.verdict, /ROLLBACK: CLIENT_ROLLBACK/);
  assert.match(second.verdict, /epoch 2, older than the verified epoch 3/);
  const [download] = await Promise.all([
    second.page.waitForEvent('download'),
    second.page.click('#evidence-download'),
  ]);
  assert.equal(download.suggestedFilename(), 'akd-evidence-rollback-epoch-2.json');
  const evidence = JSON.parse(readFileSync((await download.path())!, 'utf8')) as {
    kind: string;
    heads: { epoch: string; rootHash: string }[];
  };
  assert.equal(evidence.kind, 'rollback');
  assert.deepEqual(
    evidence.heads.map((h) => h.epoch),
    ['3', '2'],
  );
  assert.equal(evidence.heads[1]!.rootHash, toHex(older.roots[2]!));
  await provenOffline((await download.path())!, 'rollback');
  await context.close();
});
