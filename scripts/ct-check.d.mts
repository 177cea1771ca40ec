// Types of ct-check.mjs, for the test that runs it.
export interface MemcheckRun {
  status: number | null;
  reports: string[];
  stdout: string;
  stderr: string;
}
export interface CtCase {
  clamped: string;
  nonceKey: string;
  publicKey: string;
  alpha: string;
}
export function ctCheckUnavailable(): string | undefined;
export function buildCtCheck(limbs: number, dir: string): string;
export function runUnderMemcheck(binary: string, args: string[]): MemcheckRun;
export function ctCheck(
  cases: CtCase[],
): { limbs: number; leak: MemcheckRun; runs: MemcheckRun[] }[];
