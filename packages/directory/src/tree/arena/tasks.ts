/**
 * The unit of work a tree worker thread runs: insert one range of elements below one slot of
 * a shared arena (insert.ts), within a slot region of its own. Messages carry the shared
 * buffers (shared, not copied) and a few numbers; results are two numbers. The configuration
 * crosses as its description (worker-config.ts).
 */

import {
  AkdError,
  treeHasherOf,
  type AkdErrorCode,
  type Configuration,
  type TreeHasher,
} from '@akd-ts/core';
import { configOf, type ConfigDescription } from '../../worker-config.js';
import { NodeArena, type ArenaShape } from './arena.js';
import { insertBelow, insertContext } from './insert.js';

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

/** An error as it crosses threads: an AkdError keeps its code and field. */
export interface TaskError {
  code?: AkdErrorCode;
  message: string;
  field?: string;
}

export function taskError(e: unknown): TaskError {
  if (e instanceof AkdError) return { code: e.code, message: e.message, field: e.field };
  return { message: e instanceof Error ? e.message : String(e) };
}

export function fromTaskError(e: TaskError): Error {
  return e.code !== undefined
    ? new AkdError(e.code, e.message, { field: e.field })
    : new Error(e.message);
}

const hashers = new WeakMap<Configuration, TreeHasher>();

function hasherOf(description: ConfigDescription): TreeHasher {
  const config = configOf(description);
  let hasher = hashers.get(config);
  if (hasher === undefined) hashers.set(config, (hasher = treeHasherOf(config)));
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
