/**
 * @akd-ts/directory: the key directory. `Directory` publishes epochs and serves proofs;
 * `ReadOnlyDirectory` serves proofs from a store another process publishes to.
 */

export { Directory } from './directory.js';
export type {
  Update,
  WritableDirectoryOptions,
  PublishOptions,
  PublishProgress,
} from './directory.js';
export { ReadOnlyDirectory } from './read-only-directory.js';
export type { DirectoryOptions } from './read-only-directory.js';
export { DEFAULT_LIMITS } from './limits.js';
export type { PublishLimits } from './limits.js';
export {
  Parallelism,
  DEFAULT_PARALLELISM,
  NO_PARALLELISM,
  parallelDegree,
  parallelLevels,
} from './parallelism.js';
export type { ParallelismConfig, ParallelismOption } from './parallelism.js';
export { InMemoryVrfKeyStore } from './vrf/key-store.js';
export {
  MARKER_HORIZON,
  StoredVrfProofs,
  VRF_PROOFS_COMPLETE,
  VRF_PROOFS_SETTING,
  allFutureMarkers,
  publishProofJobs,
} from './vrf/stored-proofs.js';
export { BACKFILL_CURSOR_SETTING } from './vrf/backfill.js';
export { VRF_PROOFS_THROUGH_SETTING } from './vrf/epoch-proofs.js';
export { VRF_PUBLIC_KEY_SETTING } from './vrf/key-check.js';
export type { BackfillOptions } from './vrf/backfill.js';
export type { VrfKeyStore } from './vrf/key-store.js';
export {
  LocalVrfEngine,
  WorkerVrfEngine,
  createVrfEngine,
  availableThreads,
} from './vrf/engine.js';
export type { LabelsListener, VrfEngine, VrfJob, VrfLabelProof, VrfOptions } from './vrf/engine.js';
export { nativeVrfAvailable, vrfKeyBackend, wasmVrfAvailable } from './vrf/backend.js';
export { nativeVrfWhy } from './vrf/native.js';
export type { VrfBackendChoice, VrfBackendName, VrfKeyBackend } from './vrf/backend.js';
export { Azks } from './azks.js';
export { checkStoredDirectory } from './check/stored-directory.js';
export { collectStoreVersions, oldestServedEpoch } from './version-collection.js';
export type {
  StoredDirectoryCheckOptions,
  StoredDirectoryReport,
} from './check/stored-directory.js';
export type { InsertOptions } from './azks.js';
export { AuditBlobCatalog, exportAuditBlobs, stepRoots } from './audit-blobs.js';
export { createAuditBlobVerifier } from './audit-verifier.js';
export { WorkersUnavailableError } from './worker-pool.js';
export type { AuditBlobVerifier } from './audit-verifier.js';
export type {
  AuditBlobCatalogOptions,
  AuditBlobDirectory,
  AuditBlobListingEntry,
  AuditBlobListingPage,
  ExportAuditBlobsOptions,
  ExportedAuditBlob,
} from './audit-blobs.js';
export { StoredAuditBlobs } from './audit-store/read.js';
export { AuditBlobCache } from './audit-store/cache.js';
export type { AuditBlobCacheStats } from './audit-store/cache.js';
export type {
  StoredAuditBlobsSource,
  StoredListingEntry,
  StoredListingPage,
  StoredRange,
} from './audit-store/read.js';
