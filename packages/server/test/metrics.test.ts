// The metrics follow Prometheus's naming conventions, and the README documents each of them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { buildApp } from '@akd-ts/server';
import { demoDirectory } from './support.js';

/** `name -> type` from the `# TYPE` lines of a scrape. */
function types(text: string): Map<string, string> {
  return new Map(
    [...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map(([, name, type]) => [name!, type!]),
  );
}

test('metric names follow Prometheus conventions, and running counts are counters', async () => {
  const fixture = await demoDirectory();
  const app = await buildApp({ directory: fixture.dir }); // with Node's process metrics
  await app.inject({ url: '/v1/lookup/alice' });
  for (let i = 0; i < 2; i++) {
    const audit = await app.inject({ url: '/v1/audit?from=0&to=2' });
    assert.equal(audit.statusCode, 200);
  }
  const scrape = (await app.inject({ url: '/metrics' })).body;
  const metrics = types(scrape);
  assert.ok(metrics.size > 10);
  for (const [name, type] of metrics) {
    assert.match(name, /^[a-z][a-z0-9_]*$/, name);
    assert.doesNotMatch(name, /(^|_)(\w+)_\2(_|$)/, `${name} repeats a word`);
    if (type === 'counter') assert.match(name, /_total$/, `counter ${name} ends in _total`);
    else assert.doesNotMatch(name, /_total$/, `${type} ${name} must not end in _total`);
    // a unit, when there is one, is a base unit at the end
    assert.doesNotMatch(name, /_(milliseconds|ms|kilobytes|megabytes)(_|$)/, name);
  }
  assert.equal(metrics.get('process_cpu_seconds_total'), 'counter');
  assert.equal(metrics.get('nodejs_eventloop_lag_seconds'), 'gauge');
  for (const name of [
    'db_gets',
    'db_batch_gets',
    'db_batch_keys',
    'cache_hits',
    'db_records_written',
  ]) {
    assert.equal(metrics.get(`akd_storage_${name}_total`), 'counter', name);
  }
  // the storage counters report the manager's counts at scrape time
  const gets = Number(/^akd_storage_cache_hits_total (\d+)$/m.exec(scrape)?.[1]);
  assert.equal(gets, fixture.dir.storage.metrics.cacheHits);
  const value = (name: string) => Number(new RegExp(`^${name} (\\d+)$`, 'm').exec(scrape)?.[1]);
  assert.equal(metrics.get('akd_audit_blob_cache_hits_total'), 'counter');
  // each of the demo's three blobs is read from the store at most once (the audits' or the
  // background's read), and the second audit's two come from memory
  const misses = value('akd_audit_blob_cache_misses_total');
  assert.ok(misses >= 1 && misses <= 3, `${misses} reads`);
  assert.ok(value('akd_audit_blob_cache_hits_total') >= 2);
  assert.ok(value('akd_audit_blob_cache_bytes') > 0);

  const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
  const section = readme.split('## Metrics')[1]!.split('\n## ')[0]!;
  for (const name of metrics.keys()) {
    if (/^(process|nodejs)_/.test(name)) continue; // prom-client's, documented as a group
    assert.ok(section.includes(`\`${name}`), `the README documents ${name}`);
  }
  await app.close();
  await fixture.close();
});

test('without an audit blob cache there are no cache metrics', async () => {
  const fixture = await demoDirectory();
  const app = await buildApp({
    directory: fixture.dir,
    processMetrics: false,
    auditBlobCacheBytes: 0,
  });
  assert.equal((await app.inject({ url: '/v1/audit?from=0&to=2' })).statusCode, 200);
  const scrape = (await app.inject({ url: '/metrics' })).body;
  assert.doesNotMatch(scrape, /akd_audit_blob_cache/);
  assert.match(scrape, /akd_proofs_served_total\{kind="audit"\} 1/);
  await app.close();
  await fixture.close();
});
