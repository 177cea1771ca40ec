/**
 * `akd serve --witness KEY[@URL] --witness-namespace NS`: the witnesses whose signatures the
 * server relays with each head (the server README, "Witness signatures"). A witness with a
 * URL serves Cloudflare Plexi's read API (as `akd audit witness` does) and is polled by every
 * proof server; one without pushes to `POST /v1/witness-signatures`.
 */

import type { WitnessesConfig } from '@akd-ts/server';
import { UsageError } from '../errors.js';

/** commander's collector for a repeatable option. */
export function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

/**
 * The witnesses of `--witness` values and `--witness-namespace`, or undefined when none.
 *
 * @throws UsageError for a key that is not 32 bytes of hex, a URL that is not http(s), a key
 * given twice, or witnesses without a namespace (or a namespace without witnesses)
 *
 * @example parseWitnesses(['ab…89@https://witness.example'], 'my-log')
 */
export function parseWitnesses(
  values: readonly string[] | undefined,
  namespace: string | undefined,
): WitnessesConfig | undefined {
  const list = values ?? [];
  if (list.length === 0) {
    if (namespace !== undefined) {
      throw new UsageError('--witness-namespace: give the witnesses too (--witness KEY[@URL])');
    }
    return undefined;
  }
  if (namespace === undefined || namespace.length === 0) {
    throw new UsageError(
      '--witness: give --witness-namespace too, the namespace the witnesses sign these roots under',
    );
  }
  const seen = new Set<string>();
  const witnesses = list.map((value) => {
    const at = value.indexOf('@');
    const key = (at < 0 ? value : value.slice(0, at)).toLowerCase();
    if (!/^[0-9a-f]{64}$/.test(key)) {
      throw new UsageError(
        `--witness: expected a 32-byte Ed25519 public key in hex, then optionally @URL; got ${JSON.stringify(value.slice(0, 80))}`,
      );
    }
    if (seen.has(key)) throw new UsageError(`--witness: the key ${key} is given twice`);
    seen.add(key);
    if (at < 0) return { publicKey: key };
    const url = value.slice(at + 1);
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw new UsageError(`--witness: ${JSON.stringify(url.slice(0, 80))} is not a URL`);
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') {
      throw new UsageError(`--witness: a witness's URL is http or https, not ${parsed.protocol}`);
    }
    return { publicKey: key, url };
  });
  return { namespace, witnesses };
}
