/**
 * Witness signatures the directory server carries to its clients, so that `GET /v1/epoch`
 * gives the root and its co-signatures in one answer. The server never signs: it keeps
 * signatures that configured witnesses made, either fetched from a witness's Plexi API
 * (`GET {url}/namespaces/{ns}/audits/{epoch}`, bounded in time and size) or pushed to it
 * (`POST /v1/witness-signatures`). A signature is kept only when it verifies for a configured
 * witness key (strictly, as core checks it), names this directory's namespace, and signs the
 * root this directory has at that epoch. Only the last few epochs are kept.
 */

import {
  AkdError,
  bytesEqual,
  fromHex,
  parseWitnessSignature,
  toHex,
  verifyWitnessSignature,
  witnessSignatureToJson,
  type WitnessSignature,
} from '@akd-ts/core';
import { HttpError } from '../errors.js';
import type { WitnessSignatureJson } from '../schemas/shapes.js';

/** A witness whose signatures the server relays. */
export interface RelayedWitness {
  /** Its Ed25519 public key (32 bytes). */
  publicKey: Uint8Array;
  /** Its Plexi API, polled for each epoch served; omit for a witness that pushes. */
  url?: string;
}

export interface WitnessRelayOptions {
  /** The namespace witnesses sign this directory's roots under. */
  namespace: string;
  witnesses: RelayedWitness[];
  /** Bound on one fetch from a witness, ms (default 2000). */
  timeoutMs?: number;
  /** Bound on one answer's body, bytes (default 16 KiB; a signature is under 1 KiB). */
  maxBodyBytes?: number;
  /** Epochs whose signatures are kept (default 16). */
  keepEpochs?: number;
  /** How long a witness that had no signature for an epoch is not asked again, ms (default 5000). */
  retryMs?: number;
  /** The clock, ms (tests inject one). */
  now?: () => number;
  /** The fetch used to reach witnesses (default: global fetch). */
  fetch?: typeof fetch;
}

/** The relay of witnesses configured with their keys in hex (as `akd serve` passes them). */
export function witnessRelayOf(config: {
  namespace: string;
  witnesses: { publicKey: string; url?: string }[];
}): WitnessRelay {
  return new WitnessRelay({
    namespace: config.namespace,
    witnesses: config.witnesses.map((w) => ({
      publicKey: fromHex(w.publicKey),
      ...(w.url === undefined ? {} : { url: w.url }),
    })),
  });
}

export class WitnessRelay {
  private readonly kept = new Map<string, Map<string, WitnessSignature>>();
  private readonly asked = new Map<string, number>();
  private readonly inFlight = new Map<string, Promise<void>>();
  private readonly timeoutMs: number;
  private readonly maxBodyBytes: number;
  private readonly keepEpochs: number;
  private readonly retryMs: number;
  private readonly now: () => number;
  private readonly fetcher: typeof fetch;

  constructor(private readonly options: WitnessRelayOptions) {
    for (const w of options.witnesses) {
      if (!(w.publicKey instanceof Uint8Array) || w.publicKey.length !== 32) {
        throw new RangeError('witnesses[].publicKey must be 32 bytes');
      }
    }
    this.timeoutMs = options.timeoutMs ?? 2000;
    this.maxBodyBytes = options.maxBodyBytes ?? 16 * 1024;
    this.keepEpochs = options.keepEpochs ?? 16;
    this.retryMs = options.retryMs ?? 5000;
    this.now = options.now ?? Date.now;
    this.fetcher = options.fetch ?? fetch;
  }

  /**
   * Checks a signature (Plexi's JSON) against the configured witnesses and `root`, this
   * directory's root at the signature's epoch (undefined: an epoch it does not have), and
   * keeps it.
   *
   * @throws AkdError `WITNESS_*` for a signature that is malformed, of another namespace or
   * by no configured witness; HttpError `HTTP_BAD_REQUEST` for one of another root or epoch.
   */
  accept(json: unknown, root: (epoch: bigint) => Uint8Array | undefined): WitnessSignature {
    const s = parseWitnessSignature(json);
    if (s.namespace !== this.options.namespace) {
      throw new AkdError(
        'WITNESS_NAMESPACE_MISMATCH',
        `the signature is for ${JSON.stringify(s.namespace.slice(0, 100))}, not ${JSON.stringify(this.options.namespace)}`,
        { field: 'namespace' },
      );
    }
    const witness = this.options.witnesses.find((w) => w.publicKey[31] === s.keyId);
    if (witness === undefined) {
      throw new AkdError('WITNESS_KEY_MISMATCH', `no configured witness has key id ${s.keyId}`, {
        field: 'key_id',
      });
    }
    verifyWitnessSignature(s, witness.publicKey);
    const expected = root(s.epoch);
    if (expected === undefined || !bytesEqual(expected, s.digest)) {
      throw new HttpError(
        'HTTP_BAD_REQUEST',
        expected === undefined
          ? `the signature is for epoch ${s.epoch}, which this directory has not published`
          : `the signature's digest is not this directory's root of epoch ${s.epoch}`,
      );
    }
    this.keep(s, witness);
    return s;
  }

