/**
 * @akd-ts/client/node: what only Node can offer a client, a state store in a file written
 * atomically (a temporary file beside it, flushed, then renamed over it), so that a crash or a
 * second writer never leaves half a document.
 */

import { open, readFile, rename, rm } from 'node:fs/promises';
import type { StateStore } from './store.js';

export * from './index.js';

export class FileStore implements StateStore {
  readonly path: string;

  constructor(path: string) {
    if (typeof path !== 'string' || path === '') throw new TypeError('path: expected a file path');
    this.path = path;
  }

  async get(): Promise<unknown> {
    let text: string;
    try {
      text = await readFile(this.path, 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw e;
    }
    return JSON.parse(text);
  }

  async set(document: unknown): Promise<void> {
    const temporary = `${this.path}.${process.pid}.${Date.now()}.tmp`;
    const handle = await open(temporary, 'w', 0o600);
    try {
      await handle.writeFile(`${JSON.stringify(document, null, 2)}\n`, 'utf8');
      await handle.sync();
    } finally {
      await handle.close();
    }
    try {
      await rename(temporary, this.path);
    } catch (e) {
      await rm(temporary, { force: true });
      throw e;
    }
  }
}
