/**
 * How `akd audit verify` reports: a line every N verified blobs (or one redrawn status line
 * on a terminal), JSON lines with `--json`, and a summary at the end naming the head reached
 * and the first failure with its code. Rates are over this run's verification only.
 */

import { toHex, type AuditBlobNaming, type AuditHead, type WitnessSignature } from '@akd-ts/core';
import type { CliIo } from '../io.js';
import { toJson, type Json } from '../output.js';

/** Where the chain this run verified started from. */
export type AnchorKind = 'genesis' | 'trusted' | 'state' | 'first-use' | 'none';

export interface SummaryInput {
  source: string;
  configuration: string;
  naming: AuditBlobNaming | undefined;
  anchor: AnchorKind;
  /** The head before this run's first blob. */
  start: AuditHead | undefined;
  /** The head after this run's last blob. */
  head: AuditHead | undefined;
  failure: { code: string; message: string; epoch?: bigint } | undefined;
  /** The last head this run signed (Plexi's format), and the key that signed it. */
  signedHead: { head: WitnessSignature; publicKey: Uint8Array } | undefined;
  /** Why the run stopped without a failure. */
  stopped: 'end' | 'interrupted' | 'until-epoch';
}

const MB = 1024 * 1024;

function namingText(naming: AuditBlobNaming | undefined): string {
  return naming === undefined ? 'naming not settled' : `blobs named by their ${naming} epoch`;
}

/** Counts, rates and output for one run. */
export class AuditReporter {
  private readonly started = performance.now();
  private verifiedBlobs = 0;
  private bytes = 0;
  private lastDraw = 0;
  private drawn = false;

  constructor(
    private readonly io: CliIo,
    private readonly options: { json: boolean; every: number },
  ) {}

  private get tty(): boolean {
    return !this.options.json && this.io.stdout.isTTY === true;
  }

  get verified(): number {
    return this.verifiedBlobs;
  }

  private rates(): { seconds: number; perSecond: number; mbPerSecond: number } {
    const seconds = (performance.now() - this.started) / 1000;
    const t = Math.max(seconds, 1e-9);
    return { seconds, perSecond: this.verifiedBlobs / t, mbPerSecond: this.bytes / MB / t };
  }

  /** One more verified blob ending at `epoch`. */
  blob(epoch: bigint, bytes: number): void {
    this.verifiedBlobs++;
    this.bytes += bytes;
    if (this.tty) {
      const now = performance.now();
      if (now - this.lastDraw < 100) return;
      this.lastDraw = now;
      const { perSecond, mbPerSecond } = this.rates();
      const line = `verifying: epoch ${epoch}, ${this.verifiedBlobs} blobs (${perSecond.toFixed(1)}/s, ${mbPerSecond.toFixed(2)} MB/s)`;
      this.io.stdout.write(`\r${line.padEnd(this.io.stdout.columns ?? 80)}`);
      this.drawn = true;
      return;
    }
    if (this.verifiedBlobs % this.options.every !== 0) return;
    const { perSecond, mbPerSecond } = this.rates();
    if (this.options.json) {
      this.line({
        event: 'progress',
        epoch,
        verified: this.verifiedBlobs,
        blobsPerSecond: round(perSecond),
        megabytesPerSecond: round(mbPerSecond),
      });
    } else {
      this.io.stdout.write(
        `verified through epoch ${epoch}: ${this.verifiedBlobs} blobs (${perSecond.toFixed(1)} blobs/s, ${mbPerSecond.toFixed(2)} MB/s)\n`,
      );
    }
  }

  /** A note that does not stop the run (a monitor's retry, waiting for epochs). */
  note(event: string, message: string): void {
    this.clear();
    if (this.options.json) this.line({ event, message });
    else this.io.stdout.write(`${message}\n`);
  }

  private clear(): void {
    if (!this.drawn) return;
    this.io.stdout.write(`\r${''.padEnd(this.io.stdout.columns ?? 80)}\r`);
    this.drawn = false;
  }

  private line(value: { [key: string]: Json }): void {
    this.io.stdout.write(`${toJson(value)}\n`);
  }

  /** The closing summary. */
  summary(s: SummaryInput): void {
    this.clear();
    const { seconds, perSecond, mbPerSecond } = this.rates();
    if (this.options.json) {
      this.line({
        event: 'summary',
        ok: s.failure === undefined,
        source: s.source,
        configuration: s.configuration,
        naming: s.naming ?? null,
        anchor: s.anchor,
        verified: this.verifiedBlobs,
        startEpoch: s.start?.epoch ?? null,
        epoch: s.head?.epoch ?? null,
        rootHash: s.head === undefined ? null : toHex(s.head.rootHash),
        stopped: s.failure === undefined ? s.stopped : 'failure',
        seconds: round(seconds),
        blobsPerSecond: round(perSecond),
        megabytesPerSecond: round(mbPerSecond),
        failure:
          s.failure === undefined
            ? null
            : { code: s.failure.code, message: s.failure.message, epoch: s.failure.epoch ?? null },
        signedHead:
          s.signedHead === undefined
            ? null
            : {
                epoch: s.signedHead.head.epoch,
                timestamp: s.signedHead.head.timestamp,
                ciphersuite: s.signedHead.head.ciphersuite,
                keyId: s.signedHead.head.keyId,
                publicKey: toHex(s.signedHead.publicKey),
                signature: toHex(s.signedHead.head.signature),
              },
      });
      return;
    }
    const lines = [`audit of ${s.source} (${s.configuration}, ${namingText(s.naming)})`];
    const range =
      s.start !== undefined && s.head !== undefined && this.verifiedBlobs > 0
        ? `: epochs ${s.start.epoch} -> ${s.head.epoch}`
        : '';
    lines.push(
      `verified ${this.verifiedBlobs} blob${this.verifiedBlobs === 1 ? '' : 's'}${range} in ${seconds.toFixed(2)} s (${perSecond.toFixed(1)} blobs/s, ${mbPerSecond.toFixed(2)} MB/s)`,
    );
    lines.push(anchorText(s));
    if (s.head !== undefined) {
      lines.push(`head: epoch ${s.head.epoch}, root hash ${toHex(s.head.rootHash)}`);
    }
    if (s.signedHead !== undefined) {
      lines.push(
        `signed head: epoch ${s.signedHead.head.epoch} by auditor key ${toHex(s.signedHead.publicKey)} (Plexi ciphersuite 0x000${s.signedHead.head.ciphersuite})`,
      );
    }
    if (s.failure !== undefined) {
      const at = s.failure.epoch === undefined ? '' : ` at epoch ${s.failure.epoch}`;
      lines.push(`FAILED${at}: ${s.failure.code}: ${s.failure.message.replace(/\s*\n\s*/g, ' ')}`);
    } else if (s.stopped === 'interrupted') {
      lines.push('stopped: interrupted');
    }
    this.io.stdout.write(`${lines.join('\n')}\n`);
  }
}

function anchorText(s: SummaryInput): string {
  switch (s.anchor) {
    case 'genesis':
      return 'anchored at the empty tree of epoch 0';
    case 'trusted':
      return `anchored at the trusted root of epoch ${s.start!.epoch} (--trust)`;
    case 'state':
      return `resumed from the state file at epoch ${s.start!.epoch}`;
    case 'first-use':
      return `anchored at the first blob's previous root (trust on first use: check the root of epoch ${s.start!.epoch}, ${toHex(s.start!.rootHash)}, out of band)`;
    case 'none':
      return 'no blob verified';
  }
}

function round(x: number): number {
  return Number(x.toFixed(3));
}
