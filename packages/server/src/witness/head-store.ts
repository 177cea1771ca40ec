/**
 * The signed heads a witness serves, read from the heads file `akd audit verify --heads`
 * appends to (Plexi's JSON, one signature per line). The file only grows while the auditor
 * runs, so a refresh reads the bytes appended since the last one; a file that shrank, or
 * whose last bytes read changed, was replaced and is read again whole. Lines that are not witness signatures are skipped and
 * counted (the file is the auditor's own, but a crash can leave half a line, which the next
 * refresh completes).
 */

import { open, stat } from 'node:fs/promises';
import { parseWitnessSignature, toHex, type WitnessSignature } from '@akd-ts/core';

/** One namespace's heads, by epoch. */
export interface NamespaceHeads {
  name: string;
  /** Plexi's JSON text of each signature, by epoch (decimal). */
  byEpoch: Map<string, string>;
  /** The first head read: Plexi's `root` of the namespace (`<epoch>/<digest hex>`). */
  first: WitnessSignature;
  /** The newest epoch signed. */
  last: WitnessSignature;
  /** The digest of each epoch, for `start_hash` (previous root) answers. */
  digests: Map<string, string>;
}

/** How many of the last bytes read are compared on the next refresh. */
const TAIL = 256;

/** A line longer than this is not a head (a head is a few hundred bytes). */
const MAX_LINE = 64 * 1024;

export class HeadStore {
  private readonly namespaces = new Map<string, NamespaceHeads>();
  private offset = 0;
  private partial = '';
  /** The last bytes read, to tell an appended file from a replaced one. */
  private tail = Buffer.alloc(0);
  /** Lines skipped because they were not witness signatures. */
  skipped = 0;

  constructor(readonly path: string) {}

  /** Reads what was appended to the file since the last refresh. */
  async refresh(): Promise<void> {
    let size: number;
    try {
      size = (await stat(this.path)).size;
    } catch {
      return; // no heads yet
    }
    if (size < this.offset) this.reset();
    const file = await open(this.path, 'r');
    try {
      // the bytes before the offset must still be the ones read: else the file was replaced
      const from = Math.max(0, this.offset - this.tail.length);
      const buffer = Buffer.alloc(size - from);
      const { bytesRead } = await file.read(buffer, 0, buffer.length, from);
      const read = buffer.subarray(0, bytesRead);
      if (!read.subarray(0, this.tail.length).equals(this.tail)) {
        this.reset();
        await this.refresh();
        return;
      }
      const fresh = read.subarray(this.tail.length);
      if (fresh.length === 0) return;
      this.offset += fresh.length;
      this.tail = Buffer.from(read.subarray(Math.max(0, read.length - TAIL)));
      this.take(fresh.toString('utf8'));
    } finally {
      await file.close();
    }
  }

  private reset(): void {
    this.namespaces.clear();
    this.offset = 0;
    this.partial = '';
    this.tail = Buffer.alloc(0);
    this.skipped = 0;
  }

  private take(text: string): void {
    const lines = (this.partial + text).split('\n');
    this.partial = lines.pop() ?? '';
    if (this.partial.length > MAX_LINE) this.partial = '';
    for (const line of lines) {
      const trimmed = line.trim();
      if (trimmed === '') continue;
      try {
        if (trimmed.length > MAX_LINE) throw new RangeError('line too long');
        this.add(parseWitnessSignature(JSON.parse(trimmed)), trimmed);
      } catch {
        this.skipped++;
      }
    }
  }

  private add(s: WitnessSignature, text: string): void {
    const epoch = s.epoch.toString();
    let ns = this.namespaces.get(s.namespace);
    if (ns === undefined) {
      ns = { name: s.namespace, byEpoch: new Map(), digests: new Map(), first: s, last: s };
      this.namespaces.set(s.namespace, ns);
    }
    ns.byEpoch.set(epoch, text);
    ns.digests.set(epoch, toHex(s.digest));
    if (s.epoch > ns.last.epoch || s.epoch === ns.last.epoch) ns.last = s;
  }

  /** Every namespace with at least one head, in the order first seen. */
  list(): NamespaceHeads[] {
    return [...this.namespaces.values()];
  }

  get(name: string): NamespaceHeads | undefined {
    return this.namespaces.get(name);
  }
}
