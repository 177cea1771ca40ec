/**
 * The writer's private HTTP app: `POST /publish` reads and checks a publish body and publishes
 * it with the directory, the only thing the writer does for requests. It listens on a Unix
 * socket in a private folder (cluster/launcher.ts makes it), reached only by this server's proof
 * servers, which check the bearer token and pass the body through unread: so the seconds a
 * large publish spends parsing JSON, computing VRF labels, inserting and committing never run
 * on a thread that answers lookups. Errors are answered from the catalogue, like the API's.
 */

import Fastify, {
  LogController,
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyRequest,
} from 'fastify';
import type { Directory } from '@akd-ts/directory';
import { epochHeaders } from '../context.js';
import { installErrorReplies } from '../error-reply.js';
import { useStrictJson } from '../json-body.js';
import { HttpError } from '../errors.js';
import { DEFAULT_SERVER_LIMITS, type ServerLimits } from '../options.js';
import { parseUpdates, type PublishBody } from '../publish/body.js';
import { useSharedShapes } from '../openapi.js';
import { validated } from '../schemas/compilers.js';
import { routeSchemas } from '../schemas/routes.js';
import { runPublish, type PublishJson } from '../publish/run.js';
import { fromHex } from '@akd-ts/core';

/** The writer app's publish route. */
export const WRITER_PUBLISH_PATH = '/publish';

export interface WriterAppOptions {
  /** The writer: holds the store's writer lock. */
  directory: Directory;
  limits?: Partial<ServerLimits>;
  logger?: FastifyBaseLogger;
  /**
   * Called after a publish created an epoch, before it is answered: `akd serve` waits there
   * until every proof server serves the new epoch, so a client that was told "published" is
   * never served the epoch before.
   */
  onPublished?: (json: PublishJson) => Promise<void>;
  /**
   * Called once no publish is left in progress, after the last one was answered (whether it
   * succeeded or not): `akd serve`'s writer gives back the memory the publishes used.
   */
  onIdle?: () => void;
}

/**
 * Builds the writer's app (not listening).
 *
 * @example
 * ```ts
 * const app = await buildWriterApp({ directory: writer });
 * await app.listen({ path: '/run/akd/writer.sock' });
 * ```
 */
export async function buildWriterApp(options: WriterAppOptions): Promise<FastifyInstance> {
  const limits = { ...DEFAULT_SERVER_LIMITS, ...options.limits };
  const { directory } = options;
  const app = Fastify({
    ...(options.logger === undefined ? { logger: false } : { loggerInstance: options.logger }),
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: limits.publishBodyLimit,
    // a publish can take minutes: no timeout may cut it off
    requestTimeout: 0,
    return503OnClosing: false,
  });
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  app.addHook('onRequest', async () => {
    if (closing) {
      throw new HttpError('HTTP_WRITER_UNAVAILABLE', 'the writer is shutting down; retry', {
        'retry-after': '5',
      });
    }
  });
  app.removeContentTypeParser('text/plain');
  useStrictJson(app);
  installErrorReplies(app, () => {});

  // publishes whose bodies were read and that are not answered yet (a body refused before it
  // is read never reaches the handler and counts for nothing)
  const running = new WeakSet<FastifyRequest>();
  let publishing = 0;
  // the body is validated with the schema of the API's POST /v1/publish, which relays it here
  useSharedShapes(app);
  app.post<{ Body: PublishBody }>(
    WRITER_PUBLISH_PATH,
    {
      ...validated(routeSchemas(limits).publish),
      // before validation: a body the schema refuses was read, and its answer ends it too
      preValidation: async (request) => {
        running.add(request);
        publishing++;
      },
      onResponse: async (request) => {
        if (running.delete(request) && --publishing === 0) options.onIdle?.();
      },
    },
    async (request, reply) => {
      const updates = parseUpdates(request.body, limits);
      const json = await runPublish(directory, updates, request.log);
      if (json.newEpoch) await options.onPublished?.(json);
      epochHeaders(reply, { epoch: BigInt(json.epoch), hash: fromHex(json.rootHash) });
      return reply.type('application/json; charset=utf-8').send(json);
    },
  );
  return app;
}
