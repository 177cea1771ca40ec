/**
 * A real akd-ts directory served over HTTP, and a hostile server in front of it: it proxies
 * every request to the real one unless its `rule` answers instead (forging, replaying or
 * rewriting an answer), so clients are tested over real HTTP against what a malicious server
 * can actually send.
 */

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { utf8 } from '@akd-ts/core';
import { buildApp } from '@akd-ts/server';
import { demoDirectory, type Fixture } from '../../../server/test/support.js';

/** A real directory (the server tests' demo: epoch 3) on a port. */
export interface RealServer extends Fixture {
  url: string;
  /** Publishes one epoch of `label = value` pairs. */
  publish(pairs: [string, string][]): Promise<void>;
}

export async function realServer(): Promise<RealServer> {
  const fixture = await demoDirectory();
  const app = await buildApp({ directory: fixture.dir, processMetrics: false });
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  return {
    ...fixture,
    url,
    publish: async (pairs) => {
      await fixture.dir.publish(pairs.map(([l, v]) => ({ label: utf8(l), value: utf8(v) })));
    },
    close: async () => {
      await app.close();
      await fixture.close();
    },
  };
}

/** A forged answer. */
export interface Answer {
  status?: number;
  type?: string;
  body: string | Uint8Array | object;
}

/** Decides a request's answer: undefined proxies it. `upstream` fetches the real answer. */
export type Rule = (
  path: string,
  upstream: (path: string, accept?: string) => Promise<Response>,
  accept: string,
) => Promise<Answer | undefined> | Answer | undefined;

export interface HostileServer {
  url: string;
  rule: Rule | undefined;
  /** The paths requested, in order. */
  requests: string[];
  close(): Promise<void>;
}

export async function hostileServer(upstream: string): Promise<HostileServer> {
  const fetchUp = (path: string, accept = 'application/json') =>
    fetch(`${upstream}${path}`, { headers: { accept } });
  const hostile: HostileServer = { url: '', rule: undefined, requests: [], close: async () => {} };
  const server: Server = createServer((req, res) => {
    const path = req.url ?? '/';
    const accept = String(req.headers.accept ?? 'application/json');
    hostile.requests.push(path);
    void (async () => {
      const forged = await hostile.rule?.(path, fetchUp, accept);
      if (forged !== undefined) {
        const body =
          typeof forged.body === 'string' || forged.body instanceof Uint8Array
            ? forged.body
            : JSON.stringify(forged.body);
        res.writeHead(forged.status ?? 200, {
          'content-type': forged.type ?? 'application/json; charset=utf-8',
        });
        res.end(body);
        return;
      }
      const real = await fetchUp(path, accept);
      res.writeHead(real.status, { 'content-type': real.headers.get('content-type') ?? '' });
      res.end(new Uint8Array(await real.arrayBuffer()));
    })().catch((e: unknown) => {
      res.writeHead(500);
      res.end(String(e));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  hostile.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  hostile.close = () =>
    new Promise<void>((resolve, reject) => {
      server.closeAllConnections();
      server.close((e) => (e ? reject(e) : resolve()));
    });
  return hostile;
}

/** The JSON of GET `path` from `url`. */
export async function getJson(url: string, path: string): Promise<Record<string, unknown>> {
  return (await (await fetch(`${url}${path}`)).json()) as Record<string, unknown>;
}
