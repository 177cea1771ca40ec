/**
 * Where a client keeps what it verified: one JSON document, read whole and written whole. The
 * store only moves the document; its shape and checks live in state.ts. Stores for memory and
 * the browser's storage are here; the file store is in node.ts (it needs Node's file system).
 */

/** A place that holds one JSON document (the client's state). */
export interface StateStore {
  /** The document last set, or undefined when nothing was ever saved. */
  get(): Promise<unknown>;
  /** Replaces the document; a reader sees the old one or the new one, never a mix. */
  set(document: unknown): Promise<void>;
}

/** A store in memory: for tests, and for clients that start afresh every time. */
export class MemoryStore implements StateStore {
  #text: string | undefined;

  constructor(initial?: unknown) {
    if (initial !== undefined) this.#text = JSON.stringify(initial);
  }

  async get(): Promise<unknown> {
    // a copy, so that a caller changing what it read does not change what is stored
    return this.#text === undefined ? undefined : JSON.parse(this.#text);
  }

  async set(document: unknown): Promise<void> {
    this.#text = JSON.stringify(document);
  }
}

/** What the browser's `localStorage` and `sessionStorage` offer (and what tests can fake). */
export interface WebStorageLike {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
}

/**
 * A store in the browser's storage under one key. `setItem` replaces the value at once, so a
 * page closed mid-write keeps the old document or the new one.
 */
export class WebStorageStore implements StateStore {
  readonly #storage: WebStorageLike;
  readonly #key: string;

  constructor(storage: WebStorageLike, key = 'akd-client-state') {
    if (typeof storage?.getItem !== 'function') {
      throw new TypeError('storage: expected a Storage (localStorage or sessionStorage)');
    }
    if (typeof key !== 'string' || key === '')
      throw new TypeError('key: expected a non-empty string');
    this.#storage = storage;
    this.#key = key;
  }

  async get(): Promise<unknown> {
    const text = this.#storage.getItem(this.#key);
    return text === null ? undefined : JSON.parse(text);
  }

  async set(document: unknown): Promise<void> {
    this.#storage.setItem(this.#key, JSON.stringify(document));
  }
}
