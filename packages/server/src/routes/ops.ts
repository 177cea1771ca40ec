/**
 * Operations routes. Health is two questions, asked by two probes:
 * - `GET /livez` (liveness): the process answers. No I/O, so a busy store or a lost writer
 *   lock never gets a healthy process restarted; only a stuck event loop fails it.
 * - `GET /readyz` (readiness): this process should get traffic. The store answered a read in
 *   the last `readyAnsweredWithinMs` (the requests' own reads count: a probe adds no read to a busy store, nor
 *   waits behind its queue), or answers a direct read within `readyTimeoutMs`; the directory
 *   serves its latest epoch; the writer (when this server publishes) holds the store's
 *   writer lock; and the server is not shutting down. Otherwise 503 with the reasons, which
 *   are also logged when readiness changes. Probes that arrive while a check runs share its
 *   answer, so a flood of probes (which the request gate never holds back) costs one check
 *   at a time.
 * `GET /healthz` is readiness, under the name older deployments probe.
 * Also `GET /metrics` (Prometheus text format) and `GET /openapi.json` (OpenAPI 3.1).
 */

import type { FastifyInstance, FastifyReply } from 'fastify';
import { AZKS_KEY } from '@akd-ts/storage';
import type { RouteContext } from '../context.js';
import type {} from '@fastify/swagger';
import { validated } from '../schemas/compilers.js';

/** What readiness found: `reasons` is empty when ready. */
export interface Readiness {
  epoch?: bigint;
  reasons: string[];
}

/** `promise`, or a rejection after `ms`. */
function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** Asks every readiness question of `ctx`. */
export async function readiness(ctx: RouteContext): Promise<Readiness> {
  const reasons: string[] = [];
  let epoch: bigint | undefined;
  if (ctx.draining()) reasons.push('shutting down');
  try {
    const { directory } = ctx;
    const answered = directory.storage.lastAnswerAt;
    if (answered === undefined || performance.now() - answered > ctx.readyAnsweredWithinMs) {
      await within(directory.storage.getDirect(AZKS_KEY), ctx.readyTimeoutMs, 'the store');
    }
    epoch = (await within(directory.getEpochHash(), ctx.readyTimeoutMs, 'the directory')).epoch;
  } catch (e) {
    reasons.push(`store: ${e instanceof Error ? e.message : String(e)}`);
  }
  const writer = ctx.writerProblem();
  if (writer !== undefined) reasons.push(`writer: ${writer}`);
  return { epoch, reasons };
}

export function opsRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const { metrics, schemas } = ctx;
  let wasReady: boolean | undefined;

  let checking: Promise<Readiness> | undefined;
  const ready = async (reply: FastifyReply) => {
    reply.header('cache-control', 'no-store');
    checking ??= readiness(ctx).finally(() => (checking = undefined));
    const { epoch, reasons } = await checking;
    const ok = reasons.length === 0;
    if (ok !== wasReady) {
      if (ok) app.log.info('ready');
      else app.log.warn({ reasons }, 'not ready');
      wasReady = ok;
    }
    if (ok) return reply.send({ status: 'ok', epoch: epoch!.toString() });
    return reply.code(503).send({ status: 'unavailable', reasons });
  };

  app.get('/livez', validated(schemas.livez), async (_request, reply) =>
    reply.header('cache-control', 'no-store').send({ status: 'ok' }),
  );
  app.get('/readyz', validated(schemas.readyz), async (_request, reply) => ready(reply));
  app.get(
    '/healthz',
    validated({ ...schemas.readyz, summary: 'readiness, under the older name (as /readyz)' }),
    async (_request, reply) => ready(reply),
  );

  app.get('/metrics', validated(schemas.metrics), async (_request, reply) => {
    const text = await metrics.registry.metrics();
    return reply.type(metrics.registry.contentType).header('cache-control', 'no-store').send(text);
  });

  // generated once, on the first request: every route is known by then
  let document: string | undefined;
  app.get('/openapi.json', validated(schemas.openapi), async (_request, reply) => {
    document ??= JSON.stringify(app.swagger());
    return reply.type('application/json; charset=utf-8').send(document);
  });
}
