/**
 * What the client's checks cost in Node: an append-only check (decode and chain the steps,
 * as `AkdClient.refresh` does) over 1, 10 and 1,000 epochs, and a monitor check per epoch
 * (refresh plus an owner check of one label, over HTTP on localhost) after each new epoch.
 * Chromium is not measured here.
 *
 *   npm run bench -- client [--json] [--epochs N]
 */

import { decodeAppendOnlyProof, utf8 } from '@akd-ts/core';
import { buildApp } from '@akd-ts/server';
import { clientBenchDirectory } from './support/client-directory.js';
import { medianRunMs } from './support/timing.js';
import { AkdClient, MemoryStore, verifyRange } from '@akd-ts/client';

const args = process.argv.slice(2);
const json = args.includes('--json');
const at = args.indexOf('--epochs');
const EPOCHS = at >= 0 ? Number(args[at + 1]) : 1000;
const PER_EPOCH = 10;

const { config, dir, roots } = await clientBenchDirectory(EPOCHS, PER_EPOCH);
const app = await buildApp({
  directory: dir,
  processMetrics: false,
  limits: { maxAuditEpochs: EPOCHS },
} as never);
const url = await app.listen({ host: '127.0.0.1', port: 0 });

const results: Record<string, number> = {};
for (const span of [1, 10, EPOCHS]) {
  const from = EPOCHS - span;
  const res = await fetch(`${url}/v1/audit?from=${from}&to=${EPOCHS}`, {
    headers: { accept: 'application/x-protobuf' },
  });
  if (!res.ok) throw new Error(`audit ${from}..${EPOCHS}: ${res.status} ${await res.text()}`);
  const bytes = new Uint8Array(await res.arrayBuffer());
  results[`append-only check, ${span} epochs (ms)`] = await medianRunMs(span >= 1000 ? 3 : 20, () =>
    verifyRange(
      config,
      { epoch: BigInt(from), rootHash: roots[from]! },
      BigInt(EPOCHS),
      decodeAppendOnlyProof(bytes),
      new Map(),
    ),
  );
}

const client = new AkdClient({ server: url, store: new MemoryStore() });
await client.registerPublished('owner', 'owner-key');
await dir.publish([{ label: utf8('owner'), value: utf8('owner-key') }]);
await client.checkOwner('owner');
const checks: number[] = [];
for (let i = 0; i < 20; i++) {
  await dir.publish([{ label: utf8(`other-${i}`), value: utf8('v') }]);
  const t = performance.now();
  await client.refresh();
  await client.checkOwner('owner');
  checks.push(performance.now() - t);
}
checks.sort((a, b) => a - b);
results['monitor check per epoch, HTTP on localhost (ms)'] = checks[10]!;

await app.close();
await dir.close();
if (json) console.log(JSON.stringify({ epochs: EPOCHS, perEpoch: PER_EPOCH, results }));
else {
  console.log(`client checks, Node ${process.version}, ${EPOCHS} epochs of ${PER_EPOCH} updates`);
  for (const [k, v] of Object.entries(results)) console.log(`  ${k.padEnd(52)} ${v.toFixed(3)}`);
}
