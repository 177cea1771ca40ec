/**
 * `akd monitor` and `akd verify evidence`: the command-line face of @akd-ts/client. The
 * monitor keeps a client's state in a file, proves the directory only grew since the last
 * run, and checks a label (owned with --expect, else a contact's); what it catches is saved as
 * an evidence file that `akd verify evidence` checks offline.
 */

import { readFile, writeFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { AkdError, fromHex, fromUtf8, isUtf8, toHex } from '@akd-ts/core';
import {
  AkdClient,
  FileStore,
  isEvidenceError,
  verifyEvidence,
  type LabelCheck,
} from '@akd-ts/client/node';
import { CommandFailure, UsageError } from '../errors.js';
import type { CliIo } from '../io.js';

interface MonitorOptions {
  server: string;
  label: string;
  state: string;
  expect?: string;
  witnessKey: string[];
  quorum?: string;
  namespace?: string;
  maxAge?: string;
  follow?: boolean;
  interval: string;
  count?: string;
  trust?: string;
}

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `90s`, `30m`, `24h`, `7d` or plain seconds, as ms. */
export function parseDuration(text: string, name: string): number {
  const m = /^([0-9]+(?:\.[0-9]+)?)(ms|s|m|h|d)?$/.exec(text);
  if (m === null || Number(m[1]) <= 0) {
    throw new UsageError(`${name}: expected a duration such as 90s, 30m, 24h or 7d, got '${text}'`);
  }
  return Number(m[1]) * UNITS[m[2] ?? 's']!;
}

function hexKey(text: string, name: string): Uint8Array {
  if (!/^[0-9a-fA-F]{64}$/.test(text))
    throw new UsageError(`${name}: expected 32 bytes of hex, got '${text}'`);
  return fromHex(text);
}

function shown(bytes: Uint8Array): string {
  return isUtf8(bytes) ? JSON.stringify(fromUtf8(bytes)) : `hex:${toHex(bytes)}`;
}

function clientOf(o: MonitorOptions): AkdClient {
  if (!/^https?:\/\//.test(o.server))
    throw new UsageError(`--server: expected an http(s) URL, got '${o.server}'`);
  const keys = o.witnessKey.map((k) => hexKey(k, '--witness-key'));
  const quorum = o.quorum === undefined ? keys.length : Number(o.quorum);
  if (keys.length > 0 && (!Number.isInteger(quorum) || quorum < 1 || quorum > keys.length)) {
    throw new UsageError(`--quorum: expected 1 to ${keys.length}, got '${o.quorum}'`);
  }
  if (keys.length === 0 && (o.quorum !== undefined || o.maxAge !== undefined)) {
    throw new UsageError('--quorum and --max-age need --witness-key');
  }
  if (keys.length > 0 && o.namespace === undefined) {
    throw new UsageError('--namespace: the namespace the witnesses sign this directory under');
  }
  let trust;
  if (o.trust !== undefined) {
    const m = /^([0-9]{1,20}):([0-9a-fA-F]{64})$/.exec(o.trust);
    if (m === null)
      throw new UsageError(
        `--trust: expected EPOCH:ROOT (root as 64 hex digits), got '${o.trust}'`,
      );
    trust = { epoch: BigInt(m[1]!), rootHash: fromHex(m[2]!) };
  }
  return new AkdClient({
    server: o.server,
    store: new FileStore(o.state),
    ...(keys.length > 0 ? { witnesses: { keys, quorum, namespace: o.namespace! } } : {}),
    ...(o.maxAge !== undefined ? { maxAgeMs: parseDuration(o.maxAge, '--max-age') } : {}),
    ...(trust !== undefined ? { trust } : {}),
  });
}

/** One check: the head, then the label. */
async function check(client: AkdClient, o: MonitorOptions, io: CliIo): Promise<void> {
  const { previous, head } = await client.refresh();
  const grew =
    previous === undefined
      ? `first head (${head.basis})`
      : previous.epoch === head.epoch
        ? 'unchanged'
        : `grew from epoch ${previous.epoch} (${head.basis})`;
  io.stdout.write(`head: epoch ${head.epoch} root ${toHex(head.rootHash)}, ${grew}\n`);
  let result: LabelCheck;
  if (o.expect !== undefined) {
    await client.registerPublished(o.label, o.expect);
    result = await client.checkOwner(o.label);
    if (!isUtf8(result.current.value) || fromUtf8(result.current.value) !== o.expect) {
      throw new AkdError(
        'CLIENT_UNEXPECTED_CHANGE',
        `${o.label} is ${shown(result.current.value)} at version ${result.current.version}, not the expected ${JSON.stringify(o.expect)}`,
      );
    }
  } else {
    result = await client.checkContact(o.label);
  }
  for (const v of result.newVersions) {
    io.stdout.write(
      `new: ${o.label} version ${v.version} (epoch ${v.epoch}) = ${shown(v.value)}\n`,
    );
  }
  io.stdout.write(
    `label: ${o.label} at version ${result.current.version}${o.expect === undefined ? '' : ', as expected'}\n`,
  );
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

async function monitor(o: MonitorOptions, io: CliIo): Promise<void> {
  const client = clientOf(o);
  const interval = parseDuration(o.interval, '--interval');
  const count = o.count === undefined ? (o.follow ? Infinity : 1) : Number(o.count);
  if (!(count >= 1)) throw new UsageError(`--count: expected a positive integer, got '${o.count}'`);
  for (let i = 0; i < count; i++) {
    if (i > 0) await sleep(interval);
    try {
      await check(client, o, io);
    } catch (e) {
      if (!isEvidenceError(e)) throw e;
      const path = `${o.state}.evidence-${e.evidence.kind}-${e.evidence.detectedAt}.json`;
      await writeFile(path, `${JSON.stringify(e.evidence, null, 2)}\n`);
      throw new AkdError(e.code, `${e.message} (evidence: ${path})`);
    }
  }
}

export function addMonitorCommands(program: Command, io: CliIo): void {
  program
    .command('monitor')
    .description(
      'check that a directory only grew since the last run and a label is as expected; state kept in a file',
    )
    .requiredOption('--server <url>', 'the directory server, e.g. https://kt.example.com')
    .requiredOption('--label <text>', 'the label to check')
    .requiredOption('--state <file>', 'the state file (created on first use, written atomically)')
    .option(
      '--expect <value>',
      'the value the owner last published: any other value, or any version with a value never expected, fails',
    )
    .option(
      '--witness-key <hex>',
      'a trusted witness public key (repeatable)',
      (v: string, all: string[]) => [...all, v],
      [],
    )
    .option('--quorum <n>', 'distinct witnesses that must sign a head (default: all given)')
    .option('--namespace <name>', 'the namespace the witnesses sign under')
    .option(
      '--max-age <duration>',
      'the oldest a quorum of witness signatures may be (90s, 30m, 24h, 7d)',
    )
    .option('--follow', 'keep checking')
    .option('--interval <seconds>', 'time between checks with --follow', '60')
    .option('--count <n>', 'stop after n checks (default: 1, unlimited with --follow)')
    .option('--trust <epoch:root>', 'on first use, a head trusted out of band to start from')
    .addHelpText(
      'after',
      '\nExit status: 0 grew and as expected; 1 fork, rollback, unexpected value, stale head or bad proof (code on stderr, evidence file named); 2 usage error.\n',
    )
    .action((o: MonitorOptions) => monitor(o, io));
}

export function addEvidenceCommand(verify: Command, io: CliIo): void {
  verify
    .command('evidence <file>')
    .description('check an evidence file (from akd monitor or @akd-ts/client) offline')
    .option('--json', 'print the verdict as JSON')
    .addHelpText(
      'after',
      '\nExit status: 0 the evidence proves misbehaviour; 1 it does not; 2 unreadable.\n',
    )
    .action(async (file: string, o: { json?: boolean }) => {
      let doc: unknown;
      try {
        doc = JSON.parse(await readFile(file, 'utf8'));
      } catch (e) {
        throw new UsageError(`${file}: not readable as JSON (${(e as Error).message})`);
      }
      let verdict;
      try {
        verdict = verifyEvidence(doc);
      } catch (e) {
        throw new UsageError(`${file}: ${(e as Error).message}`);
      }
      if (o.json) io.stdout.write(`${JSON.stringify(verdict)}\n`);
      else {
        for (const f of verdict.findings) io.stdout.write(`ok: ${f}\n`);
        for (const p of verdict.problems) io.stdout.write(`not shown: ${p}\n`);
        io.stdout.write(`${verdict.proven ? 'proven' : 'NOT proven'}: ${verdict.kind}\n`);
      }
      if (!verdict.proven) {
        throw new CommandFailure(
          `${file} does not prove ${verdict.kind}: ${verdict.problems.join('; ')}`,
        );
      }
    });
}
