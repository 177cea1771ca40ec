/**
 * `POST /v1/publish`: publishes a batch of updates as the next epoch (spec 12.2). Disabled
 * (403) unless the server was started with a token, and then only for requests bearing it
 * (401 otherwise, with the comparison in constant time, before any of the body is read). The
 * body mirrors `akd publish`'s update file: `{"updates": [{"label": "alice", "value":
 * "key-1"}, {"labelHex": "00ff", "valueHex": "a1b2"}]}`.
 *
 * Where it runs: with a `WriterClient` (what `akd serve` does) the body is passed unread to
 * the writer process, which parses, checks and publishes it, so no proof-serving thread ever
 * spends time on a publish. With a `Directory` and no writer (tests, embedding) it publishes in
 * this thread. The log records counts and timings, never labels, values, the token or a key.
 */

import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Directory } from '@akd-ts/directory';
import type { RouteContext } from '../context.js';
import { epochHeaders } from '../context.js';
import { HttpError } from '../errors.js';
import { parseUpdates, type PublishBody } from '../publish/body.js';
import { validated } from '../schemas/compilers.js';
import { runPublish, type PublishJson } from '../publish/run.js';
import { fromHex } from '@akd-ts/core';
import { RELAYED_HEADERS, type WriterClient } from '../writer/writer-client.js';

export type { PublishJson } from '../publish/run.js';

const digest = (text: string) => createHash('sha256').update(text, 'utf8').digest();

/**
 * Checks the bearer token in constant time: both sides are hashed first, so neither the
 * token's content nor its length shows in the timing.
 */
function authorize(request: FastifyRequest, expected: Buffer): void {
  const header = request.headers.authorization;
  const match = header === undefined ? null : /^Bearer +(\S+)\s*$/i.exec(header);
  if (match === null) {
    throw new HttpError(
      'HTTP_UNAUTHORIZED',
      'publishing needs an Authorization: Bearer <token> header',
    );
  }
  if (!timingSafeEqual(digest(match[1]!), expected)) {
    throw new HttpError('HTTP_UNAUTHORIZED', 'wrong bearer token');
  }
}

/** Relays the writer's answer, recording a successful publish in the metrics. */
async function relay(
  ctx: RouteContext,
  writer: WriterClient,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<FastifyReply> {
  if (!/^application\/json\s*(;|$)/i.test(request.headers['content-type'] ?? '')) {
    throw new HttpError('HTTP_UNSUPPORTED_MEDIA_TYPE', 'send the body as application/json');
  }
  const answer = await writer.forward(request, ctx.limits.publishBodyLimit);
  if (answer.status === 200) {
    const json = JSON.parse(answer.body.toString('utf8')) as PublishJson;
    ctx.metrics.observePublish(json);
    // this server serves the new epoch from now on (the others learn it from the store)
    if (json.newEpoch) await ctx.directory.refresh();
  } else {
    const code = (JSON.parse(answer.body.toString('utf8')) as { error?: { code?: string } }).error
      ?.code;
    if (code !== undefined) ctx.metrics.errors.inc({ code });
  }
  for (const name of RELAYED_HEADERS) {
    const value = answer.headers[name];
    if (value !== undefined) reply.header(name, value);
  }
  return reply.code(answer.status).send(answer.body);
}

export function publishRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const { directory, limits, metrics } = ctx;
  const inThread = directory instanceof Directory ? directory : undefined;
  const expected = ctx.publishToken === undefined ? undefined : digest(ctx.publishToken);
  const writer = ctx.writer;
  // before the body is read: a client without the token cannot make the server take it in
  const onRequest = async (request: FastifyRequest) => {
    if (expected === undefined || (writer === undefined && inThread === undefined)) {
      throw new HttpError(
        'HTTP_PUBLISH_DISABLED',
        'publishing is disabled on this server (start it with a publish token)',
      );
    }
    authorize(request, expected);
  };

  if (writer !== undefined) {
    // the body stays unread here: the writer reads it
    void app.register(async (scope) => {
      scope.removeAllContentTypeParsers();
      scope.addContentTypeParser('*', (_request, _payload, done) => done(null, undefined));
      // the schema documents the body; the writer validates it (with the same schema)
      scope.post(
        '/v1/publish',
        {
          onRequest,
          onRequestAbort: () => undefined,
          ...validated(ctx.schemas.publish),
          validatorCompiler: () => () => true,
        },
        (request, reply) => relay(ctx, writer, request, reply),
      );
    });
    return;
  }

  app.post<{ Body: PublishBody }>(
    '/v1/publish',
    { bodyLimit: limits.publishBodyLimit, onRequest, ...validated(ctx.schemas.publish) },
    async (request, reply) => {
      const updates = parseUpdates(request.body, limits);
      const json = await runPublish(inThread!, updates, request.log);
      metrics.observePublish(json);
      epochHeaders(reply, { epoch: BigInt(json.epoch), hash: fromHex(json.rootHash) });
      return reply.type('application/json; charset=utf-8').send(json);
    },
  );
}
