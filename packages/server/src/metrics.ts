/**
 * Prometheus metrics of one app, in a registry of its own (so several apps in one process,
 * as in tests, never collide): publish duration, size and phases, proofs served, errors by
 * code, request latency, the latest epoch and the storage layer's counters. Label values are
 * bounded sets (route patterns, proof kinds, catalogue codes): never a user's label.
 */

import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { AuditBlobCache, ReadOnlyDirectory } from '@akd-ts/directory';
import type { PublishJson } from './publish/run.js';
import type { ConcurrencyLimiter } from './limiter.js';
import type { CloseReason, RequestGate } from './request-gate.js';

/** The kinds of proof the server builds. */
export type ProofKind = 'lookup' | 'history' | 'audit';

export interface AppMetrics {
  registry: Registry;
  requestDuration: Histogram<'route' | 'method' | 'status'>;
  proofsServed: Counter<'kind'>;
  errors: Counter<'code'>;
  publishDuration: Histogram;
  publishUpdates: Histogram;
  publishPhase: Histogram<'phase'>;
  /** Connections the server closed, by reason (request-gate.ts). */
  connectionsClosed: Counter<'reason'>;
  /** Records a publish's duration, size and phases from its answer. */
  observePublish(json: PublishJson): void;
  /** Exports the request gate's and the heavy-route limiter's running and waiting counts. */
  trackAdmission(gate: RequestGate, heavy: ConcurrencyLimiter): void;
}

/**
 * A count this process keeps running (it only grows), exported as a counter read at scrape
 * time, so that rate() works on it.
 */
function runningCounter(registry: Registry, name: string, help: string, read: () => number) {
  new Counter({
    name,
    help: `${help}, since the process started`,
    registers: [registry],
    collect() {
      this.reset();
      this.inc(read());
    },
  });
}

/**
 * Creates the metrics of an app over `directory`.
 *
 * @example
 * ```ts
 * const metrics = createMetrics(directory);
 * await metrics.registry.metrics(); // the Prometheus text format
 * ```
 */
export function createMetrics(
  directory: ReadOnlyDirectory,
  processMetrics = true,
  auditBlobCache?: AuditBlobCache,
): AppMetrics {
  const registry = new Registry();
  // Node's process metrics under their standard names (process_cpu_seconds_total,
  // nodejs_eventloop_lag_seconds, ...), which dashboards and alerts already know
  if (processMetrics) {
    collectDefaultMetrics({ register: registry });
    // prom-client also exports the sums of nodejs_active_{handles,requests,resources} as
    // gauges named *_total, the suffix of counters; sum() over the per-type gauges gives them
    for (const kind of ['handles', 'requests', 'resources']) {
      registry.removeSingleMetric(`nodejs_active_${kind}_total`);
    }
  }
  const requestDuration = new Histogram({
    name: 'akd_http_request_duration_seconds',
    help: 'HTTP request latency by route pattern, method and status',
    labelNames: ['route', 'method', 'status'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10],
    registers: [registry],
  });
  const proofsServed = new Counter({
    name: 'akd_proofs_served_total',
    help: 'Proofs served, by kind (a batch lookup counts each label)',
    labelNames: ['kind'] as const,
    registers: [registry],
  });
  const errors = new Counter({
    name: 'akd_errors_total',
    help: 'Error responses, by error code (see the error catalogue)',
    labelNames: ['code'] as const,
    registers: [registry],
  });
  const publishDuration = new Histogram({
    name: 'akd_publish_duration_seconds',
    help: 'Duration of publishes through POST /v1/publish',
    buckets: [0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 1800],
    registers: [registry],
  });
  const publishUpdates = new Histogram({
    name: 'akd_publish_updates',
    help: 'Updates per publish (its size)',
    buckets: [1, 10, 100, 1_000, 10_000, 100_000, 1_000_000],
    registers: [registry],
  });
  const publishPhase = new Histogram({
    name: 'akd_publish_phase_seconds',
    help: 'Time per publish phase: versions (reading current versions), vrf, preload (reading the paths), tree (inserting), commit',
    labelNames: ['phase'] as const,
    buckets: [0.001, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300],
    registers: [registry],
  });
  new Gauge({
    name: 'akd_epoch',
    help: 'The latest epoch this server serves',
    registers: [registry],
    async collect() {
      try {
        this.set(Number((await directory.getEpochHash()).epoch));
      } catch {
        // a scrape must not fail because the store is briefly unreachable
      }
    },
  });
  const storage = directory.storage.metrics;
  const counters = [
    ['db_gets', 'Single-record database reads', () => storage.dbGets],
    ['db_batch_gets', 'Batched database reads', () => storage.dbBatchGets],
    ['db_batch_keys', 'Keys asked for by batched database reads', () => storage.dbBatchKeys],
    ['cache_hits', 'Reads answered by the record cache', () => storage.cacheHits],
    ['db_records_written', 'Records written to the database', () => storage.dbRecordsWritten],
  ] as const;
  for (const [name, help, read] of counters) {
    runningCounter(registry, `akd_storage_${name}_total`, help, read);
  }

  if (auditBlobCache !== undefined) {
    const blobCounters = [
      ['hits', 'Audit blobs answered from memory', () => auditBlobCache.stats().hits],
      ['misses', 'Audit blobs read from the store', () => auditBlobCache.stats().misses],
    ] as const;
    for (const [name, help, read] of blobCounters) {
      runningCounter(registry, `akd_audit_blob_cache_${name}_total`, help, read);
    }
    new Gauge({
      name: 'akd_audit_blob_cache_bytes',
      help: 'Bytes of audit blobs held in memory',
      registers: [registry],
      collect() {
        this.set(auditBlobCache.stats().bytes);
      },
    });
  }

  const connectionsClosed = new Counter<'reason'>({
    name: 'akd_http_connections_closed_total',
    help: 'Connections the server closed: pipelining (too many unanswered requests), stalled (answers not read), body_timeout (a body too slow)',
    labelNames: ['reason'] as const,
    registers: [registry],
  });
  for (const reason of ['pipelining', 'stalled', 'body_timeout'] satisfies CloseReason[]) {
    connectionsClosed.inc({ reason }, 0);
  }
  const trackAdmission = (gate: RequestGate, heavy: ConcurrencyLimiter) => {
    const gauges = [
      [
        'akd_http_requests_running',
        'Requests running (probes not counted)',
        () => gate.stats.active,
      ],
      [
        'akd_http_requests_waiting',
        'Requests waiting for the process to run them',
        () => gate.stats.waiting,
      ],
      ['akd_http_connections', 'Open connections with requests seen', () => gate.stats.connections],
      [
        'akd_heavy_requests_running',
        'Heavy requests (audits, blobs, histories, batch lookups) holding a slot',
        () => heavy.active,
      ],
      ['akd_heavy_requests_waiting', 'Heavy requests waiting for a slot', () => heavy.queued],
    ] as const;
    for (const [name, help, read] of gauges) {
      new Gauge({
        name,
        help,
        registers: [registry],
        collect() {
          this.set(read());
        },
      });
    }
  };

  const observePublish = (json: PublishJson) => {
    publishDuration.observe(json.seconds);
    publishUpdates.observe(json.updates);
    for (const [phase, seconds] of Object.entries(json.phases)) {
      publishPhase.observe({ phase }, seconds);
    }
  };

  return {
    registry,
    requestDuration,
    proofsServed,
    errors,
    publishDuration,
    publishUpdates,
    publishPhase,
    connectionsClosed,
    observePublish,
    trackAdmission,
  };
}
