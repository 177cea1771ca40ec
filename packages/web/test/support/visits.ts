/**
 * The page in headless Chromium across visits: the page built once into a temporary folder,
 * real servers over it, switching proxies in front of them (one origin, so one browser
 * storage, for another directory between two visits), and what the page shows of its head
 * and of a lookup. `useVisits()` registers the set-up and tear-down with node:test.
 */

import { after, before } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { configurationByName } from '@akd-ts/core';
import { Directory, InMemoryVrfKeyStore } from '@akd-ts/directory';
import { MemoryDatabase, StorageManager } from '@akd-ts/storage';
import { startServer, type RunningServer } from '@akd-ts/server';
import { CHROMIUM_ARGS, chromiumPath } from '../../../../test/browser/harness.js';
import { SECRET, type Fixture } from '../../../server/test/support.js';
import { akd } from '../../../cli/test/helpers.js';
import { switchProxy, type SwitchProxy } from './switch-proxy.js';

export interface Visits {
  /** The browser (undefined without Chromium: tests skip). */
  browser(): Browser;
  /** A real server of `fixture`'s directory serving the built page. */
  serve(fixture: Fixture): Promise<RunningServer>;
  /** A switching proxy in front of `server`. */
  proxyTo(server: RunningServer): Promise<SwitchProxy>;
}

/** Builds the page and launches Chromium before the file's tests; closes all after them. */
export function useVisits(): Visits {
  const executablePath = chromiumPath();
  const webRoot = mkdtempSync(join(tmpdir(), 'akd-web-visits-'));
  const running: { close(): Promise<void> }[] = [];
  let browser: Browser | undefined;
  before(async () => {
    const build = spawnSync(
      process.execPath,
      [fileURLToPath(new URL('../../build.mjs', import.meta.url)), '--out', webRoot],
      { encoding: 'utf8' },
    );
    assert.equal(build.status, 0, build.stderr);
    if (executablePath !== undefined) {
      browser = await chromium.launch({ executablePath, headless: true, args: CHROMIUM_ARGS });
    }
  });
  after(async () => {
    await browser?.close();
    for (const r of running.reverse()) await r.close();
    rmSync(webRoot, { recursive: true, force: true });
  });
  return {
    browser: () => browser!,
    serve: async (fixture) => {
      const server = await startServer(
        { directory: fixture.dir, processMetrics: false, webRoot },
        { port: 0 },
      );
      running.push(server);
      return server;
    },
    proxyTo: async (server) => {
      const proxy = await switchProxy(server.url);
      running.push(proxy);
      return proxy;
    },
  };
}

/** A directory with the demo's VRF key and configuration that published `epochs`. */
export async function directoryOf(
  epochs: { label: Uint8Array; value: Uint8Array }[][],
): Promise<Fixture> {
  const db = new MemoryDatabase();
  const dir = await Directory.open({
    config: configurationByName('whatsapp_v1'),
    storage: new StorageManager(db),
    vrfKeys: new InMemoryVrfKeyStore(SECRET),
  });
  const roots = [(await dir.getEpochHash()).hash];
  for (const updates of epochs) roots.push((await dir.publish(updates)).hash);
  return { db, dir, roots, close: () => dir.close() };
}

/** Opens the page in `context` (one browser's storage) and returns the settled head verdict. */
export async function visit(context: BrowserContext, url: string) {
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(url);
  await page.waitForSelector('#head-verdict[data-settled]', { timeout: 30_000 });
  assert.deepEqual(errors, [], 'no errors in the page');
  return { page, ...(await headOf(page)) };
}

/** The head verdict's kind and text, and what the browser remembers. */
export async function headOf(page: Page) {
  return {
    kind: (await page.getAttribute('#head-verdict', 'data-verdict'))!,
    verdict: (await page.textContent('#head-verdict'))!,
    remembered: (await page.textContent('#remembered'))!,
  };
}

/** `akd verify evidence FILE` checks the downloaded file and finds it proves `kind`. */
export async function provenOffline(file: string, kind: string): Promise<void> {
  const checked = await akd(['verify', 'evidence', file]);
  assert.equal(checked.code, 0, checked.stdout + checked.stderr);
  assert.match(checked.stdout, new RegExp(`proven: ${kind}`));
}

/** The browser's verdict on a lookup of `label`. */
export async function lookUp(
  page: Page,
  label: string,
): Promise<{ kind: string; verdict: string }> {
  await page.fill('#label', label);
  await page.click('#submit');
  await page.waitForSelector('#verdict[data-presented]', { timeout: 30_000 });
  return {
    kind: (await page.getAttribute('#verdict', 'data-verdict'))!,
    verdict: (await page.textContent('#verdict'))!,
  };
}
