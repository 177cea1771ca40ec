/**
 * `akd serve` run in-process for the CLI's serve tests: the key and token they use, a server
 * started until it prints its URL, and publishes posted to it.
 */

import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { run } from '../../src/program.js';

export const KEY = 'c9afa9d845ba75166b5c215767b1d6934e50c3db36e89b127b8a622b120f6721';
export const TOKEN = 'serve-test-token-0123456789';

/**
 * Runs `akd serve ...` in-process until it prints its URL; `stop()` sends SIGTERM and
 * resolves to the outcome.
 */
export async function serving(args: string[], env: Record<string, string> = { AKD_VRF_KEY: KEY }) {
  let stdout = '';
  let stderr = '';
  const done = run(['serve', '--port', '0', ...args], {
    stdout: { write: (s: string) => (stdout += s) },
    stderr: { write: (s: string) => (stderr += s) },
    stdin: Readable.from([]),
    env,
  });
  let finished = false;
  void done.then(() => (finished = true));
  // the processes of the cluster start from the TypeScript sources: allow for a busy machine
  const deadline = Date.now() + 90_000;
  while (!/akd serve: (http:\/\/\S+)\//.test(stderr)) {
    if (finished)
      return {
        url: '',
        done,
        output: () => ({ stdout, stderr }),
        stop: async () => ({ code: await done, stdout, stderr }),
      };
    assert.ok(Date.now() < deadline, `the server started: ${stderr}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  const url = /akd serve: (http:\/\/\S+)\//.exec(stderr)![1]!;
  return {
    url,
    done,
    output: () => ({ stdout, stderr }),
    stop: async () => {
      process.emit('SIGTERM', 'SIGTERM');
      const code = await done;
      return { code, stdout, stderr };
    },
  };
}

/** POSTs a one-label publish (`<label>-key`) to the server at `url`, with the token. */
export const publisher = (url: string) => (label: string) =>
  fetch(`${url}/v1/publish`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ updates: [{ label, value: `${label}-key` }] }),
  });
