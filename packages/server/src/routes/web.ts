/**
 * The verifying web page (@akd-ts/web), served from its built folder: `/` is index.html and
 * `/assets/<file>` its script and style sheet. The page runs under a strict Content Security
 * Policy: its own script only, fetches to this origin only. When the page was not built, `/`
 * says so and how to build it, instead of a bare 404.
 */

import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { HttpError } from '../errors.js';
import type { RouteName, RouteSchema } from '../schemas/routes.js';
import { validated } from '../schemas/compilers.js';

const TYPES: Record<string, string> = {
  html: 'text/html; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
  map: 'application/json; charset=utf-8',
  svg: 'image/svg+xml',
};

/** Asset names the route serves: flat names only, so no path can leave the folder. */
const ASSET = /^[a-z0-9][a-z0-9.-]*\.(js|css|map|svg)$/;

const SECURITY_HEADERS = {
  'content-security-policy':
    "default-src 'none'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
};

const NOT_BUILT = (root: string) => `<!doctype html>
<html lang="en"><meta charset="utf-8"><title>akd-ts: web page not built</title>
<body style="font-family: system-ui, sans-serif; max-width: 40rem; margin: 2rem auto; line-height: 1.5">
<h1>The web page has not been built</h1>
<p>The server found no <code>index.html</code> in <code>${root.replace(/[<>&]/g, '')}</code>.
Build it from the repository root with</p>
<pre>npm run build</pre>
<p>(<code>npm install</code> builds it too), then reload. The API works without it:
see <a href="/openapi.json">/openapi.json</a>.</p>
</body></html>
`;

async function readAsset(root: string, name: string): Promise<Buffer | undefined> {
  try {
    return await readFile(join(root, name));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
}

export function webRoutes(
  app: FastifyInstance,
  root: string,
  schemas: Record<RouteName, RouteSchema>,
): void {
  app.get('/', validated(schemas.page), async (_request, reply) => {
    reply.headers(SECURITY_HEADERS).header('cache-control', 'no-cache');
    const html = await readAsset(root, 'index.html');
    if (html === undefined) return reply.code(503).type(TYPES.html!).send(NOT_BUILT(root));
    return reply.type(TYPES.html!).send(html);
  });

  app.get<{ Params: { file: string } }>(
    '/assets/:file',
    validated(schemas.asset),
    async (request, reply) => {
      const { file } = request.params;
      const match = ASSET.exec(file);
      const bytes = match === null ? undefined : await readAsset(root, file);
      if (bytes === undefined)
        throw new HttpError('HTTP_NOT_FOUND', `no asset ${JSON.stringify(file.slice(0, 60))}`);
      return reply
        .headers(SECURITY_HEADERS)
        .header('cache-control', 'no-cache')
        .type(TYPES[match![1]!]!)
        .send(bytes);
    },
  );
}
