/**
 * The page side of `npm run bench -- client-chromium` (bundled by esbuild, served by the akd
 * server itself as its web page, so the client's requests are same-origin): the append-only
 * check and the monitor check of `@akd-ts/client`, timed inside the page.
 */

import { configurationByName, decodeAppendOnlyProof, fromHex, initVrfWasm } from '@akd-ts/core';
import { AkdClient, MemoryStore, verifyRange } from '@akd-ts/client';
import { medianRunMs } from './timing.js';

export interface ClientBenchApi {
  /** Median ms of `runs` append-only checks of `GET /v1/audit?from&to` (fetched once). */
  appendOnly(from: number, rootHex: string, to: number, runs: number): Promise<number>;
  /** A client that owns `owner`, registered and checked once. */
  monitorSetup(): Promise<void>;
  /** ms of one monitor check: a refresh and an owner check of `owner`. */
  monitorCheck(): Promise<number>;
  userAgent(): string;
}

const config = configurationByName('whatsapp_v1');
let client: AkdClient | undefined;

const api: ClientBenchApi = {
  async appendOnly(from, rootHex, to, runs) {
    const res = await fetch(`/v1/audit?from=${from}&to=${to}`, {
      headers: { accept: 'application/x-protobuf' },
    });
    if (!res.ok) throw new Error(`audit ${from}..${to}: HTTP ${res.status}`);
    const bytes = new Uint8Array(await res.arrayBuffer());
    const head = { epoch: BigInt(from), rootHash: fromHex(rootHex) };
    return medianRunMs(runs, () =>
      verifyRange(config, head, BigInt(to), decodeAppendOnlyProof(bytes), new Map()),
    );
  },
  async monitorSetup() {
    await initVrfWasm();
    client = new AkdClient({ server: location.origin, store: new MemoryStore() });
    await client.registerPublished('owner', 'owner-key');
    await client.checkOwner('owner');
  },
  async monitorCheck() {
    const t = performance.now();
    await client!.refresh();
    await client!.checkOwner('owner');
    return performance.now() - t;
  },
  userAgent: () => navigator.userAgent,
};

(globalThis as unknown as { akdBench: ClientBenchApi }).akdBench = api;
