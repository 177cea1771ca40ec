// The server serves the built web page under a strict CSP, its assets by flat name only, and
// a page saying how to build it when it was not built.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { demoApp } from './support.js';

let root: string;
before(() => {
  root = mkdtempSync(join(tmpdir(), 'akd-web-'));
});
after(() => rmSync(root, { recursive: true, force: true }));

test('without a build, / answers 503 with instructions and the API still works', async () => {
  const demo = await demoApp({ webRoot: join(root, 'missing') });
  const res = await demo.app.inject({ url: '/' });
  assert.equal(res.statusCode, 503);
  assert.match(res.headers['content-type'] as string, /^text\/html/);
  assert.match(res.body, /has not been built/);
  assert.match(res.body, /npm run build/);
  assert.equal((await demo.app.inject({ url: '/v1/epoch' })).statusCode, 200);
  await demo.close();
});

test('a built page is served with its assets and security headers', async () => {
  writeFileSync(join(root, 'index.html'), '<!doctype html><title>akd</title>');
  writeFileSync(join(root, 'app.js'), 'console.log(1)');
  writeFileSync(join(root, 'style.css'), 'body{}');
  writeFileSync(join(root, 'notes.txt'), 'not an asset');
  const demo = await demoApp({ webRoot: root });
  const page = await demo.app.inject({ url: '/' });
  assert.equal(page.statusCode, 200);
  assert.equal(page.body, '<!doctype html><title>akd</title>');
  assert.match(page.headers['content-security-policy'] as string, /script-src 'self'/);
  assert.match(page.headers['content-security-policy'] as string, /connect-src 'self'/);
  assert.equal(page.headers['x-content-type-options'], 'nosniff');
  const js = await demo.app.inject({ url: '/assets/app.js' });
  assert.equal(js.statusCode, 200);
  assert.match(js.headers['content-type'] as string, /^text\/javascript/);
  const css = await demo.app.inject({ url: '/assets/style.css' });
  assert.match(css.headers['content-type'] as string, /^text\/css/);
  for (const url of [
    '/assets/notes.txt',
    '/assets/missing.js',
    '/assets/..%2Fpackage.json',
    '/assets/%2E%2E%2Fapp.js',
    '/assets/.hidden.js',
  ]) {
    const res = await demo.app.inject({ url });
    assert.equal(res.statusCode, 404, url);
    assert.equal(res.json().error.code, 'HTTP_NOT_FOUND');
  }
  await demo.close();
});

test('by default the page comes from the web package', async () => {
  const demo = await demoApp();
  const res = await demo.app.inject({ url: '/' });
  // built by npm install / npm run build; either way the answer is a page, never a 500
  assert.ok([200, 503].includes(res.statusCode));
  assert.match(res.headers['content-type'] as string, /^text\/html/);
  await demo.close();
});
