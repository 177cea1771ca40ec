/**
 * Progress of `akd publish`, from Directory.publish's onProgress callbacks (phases versions,
 * vrf, tree, commit, done): a progress bar with throughput on a terminal, plain lines when
 * stderr is a file or a pipe (a log should not fill with redraws), and the time each phase
 * took for the summary. Output goes to stderr, so stdout keeps only the result (and stays
 * one line of JSON with --json).
 */

import { SingleBar } from 'cli-progress';
import type { PublishProgress } from '@akd-ts/directory';
import type { TextSink } from '../io.js';

type Phase = PublishProgress['phase'];

/** What each phase does, in the words the progress output uses. */
const PHASE_NAMES: Record<Phase, string> = {
  versions: 'reading current versions',
  vrf: 'computing VRF labels',
  preload: 'reading the paths to update',
  tree: 'updating the tree',
  commit: 'committing',
  done: 'done',
};

/**
 * Seconds spent in each phase a publish went through, in order; `proofs` is the wait for the
 * epoch's VRF proofs, which the writer stores after the commit.
 */
export type PhaseTimes = Partial<Record<Exclude<Phase, 'done'> | 'proofs', number>>;

export interface PublishReporter {
  /** Pass as Directory.publish's onProgress. */
  onProgress(progress: PublishProgress): void;
  /** Stops the bar (call on success and on failure) and returns the phase times. */
  finish(): PhaseTimes;
}

/**
 * A reporter writing to `sink`: a bar when it is a TTY, plain lines otherwise, nothing when
 * `enabled` is false (phase times are still kept).
 *
 * @example
 * ```ts
 * const reporter = publishReporter(io.stderr, true);
 * try { await dir.publish(updates, { onProgress: reporter.onProgress }) } finally { reporter.finish() }
 * ```
 */
export function publishReporter(
  sink: TextSink,
  enabled: boolean,
  now: () => number = () => performance.now(),
): PublishReporter {
  const times: PhaseTimes = {};
  let phase: Phase | undefined;
  let phaseStart = 0;
  let bar: SingleBar | undefined;
  let lastLine = -Infinity;

  const rate = (done: number) => {
    const seconds = (now() - phaseStart) / 1000;
    return seconds > 0 ? Math.round(done / seconds) : 0;
  };

  const closePhase = () => {
    if (phase !== undefined && phase !== 'done') times[phase] = (now() - phaseStart) / 1000;
    bar?.stop();
    bar = undefined;
  };

  const onProgress = ({ phase: next, done, total }: PublishProgress) => {
    if (next !== phase) {
      closePhase();
      phase = next;
      phaseStart = now();
      lastLine = -Infinity;
      if (!enabled || next === 'done') return;
      if (sink.isTTY === true && next === 'vrf' && total > 0) {
        bar = new SingleBar({
          stream: sink as unknown as NodeJS.WritableStream,
          format: `${PHASE_NAMES.vrf} |{bar}| {value}/{total} labels | {rate} labels/s | ETA {eta_formatted}`,
          barCompleteChar: '█',
          barIncompleteChar: '░',
          hideCursor: true,
          clearOnComplete: false,
          fps: 10,
        });
        bar.start(total, done, { rate: 0 });
        return;
      }
      sink.write(`publish: ${PHASE_NAMES[next]}${total > 0 ? ` (${total} ${unit(next)})` : ''}\n`);
      return;
    }
    if (!enabled) return;
    if (bar !== undefined) {
      bar.update(done, { rate: rate(done) });
    } else if (next === 'vrf' && sink.isTTY !== true && now() - lastLine >= 1000 && done > 0) {
      // plain output: at most a line a second
      lastLine = now();
      sink.write(`publish: ${PHASE_NAMES.vrf} ${done}/${total} (${rate(done)} labels/s)\n`);
    }
  };

  return {
    onProgress,
    finish() {
      closePhase();
      phase = undefined;
      return times;
    },
  };
}

function unit(phase: Phase): string {
  return phase === 'versions'
    ? 'updates'
    : phase === 'vrf'
      ? 'labels'
      : phase === 'tree' || phase === 'preload'
        ? 'leaves'
        : 'records';
}

/**
 * The phase times as one line.
 *
 * @example formatPhaseTimes({ vrf: 1.2, tree: 0.3 }) // 'vrf 1.20 s, tree 0.30 s'
 */
export function formatPhaseTimes(times: PhaseTimes): string {
  return Object.entries(times)
    .map(([name, seconds]) => `${name} ${seconds.toFixed(2)} s`)
    .join(', ');
}
