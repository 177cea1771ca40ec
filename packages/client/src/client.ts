/**
 * `AkdClient`: a client of one akd-ts directory that remembers what it verified. Every head
 * it accepts is proven to extend the last one it saved (advance.ts); lookups and label
 * histories are verified against that head only; owned and contacts' labels are monitored
 * (monitor.ts). State lives in a pluggable store, so a page, an app or `akd monitor` keeps it
 * across runs.
 */

import {
  AkdError,
  bytesEqual,
  configurationByName,
  toHex,
  utf8,
  type Configuration,
} from '@akd-ts/core';
import { advance, type ServedHead } from './advance.js';
import { evidenceBase, type ClientContext } from './context.js';
import { getJson, hexField, u64Field, type FetchLike } from './http.js';
import {
  loadDirectoryState,
  saveDirectoryState,
  type DirectoryState,
  type Head,
  type VerifiedHead,
} from './state.js';
import type { StateStore } from './store.js';
import {
  checkLabel,
  lookupLabel,
  registerPublished,
  type LabelCheck,
  type VerifiedLookup,
} from './monitor.js';
import { plexiCodec } from './plexi.js';
import { checkPolicy, type WitnessCodec, type WitnessPolicy } from './witness.js';

export interface ClientOptions {
  /** The server's base URL, e.g. `https://kt.example.com` (a trailing slash is dropped). */
  server: string;
  store: StateStore;
  /** Default: the global `fetch`. */
  fetch?: FetchLike;
  /** The clock, ms since 1970. Default: `Date.now`. */
  now?: () => number;
  /** The directory's VRF public key, pinned; default: the one saved, else trust on first use. */
  publicKey?: Uint8Array;
  /** A head trusted out of band: the first head must extend it (instead of first use). */
  trust?: Head;
  /** Trusted witnesses; with them, every head needs a quorum's signatures. */
  witnesses?: WitnessPolicy;
  /** Parses and checks witness signatures; default: Plexi's format (core's witness module). */
  witnessCodec?: WitnessCodec;
  /** The oldest a quorum's newest signatures may be, ms; needs `witnesses`. */
  maxAgeMs?: number;
}

/** What a refresh did. */
export interface HeadUpdate {
  previous: VerifiedHead | undefined;
  head: VerifiedHead;
}

/** Labels as bytes, or text taken as UTF-8. */
export type LabelInput = Uint8Array | string;

export function labelBytes(label: LabelInput, name = 'label'): Uint8Array {
  const bytes = typeof label === 'string' ? utf8(label) : label;
  if (!(bytes instanceof Uint8Array) || bytes.length === 0) {
    throw new TypeError(`${name}: expected a non-empty string or Uint8Array`);
  }
  return bytes;
}

export class AkdClient {
  readonly server: string;
  readonly #options: ClientOptions;
  readonly #fetch: FetchLike;
  readonly #now: () => number;
  #state: DirectoryState | undefined;
  #ctx: ClientContext | undefined;

  constructor(options: ClientOptions) {
    if (typeof options?.server !== 'string' || !/^https?:\/\//.test(options.server)) {
      throw new TypeError('server: expected an http(s) URL');
    }
    if (typeof options.store?.get !== 'function')
      throw new TypeError('store: expected a StateStore');
    if (options.witnesses !== undefined) checkPolicy(options.witnesses);
    if (options.maxAgeMs !== undefined) {
      if (options.witnesses === undefined) {
        throw new TypeError('maxAgeMs: a maximum age needs witnesses (their signatures are dated)');
      }
      if (!(options.maxAgeMs > 0)) throw new RangeError('maxAgeMs: expected a positive number');
    }
    if (options.publicKey !== undefined && options.publicKey.length !== 32) {
      throw new TypeError('publicKey: expected 32 bytes');
    }
    this.server = options.server.replace(/\/+$/, '');
    this.#options = options;
    const f = options.fetch ?? (globalThis.fetch as unknown as FetchLike | undefined);
    if (typeof f !== 'function') throw new TypeError('fetch: no fetch given and none global');
    this.#fetch = f;
    this.#now = options.now ?? Date.now;
  }

