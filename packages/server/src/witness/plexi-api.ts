/**
 * Plexi's read API over a witness's signed heads, so that clients (ours, and Plexi's own CLI)
 * fetch an auditor's signatures the way they fetch Cloudflare's:
 *
 * - `GET /info`: `{"keys": [{"public_key", "not_before"}], "logs": [namespace, ...]}`
 * - `GET /namespaces`: `{"namespaces": [NamespaceInfo, ...]}`
 * - `GET /namespaces/{ns}`: NamespaceInfo `{"name", "log_directory", "root": "<epoch>/<digest>",
 *   "last_verified_epoch", "status": "Online", "reports_uri", "audits_uri",
 *   "signature_version", "ciphersuite"}`
 * - `GET /namespaces/{ns}/audits/{epoch}`: the signature, in Plexi's JSON, as it was signed
 * - `GET /namespaces/{ns}/last-verified-epoch`: `{"job_id", "epoch", "start_hash", "end_hash",
 *   "timestamp"}`
 *
 * Shapes follow plexi_core's serde types. Where Plexi answers 404 with no body the error is
 * the project's `{"error": {"code", "message"}}`. Read-only: every other method is 404, URL
 * parameters are bounded, and the heads file is re-read (only its new bytes) per request.
 */

import Fastify, { type FastifyInstance } from 'fastify';
import { installErrorReplies } from '../error-reply.js';
import { HttpError } from '../errors.js';
import { HeadStore, type NamespaceHeads } from './head-store.js';

/** One key a witness signs with, as Plexi's `/info` lists it. */
export interface WitnessKey {
  /** The Ed25519 public key, hex. */
  publicKey: string;
  /** From when it signs, seconds since 1970 (Plexi's `not_before`). */
  notBefore: number;
}

export interface WitnessApiOptions {
  /** The heads file `akd audit verify --heads` appends to. */
  heads: string;
  keys: WitnessKey[];
  /** Where each namespace's audit blobs are listed (Plexi's `log_directory`), if public. */
  logDirectory?: Record<string, string>;
}

/** Plexi's job id, a UUID; heads here come from no job, so the nil UUID. */
const NIL_UUID = '00000000-0000-0000-0000-000000000000';

function info(ns: NamespaceHeads, logDirectory: string | undefined): Record<string, unknown> {
  const path = `/namespaces/${encodeURIComponent(ns.name)}`;
  return {
    name: ns.name,
    log_directory: logDirectory ?? null,
    root: `${ns.first.epoch}/${ns.digests.get(ns.first.epoch.toString())!}`,
    last_verified_epoch: Number(ns.last.epoch),
    status: 'Online',
    reports_uri: `${path}/reports`,
    audits_uri: `${path}/audits`,
    signature_version: ns.last.ciphersuite,
    ciphersuite: ns.last.ciphersuite,
  };
}

/**
 * A fastify app serving Plexi's read API from a heads file (listen on it, or `inject`).
 *
 * @example const app = buildWitnessApp({ heads: 'heads.jsonl', keys: [{ publicKey, notBefore: 0 }] }); await app.listen({ port: 8788 });
 */
export function buildWitnessApp(options: WitnessApiOptions): FastifyInstance {
  const store = new HeadStore(options.heads);
  const app = Fastify({
    logger: false,
    bodyLimit: 1024,
    routerOptions: { maxParamLength: 1024 },
    connectionTimeout: 30_000,
    requestTimeout: 30_000,
    keepAliveTimeout: 5_000,
  });
  installErrorReplies(app, () => undefined);
  app.addHook('onRequest', async () => store.refresh());
  const namespace = (name: string): NamespaceHeads => {
    const ns = store.get(name);
    if (ns === undefined)
      throw new HttpError('HTTP_NOT_FOUND', `no namespace ${JSON.stringify(name.slice(0, 100))}`);
    return ns;
  };
  const log = (name: string) => options.logDirectory?.[name];

  app.get('/info', async () => ({
    keys: options.keys.map((k) => ({ public_key: k.publicKey, not_before: k.notBefore })),
    logs: store.list().map((ns) => ns.name),
  }));
  app.get('/namespaces', async () => ({
    namespaces: store.list().map((ns) => info(ns, log(ns.name))),
  }));
  app.get<{ Params: { ns: string } }>('/namespaces/:ns', async (request) =>
    info(namespace(request.params.ns), log(request.params.ns)),
  );
  app.get<{ Params: { ns: string; epoch: string } }>(
    '/namespaces/:ns/audits/:epoch',
    async (request, reply) => {
      const ns = namespace(request.params.ns);
      const epoch = request.params.epoch;
      if (!/^(0|[1-9][0-9]{0,19})$/.test(epoch)) {
        throw new HttpError('HTTP_BAD_REQUEST', 'the epoch must be a decimal integer');
      }
      const text = ns.byEpoch.get(epoch);
      if (text === undefined) {
        throw new HttpError(
          'HTTP_NOT_FOUND',
          `no signature of epoch ${epoch} in ${JSON.stringify(ns.name.slice(0, 100))}`,
        );
      }
      return reply.type('application/json; charset=utf-8').send(text);
    },
  );
  app.get<{ Params: { ns: string } }>('/namespaces/:ns/last-verified-epoch', async (request) => {
    const ns = namespace(request.params.ns);
    const epoch = ns.last.epoch;
    const end = ns.digests.get(epoch.toString())!;
    return {
      job_id: NIL_UUID,
      epoch: Number(epoch),
      // the root the last verified step started from, when its epoch was signed too
      start_hash: ns.digests.get((epoch - 1n).toString()) ?? end,
      end_hash: end,
      timestamp: Number(ns.last.timestamp),
    };
  });
  return app;
}
