// Types of test-postgres.mjs, for the test that checks it.
export interface PostgresBinaries {
  dir: string;
  source: string;
}
export interface ThrowawayPostgres {
  url: string;
  source: string;
  dir: string;
  pid: number;
  stop(): Promise<void>;
}
export function findPostgresBinaries(env?: NodeJS.ProcessEnv): PostgresBinaries;
export function startThrowawayPostgres(env?: NodeJS.ProcessEnv): Promise<ThrowawayPostgres>;
