/**
 * Private folders that an `akd serve` primary killed outright (SIGKILL, a power cut) left in
 * the temporary directory: the writer's socket, a memory store's snapshot files. A primary
 * removes its own when it stops; one that could not is cleaned up by the next one to start,
 * only when it can tell the folder is stale:
 *
 * - `akd-serve-<pid>-*` (this version's): owned by this user, the primary `pid` is gone, and
 *   no socket in it accepts a connection;
 * - `akd-writer-*` (a writer's folder, as earlier versions made it): owned by this user, older
 *   than a minute (a writer listens within moments of making it), and its `writer.sock` is
 *   absent or refuses connections: no writer listens there.
 *
 * Anything else (another user's, a live process's, a name of another form) is left alone.
 */

import { lstatSync, readdirSync, rmSync } from 'node:fs';
import { createConnection } from 'node:net';
import { join } from 'node:path';

/** The start of a primary's private folder name: then its pid, a dash and random letters. */
export const PRIVATE_FOLDER_PREFIX = 'akd-serve-';

const CURRENT = /^akd-serve-([0-9]+)-[A-Za-z0-9]{6}$/;
const EARLIER = /^akd-writer-[A-Za-z0-9]{6}$/;

/** How old an earlier version's writer folder must be before it can be stale, ms. */
const EARLIER_MIN_AGE_MS = 60_000;

/** True when process `pid` exists (a process of another user counts). */
export function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** True when something accepts connections on the Unix socket `path`. */
function listening(path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection(path);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    // ECONNREFUSED (nobody listens), ENOENT (no socket): no; anything else, to be safe: yes
    socket.once('error', (e: NodeJS.ErrnoException) =>
      resolve(e.code !== 'ECONNREFUSED' && e.code !== 'ENOENT'),
    );
  });
}

/** Why the folder `name` in `dir` is stale, or undefined when it may be in use. */
async function staleness(
  dir: string,
  name: string,
  now: number,
  uid: number | undefined,
): Promise<string | undefined> {
  const current = CURRENT.exec(name);
  if (current === null && !EARLIER.test(name)) return undefined;
  const path = join(dir, name);
  const stat = lstatSync(path);
  if (!stat.isDirectory() || (uid !== undefined && stat.uid !== uid)) return undefined;
  const sockets = readdirSync(path).filter((f) => f.endsWith('.sock'));
  for (const socket of sockets) {
    if (await listening(join(path, socket))) return undefined;
  }
  if (current !== null) {
    const pid = Number(current[1]);
    return processExists(pid) ? undefined : `its primary, process ${pid}, is gone`;
  }
  if (now - stat.mtimeMs < EARLIER_MIN_AGE_MS) return undefined;
  return 'no writer listens there';
}

/**
 * Removes the stale private folders of earlier primaries from `dir` (the temporary
 * directory), calling `removed` for each. Never throws: a folder that cannot be read or
 * removed is left as it is.
 */
export async function removeStaleFolders(
  dir: string,
  removed: (path: string, why: string) => void,
  now: number = Date.now(),
): Promise<void> {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  const uid = process.getuid?.();
  for (const name of names) {
    try {
      const why = await staleness(dir, name, now, uid);
      if (why === undefined) continue;
      rmSync(join(dir, name), { recursive: true, force: true });
      removed(join(dir, name), why);
    } catch {
      // gone meanwhile, or not ours to read: left alone
    }
  }
}
