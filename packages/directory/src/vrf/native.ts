/**
 * The native addon, when it is there: @akd-ts/vrf-native is an optional dependency (it
 * compiles C when installed, and an install without a C compiler goes on without it), so it
 * is imported once, here, and its absence is a reason to report, not an error. The backends
 * (backend.ts) fall back to core's WebAssembly arithmetic without it.
 */

import { createRequire } from 'node:module';
import type { NativeVrfAddon, NativeVrfKey } from '@akd-ts/vrf-native';

/** The addon and the key class that drives it. */
export interface VrfNative {
  addon: NativeVrfAddon;
  NativeVrfKey: typeof NativeVrfKey;
}

let why: string | undefined;

/**
 * The package, loaded synchronously (a top-level await would keep this module out of
 * CommonJS bundles): with the bundle's own `require` when there is one, else Node's for this
 * module, which loads ES modules too (Node 20.19 and later).
 */
function loadPackage(): typeof import('@akd-ts/vrf-native') | null {
  try {
    const load =
      typeof require === 'function' ? require : createRequire(import.meta.url || __filename);
    return load('@akd-ts/vrf-native') as typeof import('@akd-ts/vrf-native');
  } catch (error) {
    why = `@akd-ts/vrf-native is not installed (${error instanceof Error ? error.message : String(error)})`;
    return null;
  }
}

const native = loadPackage();

/** The addon, or null when the package is not installed or its addon was not built. */
export function loadVrfNative(): VrfNative | null {
  if (native === null) return null;
  const addon = native.loadNativeVrf();
  if (addon === null) {
    why = native.nativeVrfLoadError();
    return null;
  }
  return { addon, NativeVrfKey: native.NativeVrfKey };
}

/** Why the addon cannot be used (for errors and logs), or undefined when it can. */
export function nativeVrfWhy(): string | undefined {
  return loadVrfNative() === null ? why : undefined;
}
