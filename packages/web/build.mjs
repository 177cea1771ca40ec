#!/usr/bin/env node
// Builds the page into dist/page/ (or the folder given with --out): src/main.ts bundled with
// @akd-ts/core into app.js (the "source" export condition bundles core's TypeScript directly,
// so no tsc output is needed), and static/ copied beside it. Any import of a Node built-in
// fails the build: the page must run in a browser with core alone.
import { build } from 'esbuild';
import { copyFile, mkdir, readFile, readdir } from 'node:fs/promises';
import { builtinModules } from 'node:module';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

const here = fileURLToPath(new URL('.', import.meta.url));
const at = process.argv.indexOf('--out');
const out = resolve(at > 0 ? process.argv[at + 1] : join(here, 'dist', 'page'));

const builtins = new Set([...builtinModules, ...builtinModules.map((m) => `node:${m}`)]);
const noNodeBuiltins = {
  name: 'no-node-builtins',
  setup(b) {
    b.onResolve({ filter: /.*/ }, (args) =>
      builtins.has(args.path) || args.path.startsWith('node:')
        ? { errors: [{ text: `"${args.path}" is a Node built-in: the page may not use Node` }] }
        : undefined,
    );
  },
};

await mkdir(out, { recursive: true });
await build({
  entryPoints: [join(here, 'src/main.ts')],
  outfile: join(out, 'app.js'),
  bundle: true,
  format: 'esm',
  platform: 'browser',
  target: 'es2022',
  conditions: ['source'],
  minify: true,
  sourcemap: true,
  legalComments: 'eof',
  // V8's explicit compile hint (Chrome 136 on): compile every function of app.js while the
  // script loads instead of on its first call, so that the first proof verified does not
  // wait for the verifier's code to be compiled. Other engines read a plain comment. test/browser/harness.ts
  // bundles the in-browser tests and benches with the same first line.
  banner: { js: '//# allFunctionsCalledOnLoad' },
  plugins: [noNodeBuiltins],
  logLevel: 'warning',
});
for (const name of await readdir(join(here, 'static'))) {
  await copyFile(join(here, 'static', name), join(out, name));
}
// what a browser downloads: the page's code with core and the embedded WebAssembly
const app = await readFile(join(out, 'app.js'));
const gzip = gzipSync(app, { level: 9 }).length;
console.log(
  `web: built ${out} (app.js ${(app.length / 1024).toFixed(0)} KiB, ${(gzip / 1024).toFixed(1)} KiB gzip)`,
);
