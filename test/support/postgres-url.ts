/**
 * Where the PostgreSQL tests connect: AKD_TEST_POSTGRES_URL. `npm test` sets it to a
 * throwaway server it starts for the run (scripts/test-postgres.mjs) unless it is already set
 * (CI sets it); a test file run on its own without it skips its PostgreSQL tests, saying why.
 */

export const POSTGRES_URL: string | undefined = process.env['AKD_TEST_POSTGRES_URL'] || undefined;

/** node:test's `skip` option for PostgreSQL tests. */
export const POSTGRES_SKIP: string | false =
  POSTGRES_URL === undefined
    ? 'AKD_TEST_POSTGRES_URL is not set (npm test starts a throwaway PostgreSQL and sets it)'
    : false;
