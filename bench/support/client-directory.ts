/**
 * The directory the client benchmarks check (`client`, `client-chromium`): `epochs` epochs of
 * `perEpoch` updates over 5,000 labels, in memory, with the root of every epoch.
 */

import { configurationByName, utf8, type Configuration } from '@akd-ts/core';
import { MemoryDatabase, StorageManager } from '@akd-ts/storage';
import { Directory, InMemoryVrfKeyStore } from '@akd-ts/directory';

export async function clientBenchDirectory(
  epochs: number,
  perEpoch: number,
): Promise<{ config: Configuration; dir: Directory; roots: Uint8Array[] }> {
  const config = configurationByName('whatsapp_v1');
  const dir = await Directory.open({
    config,
    storage: new StorageManager(new MemoryDatabase()),
    vrfKeys: new InMemoryVrfKeyStore(new Uint8Array(32).fill(7)),
  });
  const roots: Uint8Array[] = [(await dir.getEpochHash()).hash];
  for (let e = 1; e <= epochs; e++) {
    const updates = Array.from({ length: perEpoch }, (_, i) => ({
      label: utf8(`user-${(e * perEpoch + i) % 5000}`),
      value: utf8(`key-${e}-${i}`),
    }));
    roots.push((await dir.publish(updates)).hash);
  }
  return { config, dir, roots };
}
