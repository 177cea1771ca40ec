/**
 * The unit of work a tree worker thread runs: insert one range of elements below one slot of
 * a shared arena (insert.ts), within a slot region of its own. Messages carry the shared
 * buffers (shared, not copied) and a few numbers; results are two numbers. The configuration
 * crosses as its name (and domain label), since functions cannot.
 */

import {
  AkdError,
  ExperimentalConfiguration,
  WhatsAppV1Configuration,
  treeHasherOf,
  type AkdErrorCode,
  type Configuration,
  type TreeHasher,
} from '@akd-ts/core';
import { NodeArena, type ArenaShape } from './arena.js';
import { insertBelow, insertContext } from './insert.js';

/** How a worker rebuilds the configuration (the two built-in ones only). */
export type ConfigDescription =
  { name: 'whatsapp_v1' } | { name: 'experimental'; domainLabel: Uint8Array };

/** The description of `config`, or undefined for a configuration workers cannot rebuild. */
export function describeConfig(config: Configuration): ConfigDescription | undefined {
  if (config instanceof WhatsAppV1Configuration) return { name: 'whatsapp_v1' };
  if (config instanceof ExperimentalConfiguration) {
    return { name: 'experimental', domainLabel: config.domainLabel };
  }
  return undefined;
}

export interface SubtreeTask {
  config: ConfigDescription;
  arena: SharedArrayBuffer;
  shape: ArenaShape;
  labels: SharedArrayBuffer;
  values: SharedArrayBuffer;
  count: number;
  epoch: number;
  loaded: number;
  /** Insert elements [lo, hi) below `slot` (or NONE), creating nodes in [start, end). */
  slot: number;
  lo: number;
  hi: number;
  start: number;
  end: number;
}

export interface SubtreeResult {
  /** The subtree's node (spec 8's returned node). */
  node: number;
  /** Nodes created. */
  created: number;
}

/** An error as it crosses threads: an AkdError keeps its code. */
export interface TaskError {
  code?: AkdErrorCode;
  message: string;
}

export function taskError(e: unknown): TaskError {
  if (e instanceof AkdError) return { code: e.code, message: e.message };
  return { message: e instanceof Error ? e.message : String(e) };
}

export function fromTaskError(e: TaskError): Error {
  return e.code !== undefined ? new AkdError(e.code, e.message) : new Error(e.message);
}

const hashers = new Map<string, TreeHasher>();

function hasherOf(config: ConfigDescription): TreeHasher {
  const key =
    config.name === 'whatsapp_v1' ? config.name : `experimental:${String(config.domainLabel)}`;
  let hasher = hashers.get(key);
  if (hasher === undefined) {
    const c =
      config.name === 'whatsapp_v1'
        ? new WhatsAppV1Configuration()
        : new ExperimentalConfiguration(config.domainLabel);
    hashers.set(key, (hasher = treeHasherOf(c)));
  }
  return hasher;
}

/** Runs a task (in a worker thread; synchronous). */
export function runSubtreeTask(task: SubtreeTask): SubtreeResult {
  const arena = NodeArena.attach(task.arena, task.shape);
  const el = {
    count: task.count,
    labels: new Uint8Array(task.labels),
    values: new Uint8Array(task.values),
  };
  const ctx = insertContext(
    arena,
    el,
    hasherOf(task.config),
    task.epoch,
    task.loaded,
    task.start,
    task.end,
  );
  const node = insertBelow(ctx, task.slot, task.lo, task.hi);
  return { node, created: ctx.next - task.start };
}
