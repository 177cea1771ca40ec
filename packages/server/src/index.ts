/**
 * @akd-ts/server: the HTTP API over a key directory. `buildApp(deps)` builds the fastify app
 * (tested with inject); `startServer` listens, polls for other writers' epochs and shuts down
 * gracefully. The README documents the routes, JSON shapes, error catalogue and metrics.
 */

export { buildApp } from './app.js';
export { startServer, stopOnSignals } from './listen.js';
export type { ListenOptions, RunningServer } from './listen.js';
export {
  DEFAULT_AUDIT_BLOB_CACHE_BYTES,
  DEFAULT_HTTP_TIMEOUTS,
  DEFAULT_SERVER_LIMITS,
} from './options.js';
export type { AppDeps, HttpTimeouts, ServerLimits } from './options.js';
export {
  ERROR_CATALOGUE,
  HTTP_ERROR_CODES,
  SERVER_ERROR_CODES,
  HttpError,
  errorResponse,
} from './errors.js';
export type { CatalogueEntry, ErrorBody, HttpErrorCode, ServerErrorCode } from './errors.js';
export { createLogger, REDACTED_PATHS } from './logging.js';
export { negotiate, PROTOBUF, JSON_TYPE } from './negotiate.js';
export type { Representation } from './negotiate.js';
export { EPOCH_HEADER, ROOT_HASH_HEADER } from './context.js';
export { REPLICATION_LAG_HEADER } from './replication.js';
export { PROOF_COUNT_HEADER, sizeDelimited } from './routes/lookup.js';
export { loadPostgresDriver, loadSqliteDriver, missingDriverMessage } from './drivers.js';
export type { StoreKind } from './drivers.js';
export { routeSchemas, type RouteName, type RouteSchema } from './schemas/routes.js';
export { demoEpochs, demoKey, DEMO_PEOPLE } from './demo.js';
export type { EpochJson } from './routes/epoch.js';
export type { PublishJson } from './publish/run.js';
export { parseUpdates, type PublishBody } from './publish/body.js';
export type { PublishBodyLimits } from './publish/body.js';
export { buildWriterApp, WRITER_PUBLISH_PATH } from './writer/writer-app.js';
export type { WriterAppOptions } from './writer/writer-app.js';
export { WriterClient } from './writer/writer-client.js';
export type { WriterAnswer, WriterState } from './writer/writer-client.js';
export { ConcurrencyLimiter } from './limiter.js';
export type { LimiterOptions } from './limiter.js';
export type {
  JsonBytes,
  ClaimedVersion,
  LookupJson,
  BatchLookupJson,
  HistoryJson,
  AuditJson,
} from './json.js';
export { startCluster } from './cluster/launcher.js';
export { DEFAULT_PROOF_HEAP_MB } from './cluster/proof-heap.js';
export { proofCache } from './cluster/proof-role.js';
export { KEY_VARIABLES } from './cluster/cluster-child.js';
export type { ClusterOptions, RunningCluster } from './cluster/launcher.js';
export type { ServeConfig, WitnessesConfig, WriterView } from './cluster/messages.js';
export {
  DEFAULT_MEMORY_PROOF_CACHE_BYTES,
  DEFAULT_PROOF_CACHE_BYTES,
  DEFAULT_WRITER_RECYCLE_MB,
  DEFAULT_WRITER_SLEEP_MS,
  PROOF_SQLITE_CACHE_KIB,
  PROOF_SQLITE_MMAP_BYTES,
} from './cluster/messages.js';
export { buildWitnessApp } from './witness/plexi-api.js';
export type { WitnessApiOptions, WitnessKey } from './witness/plexi-api.js';
export { WitnessRelay, witnessRelayOf } from './witness/relay.js';
export type { RelayedWitness, WitnessRelayOptions } from './witness/relay.js';
