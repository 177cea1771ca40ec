/**
 * Operations routes: `GET /healthz` (the store answers: 200, else 503), `GET /metrics`
 * (Prometheus text format) and `GET /openapi.json` (the API's OpenAPI 3.1 document).
 */

import type { FastifyInstance } from 'fastify';
import type { RouteContext } from '../context.js';
import { openApiDocument } from '../openapi.js';

export function opsRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const { directory, metrics } = ctx;

  app.get('/healthz', async (request, reply) => {
    reply.header('cache-control', 'no-store');
    try {
      const { epoch } = await directory.getEpochHash();
      return { status: 'ok', epoch: epoch.toString() };
    } catch (e) {
      request.log.warn({ err: e }, 'health check failed');
      return reply.code(503).send({ status: 'unavailable' });
    }
  });

  app.get('/metrics', async (_request, reply) => {
    const text = await metrics.registry.metrics();
    return reply.type(metrics.registry.contentType).header('cache-control', 'no-store').send(text);
  });

  const document = JSON.stringify(openApiDocument(ctx.limits));
  app.get('/openapi.json', async (_request, reply) =>
    reply.type('application/json; charset=utf-8').send(document),
  );
}
