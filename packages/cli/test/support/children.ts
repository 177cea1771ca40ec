/**
 * Child processes of the operations tests, run from the TypeScript sources as the suite runs:
 * `akd serve` (resolved once it prints its URL) and small scripts printing one line per
 * event, read with `waitForLine`. Both are stopped with SIGTERM and waited for.
 */

import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

export { childCommandLines, childPids, eventually } from '../../../../test/support/processes.js';

const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
const BIN = fileURLToPath(new URL('../../src/bin.ts', import.meta.url));

/** A running child with its stdout lines. */
export interface Child {
  process: ChildProcess;
  lines: string[];
  stderr(): string;
  /**
   * Resolves to the first line (from the start) of stdout, or of stderr, matching `pattern`;
   * rejects if the child exits first.
   */
  waitForLine(
    pattern: RegExp,
    options?: { stream?: 'stdout' | 'stderr'; timeoutMs?: number },
  ): Promise<RegExpExecArray>;
  /** SIGTERM, then the exit code (or signal). */
  stop(): Promise<number | string | null>;
}

/** Starts `node --conditions=source --import tsx <script> ...args`. */
export function spawnTs(script: string, args: string[], env: Record<string, string> = {}): Child {
  const child = spawn(
    process.execPath,
    ['--conditions=source', '--import', import.meta.resolve('tsx'), script, ...args],
    { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const lines: string[] = [];
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += String(d)));
  const waiters = new Set<() => void>();
  createInterface({ input: child.stdout! }).on('line', (line) => {
    lines.push(line);
    for (const wake of waiters) wake();
  });
  const exited = new Promise<number | string | null>((resolve) =>
    child.on('exit', (code, signal) => {
      resolve(code ?? signal);
      for (const wake of waiters) wake();
    }),
  );
  const search = (pattern: RegExp, from: string[]) => {
    for (const line of from) {
      const match = pattern.exec(line);
      if (match) return match;
    }
    return undefined;
  };
  return {
    process: child,
    lines,
    stderr: () => stderr,
    waitForLine: (pattern, { stream = 'stdout', timeoutMs = 60_000 } = {}) =>
      new Promise((resolve, reject) => {
        const check = () => {
          const source = stream === 'stderr' ? stderr.split('\n') : lines;
          const match = search(pattern, source);
          if (match) finish(() => resolve(match));
          else if (child.exitCode !== null || child.signalCode !== null) {
            finish(() => reject(new Error(`the child exited before ${pattern}: ${stderr}`)));
          }
        };
        const timer = setTimeout(
          () => finish(() => reject(new Error(`timed out waiting for ${pattern}: ${stderr}`))),
          timeoutMs,
        );
        const finish = (then: () => void) => {
          clearTimeout(timer);
          waiters.delete(check);
          child.stderr!.off('data', check);
          then();
        };
        waiters.add(check);
        child.stderr!.on('data', check);
        check();
      }),
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
}

/** Starts `akd serve ...` and resolves once it listens, with its URL. */
export async function spawnServe(
  args: string[],
  env: Record<string, string>,
): Promise<Child & { url: string }> {
  const child = spawnTs(BIN, ['serve', '--port', '0', ...args], env);
  try {
    const match = await child.waitForLine(/akd serve: (http:\/\/\S+)\//, { stream: 'stderr' });
    return { ...child, url: match[1]! };
  } catch (e) {
    await child.stop();
    throw e;
  }
}
