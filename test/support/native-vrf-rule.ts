/**
 * The one rule for tests of the native VRF addon (packages/vrf-native/test/native-vrf.test.ts,
 * packages/directory/test/vrf-engines.test.ts): the addon is optional for users, so where it
 * was not built (no C compiler at install) its tests are skipped and say why; where it must be
 * there, under CI=true (CI installs a compiler) or AKD_REQUIRE_NATIVE_VRF=1, they run, and the
 * test that asserts the addon loads fails with the reason.
 */

/** Whether the addon is required here (then its tests never skip). */
export function nativeVrfRequired(): boolean {
  return process.env['CI'] === 'true' || process.env['AKD_REQUIRE_NATIVE_VRF'] === '1';
}

/**
 * The skip reason for the addon's tests (printed once), or false when they run: the addon
 * loaded, or it is required.
 */
export function nativeVrfSkip(loaded: boolean, why: string | undefined): string | false {
  if (loaded || nativeVrfRequired()) return false;
  const reason =
    `native VRF addon not built here (${why ?? 'unknown reason'}); ` +
    'CI and AKD_REQUIRE_NATIVE_VRF=1 require it';
  console.log(`# SKIP ${reason}`);
  return reason;
}
