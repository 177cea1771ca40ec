/**
 * Publish throughput, the figure users feel: new labels into an empty directory, then an
 * update of every one of them, on the in-memory store, with the VRF on the calling thread and
 * on all worker threads (the backend is named in the output).
 *
 *   npm run bench -- publish [--json] [--labels 100000] [--noble]
 *
 * `--noble` adds the portable backend (slow: about 1 ms per label on this machine).
 */

import { WhatsAppV1Configuration, utf8 } from '@akd-ts/core';
import { MemoryDatabase, StorageManager } from '@akd-ts/storage';
import {
  Directory,
  InMemoryVrfKeyStore,
  availableThreads,
  type VrfOptions,
} from '@akd-ts/directory';

const args = process.argv.slice(2);
const json = args.includes('--json');
const labelsAt = args.indexOf('--labels');
const sizes = labelsAt >= 0 ? [Number(args[labelsAt + 1])] : [10_000, 100_000];

const setups: { name: string; vrf: VrfOptions }[] = [
  { name: 'main thread', vrf: { threads: 0 } },
  { name: `${availableThreads()} worker threads`, vrf: { threads: availableThreads() } },
];
if (args.includes('--noble'))
  setups.push({ name: 'main thread', vrf: { threads: 0, backend: 'noble' } });

const key = new Uint8Array(32).fill(42);
for (const n of sizes) {
  for (const setup of setups) {
    const dir = await Directory.open({
      config: new WhatsAppV1Configuration(),
      storage: new StorageManager(new MemoryDatabase()),
      vrfKeys: new InMemoryVrfKeyStore(key),
      vrf: setup.vrf,
    });
    const labels = Array.from({ length: n }, (_, i) => utf8(`user-${i}@example.com`));
    let start = performance.now();
    await dir.publish(labels.map((label) => ({ label, value: utf8('key-1') })));
    const insertSec = (performance.now() - start) / 1000;
    start = performance.now();
    await dir.publish(labels.map((label) => ({ label, value: utf8('key-2') })));
    const updateSec = (performance.now() - start) / 1000;
    const row = {
      labels: n,
      vrf: dir.vrfEngineName,
      newLabelsSec: Number(insertSec.toFixed(2)),
      newLabelsPerSec: Math.round(n / insertSec),
      updatesSec: Number(updateSec.toFixed(2)),
      updatesPerSec: Math.round(n / updateSec),
    };
    if (json) console.log(JSON.stringify(row));
    else {
      console.log(
        `${n} labels, VRF ${row.vrf}: new ${row.newLabelsSec} s (${row.newLabelsPerSec}/s), updates ${row.updatesSec} s (${row.updatesPerSec}/s)`,
      );
    }
    await dir.close();
  }
}
