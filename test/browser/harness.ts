/**
 * Runs browser-safe TypeScript in Debian's Chromium, for the in-browser test and the
 * benchmarks: bundle an entry with esbuild (core's TypeScript sources through the "source"
 * export condition; the build fails if anything imports a Node built-in, which is the proof
 * that core runs in a browser), serve it from an in-process HTTP server on 127.0.0.1, and open
 * it in headless Chromium driven by playwright-core.
 */

import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { builtinModules } from 'node:module';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { build, type Plugin } from 'esbuild';
import { chromium, type Browser, type Page } from 'playwright-core';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Chromium's flags for a sandbox-less, offline, quiet headless run. */
export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** The Chromium binary to drive (AKD_CHROMIUM_PATH, else Debian's), or undefined if absent. */
export function chromiumPath(): string | undefined {
  const path = process.env.AKD_CHROMIUM_PATH || '/usr/bin/chromium';
  return existsSync(path) ? path : undefined;
}

/**
 * For an in-browser test: true (after skipping `t`, saying why) when there is no Chromium.
 * With CI=true a missing Chromium fails the test instead: CI installs it, so a skip there would
 * hide a check that did not run.
 */
export function skippedWithoutChromium(t: { skip(message: string): void }): boolean {
  if (chromiumPath() !== undefined) return false;
  const why = `no Chromium at ${process.env.AKD_CHROMIUM_PATH || '/usr/bin/chromium'} (install Debian's chromium or set AKD_CHROMIUM_PATH)`;
  if (process.env.CI === 'true') assert.fail(`${why}; CI=true requires it`);
  t.skip(why);
  return true;
}

/**
 * The first line of every bundle, as of the page's app.js (packages/web/build.mjs): V8's
 * explicit compile hint, so that a page compiles its functions while the script loads rather
 * than on their first call. Benches that time a fresh page's first verification measure the
 * page as it ships.
 */
export const PAGE_BANNER = '//# allFunctionsCalledOnLoad';

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
const BUILTIN_FILTER = new RegExp(`^(node:.*|${builtinModules.map(escape).join('|')})(/.*)?$`);

/**
 * Fails the build on any import of a Node built-in, even one a package's "browser" field
 * would map away: core must not reach for Node at all.
 */
const noNodeBuiltins: Plugin = {
  name: 'no-node-builtins',
  setup(b) {
    b.onResolve({ filter: BUILTIN_FILTER }, (args) => ({
      errors: [
        {
          text: `"${args.path}" is a Node built-in, imported by ${args.importer}: the browser bundle may not use Node`,
        },
      ],
    }));
  },
};

/**
 * Bundles `entry` (a path relative to the repository root, or module source resolved from the
 * root) into one browser ES module. Rejects when anything imports a Node built-in. `alias`
 * maps import paths to others (a benchmark bundles another commit's core this way).
 */
export async function bundleForBrowser(
  entry: string | { contents: string },
  alias: Record<string, string> = {},
): Promise<string> {
  const result = await build({
    absWorkingDir: ROOT,
    alias,
    ...(typeof entry === 'string'
      ? { entryPoints: [entry] }
      : { stdin: { contents: entry.contents, resolveDir: ROOT, loader: 'ts' as const } }),
    bundle: true,
    write: false,
    platform: 'browser',
    format: 'esm',
    target: 'es2022',
    conditions: ['source'],
    plugins: [noNodeBuiltins],
    banner: { js: PAGE_BANNER },
    logLevel: 'silent',
  });
  return result.outputFiles[0]!.text;
}

/** A page that has loaded a bundle, with everything needed to close it down. */
export interface BrowserPage {
  page: Page;
  browser: Browser;
  /** The browser's version string, for reports. */
  version: string;
  close(): Promise<void>;
}

const HTML =
  '<!doctype html><meta charset="utf-8"><title>akd-ts</title><script type="module" src="/bundle.js"></script>';

function serve(bundle: string, headers: Record<string, string> = {}): Promise<Server> {
  const server = createServer((req, res) => {
    if (req.url === '/') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', ...headers }).end(HTML);
    } else if (req.url === '/bundle.js') {
      res.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8' }).end(bundle);
    } else {
      res.writeHead(404).end();
    }
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve(server));
  });
}

/**
 * Serves `bundle`, opens it in headless Chromium and waits until the bundle has set
 * `globalThis[readyGlobal]`. Page errors reject the wait with the page's own message.
 * `headers` go with the page (e.g. a Content-Security-Policy).
 */
export async function openInChromium(
  bundle: string,
  readyGlobal: string,
  executablePath: string,
  headers: Record<string, string> = {},
): Promise<BrowserPage> {
  const server = await serve(bundle, headers);
  let browser: Browser | undefined;
  const close = async () => {
    await browser?.close();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  try {
    browser = await chromium.launch({ executablePath, headless: true, args: CHROMIUM_ARGS });
    const page = await browser.newPage();
    const pageError = new Promise<never>((_, reject) =>
      page.on('pageerror', (e) => reject(new Error(`error in the page: ${e.message}`))),
    );
    pageError.catch(() => {});
    const { port } = server.address() as AddressInfo;
    await page.goto(`http://127.0.0.1:${port}/`);
    await Promise.race([
      page.waitForFunction((name) => name in globalThis, readyGlobal, { timeout: 15_000 }),
      pageError,
    ]);
    return { page, browser, version: browser.version(), close };
  } catch (e) {
    await close();
    throw e;
  }
}
