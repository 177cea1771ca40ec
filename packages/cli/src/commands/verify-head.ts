/**
 * `akd verify head FILE --auditor-key HEX`: checks a witness's signed head (Plexi's JSON, as
 * `akd audit verify --heads` writes it or a Plexi witness serves it), either ciphersuite. Exit
 * 0 when the signature verifies for that key (and the namespace is the one expected), 1 when
 * it does not, 2 when the file cannot be read as JSON.
 */

import type { Command } from 'commander';
import { AkdError, toHex, verifyWitnessSignature } from '@akd-ts/core';
import { parseHex } from '../args.js';
import type { CliIo } from '../io.js';
import { toJson } from '../output.js';
import { checkRootDigest } from '../trusted-root.js';
import { readWitnessHead } from '../witness-head.js';

interface HeadOptions {
  auditorKey: string;
  namespace?: string;
  json?: boolean;
}

const SUITES: Record<number, string> = { 1: '0x0001 (protobuf)', 2: '0x0002 (bincode)' };

/** A millisecond timestamp as ISO 8601, when a Date can show it. */
function when(ms: bigint): string {
  return ms <= 8_640_000_000_000_000n ? new Date(Number(ms)).toISOString() : `${ms} ms after 1970`;
}

/**
 * Adds `verify head` under `akd verify`.
 *
 * @example addVerifyHead(verify, io);
 */
export function addVerifyHead(verify: Command, io: CliIo): void {
  const cmd = verify
    .command('head')
    .description("check a witness's signed head (Plexi's format, either ciphersuite)")
    .argument('<file>', 'one JSON head, or JSON lines of heads (the last is checked)')
    .requiredOption('--auditor-key <hex>', "the witness's Ed25519 public key you trust (32 bytes)")
    .option('--namespace <text>', 'the log the head must be for')
    .option('--json', 'print the result as one line of JSON');
  cmd.addHelpText(
    'after',
    '\nExample:\n  $ akd verify head heads.jsonl --auditor-key <hex> --namespace my-log\n\n' +
      "The head's signature is checked strictly (RFC 8032, as Plexi does), its serialized\n" +
      "message must be the encoding of its fields and its key id the key's last byte. Exit\n" +
      'status: 0 valid, 1 invalid (its code is printed), 2 unreadable or a usage error.\n',
  );
  cmd.action(async (file: string, opts: HeadOptions) => {
    const key = parseHex(opts.auditorKey, '--auditor-key', 32);
    const head = await readWitnessHead(file, '<file>');
    verifyWitnessSignature(head, key);
    if (opts.namespace !== undefined && head.namespace !== opts.namespace) {
      throw new AkdError(
        'WITNESS_NAMESPACE_MISMATCH',
        `the head is for ${JSON.stringify(head.namespace)}, not ${JSON.stringify(opts.namespace)}`,
        { field: 'namespace' },
      );
    }
    checkRootDigest(head);
    if (opts.json === true) {
      io.stdout.write(
        `${toJson({
          head: 'witness',
          verified: true,
          namespace: head.namespace,
          epoch: head.epoch,
          rootHash: toHex(head.digest),
          timestamp: head.timestamp,
          ciphersuite: head.ciphersuite,
          keyId: head.keyId,
          auditorKey: toHex(key),
        })}\n`,
      );
      return;
    }
    io.stdout.write(
      `valid head: epoch ${head.epoch}, root hash ${toHex(head.digest)}\n` +
        `signed for ${JSON.stringify(head.namespace)} at ${when(head.timestamp)} by witness key ${toHex(key)}, Plexi ciphersuite ${SUITES[head.ciphersuite]!}\n`,
    );
  });
}
