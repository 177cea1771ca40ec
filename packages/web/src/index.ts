/**
 * @akd-ts/web: the page that looks a label up and verifies its proof in the browser with
 * @akd-ts/core alone. The page itself is `src/main.ts`, bundled by `npm run build` into
 * `dist/page/` (build output, like tsc's); this module names that folder for the server, and exports the page's checking
 * logic (which needs no DOM) so it can be tested on its own.
 */

/**
 * The folder of the built page (index.html, app.js, style.css), as a file: URL.
 *
 * @example
 * ```ts
 * import { fileURLToPath } from 'node:url';
 * const root = fileURLToPath(PUBLIC_DIR_URL); // .../packages/web/dist/page/
 * ```
 */
// from src/ (the sources) and from dist/ (built) alike: ../dist/page/
export const PUBLIC_DIR_URL: URL = new URL('../dist/page/', import.meta.url);

export {
  trustedRoot,
  parseLabel,
  labelPath,
  display,
  bits,
  pathView,
  checkLookup,
  checkHistory,
} from './check.js';
export type { TrustedRoot, EpochInfo, PathLevel, PathView, Verdict } from './check.js';
