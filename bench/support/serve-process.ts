/**
 * `akd serve` as users run it, for the server benchmark: the compiled CLI in a child process
 * (`packages/cli/bin/akd.js`), its URL read from the banner it prints on stderr, and the
 * resident memory of its whole process tree (the primary, the proof servers and the writer)
 * read from /proc.
 */

import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const AKD_BIN = join(ROOT, 'packages/cli/bin/akd.js');

export interface ServeProcess {
  url: string;
  child: ChildProcess;
  /** What it printed on stderr so far (for failure reports). */
  stderr: () => string;
  /** SIGTERM, then waits for the exit; resolves to the exit code. */
  stop: () => Promise<number | null>;
}

/** Servers started and not yet exited: an interrupted bench stops them on its way out. */
const running = new Set<ChildProcess>();
let stopsOnSignal = false;

function stopServersOnSignal(): void {
  if (stopsOnSignal) return;
  stopsOnSignal = true;
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      // each primary then stops its own proof servers and writer
      for (const child of running) child.kill('SIGTERM');
      process.exit(130);
    });
  }
}

/**
 * Starts `akd serve <args>` with `env` added and waits for its banner, then for `/readyz`.
 * @throws Error when it exits first, or is not ready within `timeoutMs`.
 */
export async function startServe(
  args: string[],
  env: NodeJS.ProcessEnv,
  timeoutMs = 600_000,
): Promise<ServeProcess> {
  const child = spawn(process.execPath, [AKD_BIN, 'serve', ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  running.add(child);
  stopServersOnSignal();
  let text = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  void exited.then(() => running.delete(child));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`akd serve printed no banner:\n${text}`)),
      timeoutMs,
    );
    child.stderr!.setEncoding('utf8');
    child.stderr!.on('data', (chunk: string) => {
      text += chunk;
      const m = /akd serve: (http:\/\/[^/\s]+)\//.exec(text);
      if (m !== null) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`akd serve exited (${code}) before serving:\n${text}`));
    });
  });
  // the banner comes once the proof servers listen; the writer may still be starting
  const ready = performance.now() + timeoutMs;
  while ((await fetch(`${url}/readyz`).catch(() => undefined))?.status !== 200) {
    if (performance.now() > ready) throw new Error(`akd serve never got ready:\n${text}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    url,
    child,
    stderr: () => text,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
}

/** The process ids of `root` and all its descendants (from /proc/<pid>/stat). */
export function processTree(root: number): number[] {
  const parents = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^[0-9]+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // the command name is in parentheses and may hold spaces: fields follow the last ')'
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const list = parents.get(ppid) ?? [];
      list.push(Number(entry));
      parents.set(ppid, list);
    } catch {
      // the process ended while being read
    }
  }
  const out: number[] = [];
  const walk = (pid: number) => {
    out.push(pid);
    for (const c of parents.get(pid) ?? []) walk(c);
  };
  walk(root);
  return out;
}

/**
 * A field of `/proc/<pid>/status`, kB: `VmRSS` (all resident pages) or `RssAnon` (the
 * process's own, without the files it maps: its binary, a SQLite store it reads through a map);
 * 0 once the process ended.
 */
function statusKb(pid: number, field: 'VmRSS' | 'RssAnon'): number {
  try {
    const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(
      readFileSync(`/proc/${pid}/status`, 'utf8'),
    );
    return m === null ? 0 : Number(m[1]);
  } catch {
    return 0; // ended
  }
}

/** Resident memory of one process, kB (0 once it ended). */
function residentKb(pid: number): number {
  return statusKb(pid, 'VmRSS');
}

/** Resident memory of `pids` together, in MB (a process that ended counts 0). */
export function residentMb(pids: number[]): number {
  let kb = 0;
  for (const pid of pids) kb += residentKb(pid);
  return Math.round(kb / 1024);
}

/** The role of a process of `akd serve`: what its launcher put in AKD_SERVE_ROLE. */
function roleOf(pid: number, root: number): string {
  if (pid === root) return 'primary';
  try {
    const env = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
    const role = env.find((v) => v.startsWith('AKD_SERVE_ROLE='))?.slice(15);
    return role === undefined ? 'other' : role;
  } catch {
    return 'other';
  }
}

/** The largest anonymous resident memory (`RssAnon`) of `root`'s proof servers, MB. */
export function largestProofAnonMb(root: number): number {
  let kb = 0;
  for (const pid of proofPids(root)) kb = Math.max(kb, statusKb(pid, 'RssAnon'));
  return Math.round(kb / 1024);
}

/** The process ids of `root`'s proof servers. */
export function proofPids(root: number): number[] {
  return processTree(root).filter((pid) => roleOf(pid, root) === 'proof');
}

/**
 * Resident memory of each process of `akd serve` under `root`, MB, by role: `primary`,
 * `proof1`, `proof2`, ... (in process id order), `writer`.
 */
export function residentByRole(root: number): Record<string, number> {
  const out: Record<string, number> = {};
  let proofs = 0;
  for (const pid of processTree(root).sort((a, b) => a - b)) {
    let role = roleOf(pid, root);
    if (role === 'proof') role = `proof${++proofs}`;
    out[role] = (out[role] ?? 0) + Math.round(residentKb(pid) / 1024);
  }
  return out;
}