  /** The last verified head (undefined before the first refresh of a fresh state). */
  async head(): Promise<VerifiedHead | undefined> {
    return (await this.#load())?.head;
  }

  /** The saved state of this directory. */
  async state(): Promise<DirectoryState | undefined> {
    return this.#load();
  }

  /**
   * Fetches the server's current head (`GET /v1/epoch`), proves it extends the last verified
   * one, and saves it.
   * @throws EvidenceError on a fork, rollback, failing proof or stale head; AkdError
   * `CLIENT_NOT_EXTENDED`, `CLIENT_WITNESS_QUORUM`, `CLIENT_DIRECTORY_KEY`, `CLIENT_RESPONSE`.
   */
  async refresh(): Promise<HeadUpdate> {
    const url = `${this.server}/v1/epoch`;
    await this.#load();
    const body = await getJson(this.#fetch, url);
    const ctx = this.#context(body, url);
    const witnesses = body.witnesses === undefined ? [] : body.witnesses;
    if (!Array.isArray(witnesses))
      throw new AkdError('CLIENT_RESPONSE', `${url}: witnesses: expected a list`);
    const served: ServedHead = {
      epoch: u64Field(body, 'epoch', url),
      rootHash: hexField(body, 'rootHash', url, 32),
      witnesses,
    };
    const state = this.#state!;
    const previous = state.head;
    const head = await advance(ctx, previous, served);
    state.head = head;
    await this.save();
    return { previous, head };
  }

  /** Looks `label` up, verified against the client's head (advanced to the proof's first). */
  async lookup(label: LabelInput): Promise<VerifiedLookup> {
    return lookupLabel(this, labelBytes(label));
  }

  /** Registers `value` as published by this client, the owner of `label`. */
  async registerPublished(label: LabelInput, value: LabelInput): Promise<void> {
    return registerPublished(this, labelBytes(label), labelBytes(value, 'value'));
  }

  /**
   * Owner monitoring: every version of `label` since the last check must carry a value
   * registered with `registerPublished` (EvidenceError `CLIENT_UNEXPECTED_CHANGE` otherwise).
   */
  async checkOwner(label: LabelInput): Promise<LabelCheck> {
    return checkLabel(this, labelBytes(label), 'owner');
  }

  /** Contact monitoring: `label`'s version never below one seen (`CLIENT_VERSION_ROLLBACK`). */
  async checkContact(label: LabelInput): Promise<LabelCheck> {
    return checkLabel(this, labelBytes(label), 'contact');
  }

  /** The context, once a refresh has seen the server (refreshing first when needed). */
  async context(): Promise<ClientContext> {
    if (this.#ctx === undefined) await this.refresh();
    return this.#ctx!;
  }

  /** Saves the state (after a label's record changed). */
  async save(): Promise<void> {
    if (this.#state !== undefined) await saveDirectoryState(this.#options.store, this.#state);
  }

  async #load(): Promise<DirectoryState | undefined> {
    this.#state ??= await loadDirectoryState(this.#options.store, this.server);
    return this.#state;
  }

  /** Checks the served key and configuration against the pinned or saved ones. */
  #context(body: Record<string, unknown>, url: string): ClientContext {
    const publicKey = hexField(body, 'publicKey', url, 32);
    const c = body.configuration as { name?: unknown; domainLabel?: unknown } | undefined;
    if (
      typeof c?.name !== 'string' ||
      (c.domainLabel !== null && typeof c.domainLabel !== 'string')
    ) {
      throw new AkdError('CLIENT_RESPONSE', `${url}: configuration: expected {name, domainLabel}`);
    }
    const configuration = { name: c.name, domainLabel: c.domainLabel as string | null };
    const pinned = this.#options.publicKey;
    if (pinned !== undefined && !bytesEqual(pinned, publicKey)) {
      throw new AkdError(
        'CLIENT_DIRECTORY_KEY',
        `${url}: the server's key ${toHex(publicKey)} is not the pinned ${toHex(pinned)}`,
      );
    }
    const saved = this.#state;
    if (saved !== undefined) {
      if (saved.publicKey !== toHex(publicKey)) {
        throw new AkdError(
          'CLIENT_DIRECTORY_KEY',
          `${url}: the server's key ${toHex(publicKey)} is not the saved ${saved.publicKey}`,
        );
      }
      if (
        saved.configuration.name !== configuration.name ||
        saved.configuration.domainLabel !== configuration.domainLabel
      ) {
        throw new AkdError(
          'CLIENT_DIRECTORY_KEY',
          `${url}: the configuration changed from ${saved.configuration.name}`,
        );
      }
    } else {
      this.#state = {
        server: this.server,
        publicKey: toHex(publicKey),
        configuration,
        head: undefined,
        labels: {},
      };
    }
    let config: Configuration;
    try {
      config = configurationByName(configuration.name, configuration.domainLabel ?? undefined);
    } catch {
      throw new AkdError(
        'CLIENT_RESPONSE',
        `${url}: unknown configuration '${configuration.name}'`,
      );
    }
    const limits = body.limits as { maxAuditEpochs?: unknown } | undefined;
    const maxAudit = Number(limits?.maxAuditEpochs);
    const options = this.#options;
    const base: Omit<ClientContext, 'evidenceBase'> = {
      server: this.server,
      fetch: this.#fetch,
      now: this.#now,
      config,
      publicKey,
      configuration,
      trust: options.trust,
      witnesses: options.witnesses,
      maxAgeMs: options.maxAgeMs,
      maxAuditEpochs: Number.isInteger(maxAudit) && maxAudit > 0 ? maxAudit : 1000,
      codec: () => options.witnessCodec ?? plexiCodec,
    };
    this.#ctx = { ...base, evidenceBase: (k, code, m) => evidenceBase(base, k, code, m) };
    return this.#ctx;
  }
}
