/**
 * A server in front of real akd-ts servers that forwards every request to the one it points
 * at now: switching `target` between two page visits makes one origin (so one browser
 * storage) serve another directory's heads and proofs, which is what a server that forks or
 * rolls its clients back looks like from the browser. `epochBody` may rewrite the answer of
 * `GET /v1/epoch` (to relay witness signatures).
 */

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface SwitchProxy {
  url: string;
  /** The base URL requests go to. */
  target: string;
  /** Rewrites the JSON of `GET /v1/epoch` before it is sent on. */
  epochBody: ((body: Record<string, unknown>) => Record<string, unknown>) | undefined;
  close(): Promise<void>;
}

// hop-by-hop headers, and the length of a body that may be rewritten
const DROPPED = new Set(['connection', 'keep-alive', 'transfer-encoding', 'content-length']);

export async function switchProxy(target: string): Promise<SwitchProxy> {
  const proxy: SwitchProxy = { url: '', target, epochBody: undefined, close: async () => {} };
  const server: Server = createServer((req, res) => {
    void (async () => {
      const path = req.url ?? '/';
      const headers: Record<string, string> = {};
      for (const name of ['accept', 'accept-encoding']) {
        const v = req.headers[name];
        if (typeof v === 'string') headers[name] = name === 'accept-encoding' ? 'identity' : v;
      }
      const real = await fetch(`${proxy.target}${path}`, { headers });
      let body = new Uint8Array(await real.arrayBuffer());
      if (path === '/v1/epoch' && real.ok && proxy.epochBody !== undefined) {
        const json = JSON.parse(new TextDecoder().decode(body)) as Record<string, unknown>;
        body = new TextEncoder().encode(JSON.stringify(proxy.epochBody(json)));
      }
      const out: Record<string, string> = {};
      real.headers.forEach((v, k) => {
        if (!DROPPED.has(k) && k !== 'content-encoding') out[k] = v;
      });
      res.writeHead(real.status, out);
      res.end(body);
    })().catch((e: unknown) => {
      res.writeHead(502);
      res.end(String(e));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  proxy.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  proxy.close = () =>
    new Promise<void>((resolve, reject) => {
      server.closeAllConnections();
      server.close((e) => (e ? reject(e) : resolve()));
    });
  return proxy;
}