  private keep(s: WitnessSignature, witness: RelayedWitness): void {
    const epoch = s.epoch.toString();
    let byWitness = this.kept.get(epoch);
    if (byWitness === undefined) {
      byWitness = new Map();
      this.kept.set(epoch, byWitness);
      // forget the oldest epochs (a Map keeps insertion order)
      while (this.kept.size > this.keepEpochs) {
        this.kept.delete(this.kept.keys().next().value!);
      }
    }
    byWitness.set(toHex(witness.publicKey), s);
  }

  /**
   * What `GET /v1/epoch` carries for the head (`epoch`, `root`), in Plexi's JSON: for each
   * witness, its newest kept signature at or below `epoch` (a signature of an earlier epoch
   * was checked against this directory's root of that epoch when it was kept). Witnesses
   * sign after they have verified, so they lag the head; a client that holds an older
   * verified head can still count them, and one at the head counts them once they catch up.
   *
   * Polled witnesses that have not answered for `epoch` are asked in the background (each at
   * most once per `retryMs`): a slow or silent witness never holds the answer.
   */
  signaturesFor(epoch: bigint, root: Uint8Array): WitnessSignatureJson[] {
    void this.pollAll(epoch, root);
    const newest = new Map<string, WitnessSignature>();
    for (const [kept, byWitness] of this.kept) {
      if (BigInt(kept) > epoch) continue;
      for (const [witness, s] of byWitness) {
        if (s.epoch === epoch && !bytesEqual(s.digest, root)) continue;
        const seen = newest.get(witness);
        if (seen === undefined || seen.epoch < s.epoch) newest.set(witness, s);
      }
    }
    // the configured order, so that answers are stable
    return this.options.witnesses
      .map((w) => newest.get(toHex(w.publicKey)))
      .filter((s): s is WitnessSignature => s !== undefined)
      .map((s) => witnessSignatureToJson(s) as WitnessSignatureJson);
  }

  /**
   * Asks every polled witness for its signature of (`epoch`, `root`), resolving when all have
   * answered, failed or timed out. `signaturesFor` starts this without waiting; a server may
   * await it after a publish, and tests do.
   */
  pollAll(epoch: bigint, root: Uint8Array): Promise<void> {
    return Promise.all(
      this.options.witnesses
        .filter((w) => w.url !== undefined)
        .map((w) => this.poll(w, epoch, root)),
    ).then(() => undefined);
  }

  private poll(w: RelayedWitness, epoch: bigint, root: Uint8Array): Promise<void> {
    const key = `${toHex(w.publicKey)}/${epoch}`;
    if (this.kept.get(epoch.toString())?.has(toHex(w.publicKey)) === true) return Promise.resolve();
    const last = this.asked.get(key);
    if (last !== undefined && this.now() - last < this.retryMs) return Promise.resolve();
    const running = this.inFlight.get(key);
    if (running !== undefined) return running;
    const job = this.fetchOne(w, epoch, root).finally(() => {
      this.inFlight.delete(key);
      this.asked.set(key, this.now());
      if (this.asked.size > 4 * this.keepEpochs * this.options.witnesses.length) {
        this.asked.delete(this.asked.keys().next().value!);
      }
    });
    this.inFlight.set(key, job);
    return job;
  }

  /** One bounded fetch; a witness that is down, slow, or wrong is simply not relayed. */
  private async fetchOne(w: RelayedWitness, epoch: bigint, root: Uint8Array): Promise<void> {
    const url = `${w.url!.replace(/\/+$/, '')}/namespaces/${encodeURIComponent(this.options.namespace)}/audits/${epoch}`;
    try {
      const response = await this.fetcher(url, {
        signal: AbortSignal.timeout(this.timeoutMs),
        headers: { accept: 'application/json' },
        redirect: 'error',
      });
      if (!response.ok || response.body === null) {
        await response.body?.cancel();
        return;
      }
      const reader = response.body.getReader();
      const chunks: Uint8Array[] = [];
      let size = 0;
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        size += value.length;
        if (size > this.maxBodyBytes) {
          await reader.cancel();
          return;
        }
        chunks.push(value);
      }
      const json: unknown = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      const s = parseWitnessSignature(json);
      verifyWitnessSignature(s, w.publicKey);
      if (
        s.namespace === this.options.namespace &&
        s.epoch === epoch &&
        bytesEqual(s.digest, root)
      ) {
        this.keep(s, w);
      }
    } catch {
      // unreachable, timed out, over the limit, malformed or forged: nothing to relay
    }
  }
}
