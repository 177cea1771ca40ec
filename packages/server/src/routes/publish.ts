/**
 * `POST /v1/publish`: publishes a batch of updates as the next epoch (spec 12.2). Disabled
 * (403) unless the server was started with a token, and then only for requests bearing it
 * (401 otherwise, with the comparison in constant time). The body mirrors `akd publish`'s
 * update file: `{"updates": [{"label": "alice", "value": "key-1"}, {"labelHex": "00ff",
 * "valueHex": "a1b2"}]}`. The log records counts and timings, never labels, values, the token
 * or any key.
 */

import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AkdError, toHex } from '@akd-ts/core';
import { Directory, type PublishProgress, type Update } from '@akd-ts/directory';
import { epochHeaders, type RouteContext } from '../context.js';
import { HttpError } from '../errors.js';
import { parseBytesField } from '../params.js';

/** `POST /v1/publish` */
export interface PublishJson {
  epoch: string;
  rootHash: string;
  /** False when every value was already published, so no epoch was created. */
  newEpoch: boolean;
  updates: number;
  seconds: number;
}

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

function parseUpdates(body: unknown, maxUpdates: number): Update[] {
  const list = (body as { updates?: unknown } | null)?.updates;
  if (body === null || typeof body !== 'object' || !Array.isArray(list)) {
    throw new HttpError(
      'HTTP_BAD_REQUEST',
      'expected a JSON body {"updates": [{"label": ..., "value": ...}, ...]}',
    );
  }
  if (list.length > maxUpdates) {
    throw new AkdError(
      'DIRECTORY_LIMIT',
      `updates: at most ${maxUpdates} in one request, got ${list.length}`,
      { field: 'updates' },
    );
  }
  return list.map((item: unknown, i) => {
    const where = `updates[${i}]`;
    if (item === null || typeof item !== 'object' || Array.isArray(item)) {
      throw new HttpError(
        'HTTP_BAD_REQUEST',
        `${where}: expected an object with a label and a value`,
      );
    }
    const record = item as Record<string, unknown>;
    return {
      label: parseBytesField(record, 'label', where),
      value: parseBytesField(record, 'value', where),
    };
  });
}

export function publishRoutes(app: FastifyInstance, ctx: RouteContext): void {
  const { directory, limits, metrics } = ctx;
  const writer = directory instanceof Directory ? directory : undefined;
  const expected = ctx.publishToken === undefined ? undefined : digest(ctx.publishToken);

  app.post<{ Body: unknown }>(
    '/v1/publish',
    {
      bodyLimit: limits.publishBodyLimit,
      // before the body is read: a client without the token cannot make the server parse it
      onRequest: async (request) => {
        if (expected === undefined || writer === undefined) {
          throw new HttpError(
            'HTTP_PUBLISH_DISABLED',
            'publishing is disabled on this server (start it with a publish token)',
          );
        }
        authorize(request, expected);
      },
    },
    async (request, reply) => {
      const updates = parseUpdates(request.body, limits.maxPublishUpdates);
      for (const [i, u] of updates.entries()) {
        // the directory checks these too; checking here names the update
        if (u.label.length === 0 || u.label.length > limits.maxLabelBytes) {
          throw new AkdError(
            'DIRECTORY_LIMIT',
            `updates[${i}]: a label has 1 to ${limits.maxLabelBytes} bytes, not ${u.label.length}`,
            { field: `updates[${i}].label` },
          );
        }
        if (u.value.length > limits.maxValueBytes) {
          throw new AkdError(
            'DIRECTORY_LIMIT',
            `updates[${i}]: a value has at most ${limits.maxValueBytes} bytes, not ${u.value.length}`,
            { field: `updates[${i}].value` },
          );
        }
      }
      const started = performance.now();
      const track = metrics.publishProgress();
      // only a publish that changes something reaches the tree phase and creates an epoch
      let newEpoch = false;
      const onProgress = (p: PublishProgress) => {
        if (p.phase === 'tree') newEpoch = true;
        track(p);
      };
      const epochHash = await writer!.publish(updates, { onProgress });
      const seconds = (performance.now() - started) / 1000;
      metrics.publishDuration.observe(seconds);
      metrics.publishUpdates.observe(updates.length);
      request.log.info(
        { updates: updates.length, epoch: epochHash.epoch.toString(), newEpoch, seconds },
        'published',
      );
      epochHeaders(reply, epochHash);
      const body: PublishJson = {
        epoch: epochHash.epoch.toString(),
        rootHash: toHex(epochHash.hash),
        newEpoch,
        updates: updates.length,
        seconds: Number(seconds.toFixed(3)),
      };
      return reply.type('application/json; charset=utf-8').send(body);
    },
  );
}
