/**
 * `akd audit witness`: serves Plexi's read API (GET /info, /namespaces, /namespaces/{ns},
 * /namespaces/{ns}/audits/{epoch}, /namespaces/{ns}/last-verified-epoch) from the heads file
 * an auditor's `akd audit verify --sign-key --heads` appends to, so that clients, Plexi's own
 * CLI included, and a directory server relaying witness signatures fetch them over HTTP. It
 * runs until SIGINT or SIGTERM; each request reads the lines appended since the last.
 */

import type { Command } from 'commander';
import { toHex } from '@akd-ts/core';
import { buildWitnessApp, stopOnSignals } from '@akd-ts/server';
import { parseHex, quote } from '../args.js';
import { UsageError } from '../errors.js';
import type { CliIo } from '../io.js';

interface WitnessOptions {
  heads: string;
  publicKey: string[];
  notBefore: string;
  logDirectory: string[];
  port: string;
  host: string;
}

const collect = (value: string, previous: string[] = []) => [...previous, value];

function parsePort(text: string): number {
  const port = /^[0-9]{1,5}$/.test(text) ? Number(text) : NaN;
  if (!(port >= 0 && port <= 65535))
    throw new UsageError(`--port: expected 0 to 65535, got ${quote(text)}`);
  return port;
}

/** `--log-directory <namespace>=<url>` pairs. */
function parseLogDirectories(pairs: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const pair of pairs) {
    const eq = pair.lastIndexOf('=');
    if (eq <= 0)
      throw new UsageError(`--log-directory: expected <namespace>=<url>, got ${quote(pair)}`);
    out[pair.slice(0, eq)] = pair.slice(eq + 1);
  }
  return out;
}

/**
 * Adds `witness` under `akd audit`.
 *
 * @example addAuditWitness(audit, io);
 */
export function addAuditWitness(audit: Command, io: CliIo): void {
  const cmd = audit
    .command('witness')
    .description("serve Plexi's witness API from an auditor's heads file")
    .requiredOption('--heads <file>', 'the heads file akd audit verify --heads appends to')
    .requiredOption(
      '--public-key <hex>',
      'a public key the witness signs with, listed by /info (repeatable)',
      collect,
    )
    .option('--not-before <seconds>', "the keys' not_before, seconds since 1970", '0')
    .option(
      '--log-directory <ns=url>',
      "a namespace's audit blob listing, its Plexi log_directory (repeatable)",
      collect,
      [],
    )
    .option('--port <n>', 'port to listen on (0: any free port)', '8788')
    .option('--host <address>', 'address to listen on', '127.0.0.1');
  cmd.addHelpText(
    'after',
    '\nExample:\n' +
      '  $ akd audit verify https://host/v1/audit-blobs --follow --sign-key witness.key \\\n' +
      '      --namespace my-log --heads heads.jsonl &\n' +
      '  $ akd audit witness --heads heads.jsonl --public-key <hex> --port 8788\n' +
      '  $ plexi audit --remote-url http://127.0.0.1:8788 --namespace my-log\n',
  );
  cmd.action(async (opts: WitnessOptions) => {
    if (!/^[0-9]{1,15}$/.test(opts.notBefore)) {
      throw new UsageError(
        `--not-before: expected seconds since 1970, got ${quote(opts.notBefore)}`,
      );
    }
    const keys = opts.publicKey.map((k) => ({
      publicKey: toHex(parseHex(k, '--public-key', 32)),
      notBefore: Number(opts.notBefore),
    }));
    const port = parsePort(opts.port);
    const app = buildWitnessApp({
      heads: opts.heads,
      keys,
      logDirectory: parseLogDirectories(opts.logDirectory),
    });
    const address = await app.listen({ port, host: opts.host });
    io.stderr.write(`akd audit witness: ${address}/ (heads from ${opts.heads})\n`);
    await new Promise<void>((resolve, reject) => {
      stopOnSignals({ close: () => app.close() }, (signal, error) => {
        if (error !== undefined) reject(error as Error);
        io.stderr.write(`akd audit witness: stopped (${signal})\n`);
        resolve();
      });
    });
  });
}
