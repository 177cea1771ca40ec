/**
 * The processes an `akd serve` started (its proof servers and writer, told apart by their
 * AKD_SERVE_ROLE), found through /proc (Linux only), and a wait for what they do next.
 */

import { readFileSync, readdirSync } from 'node:fs';

/**
 * The pids of the `akd serve` processes in `role` (AKD_SERVE_ROLE) whose parent is `parent`
 * (default: this process, for a server run in-process). Linux: reads /proc.
 */
export function childPids(role: string, parent: number = process.pid): number[] {
  const out: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^[0-9]+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // the field after the command's closing parenthesis is the state, then the parent
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const env = readFileSync(`/proc/${entry}/environ`, 'utf8').split('\0');
      if (ppid === parent && env.includes(`AKD_SERVE_ROLE=${role}`)) out.push(Number(entry));
    } catch {
      // a process that ended meanwhile
    }
  }
  return out;
}

/** The command lines of this process's `akd serve` children in `role`. */
export function childCommandLines(role: string): string[][] {
  return childPids(role).flatMap((pid) => {
    try {
      return [readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')];
    } catch {
      return []; // a process that ended meanwhile
    }
  });
}

/**
 * Waits until `check` holds (an error thrown counts as not yet), checking every 100 ms; fails
 * with `what` past `timeoutMs` (a bound for a busy machine, never a pacing of the test).
 */
export async function eventually(
  what: string,
  check: () => Promise<boolean> | boolean,
  timeoutMs = 60_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (
      await Promise.resolve()
        .then(check)
        .catch(() => false)
    )
      return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
