/**
 * The native addon, when it is there: @akd-ts/vrf-native is an optional dependency (it
 * compiles C when installed, and an install without a C compiler goes on without it), so it
 * is imported once, here, and its absence is a reason to report, not an error. The backends
 * (backend.ts) fall back to core's WebAssembly arithmetic without it.
 */

import type { NativeVrfAddon, NativeVrfKey } from '@akd-ts/vrf-native';

/** The addon and the key class that drives it. */
export interface VrfNative {
  addon: NativeVrfAddon;
  NativeVrfKey: typeof NativeVrfKey;
}

let why: string | undefined;

const native: typeof import('@akd-ts/vrf-native') | null = await import('@akd-ts/vrf-native').catch(
  (error: unknown) => {
    why = `@akd-ts/vrf-native is not installed (${error instanceof Error ? error.message : String(error)})`;
    return null;
  },
);

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
