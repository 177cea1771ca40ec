/**
 * @akd-ts/storage: the storage seam of akd-ts. Drivers implement `Database`; the directory
 * reads and writes through a `StorageManager`.
 */

export {
  NodeType,
  AZKS_KEY,
  nodeKey,
  keyOf,
  fullKey,
  recordFullKey,
  recordSize,
  selectValueState,
  userVersionsOf,
  nodeAtEpoch,
} from './records.js';
export type {
  TreeNode,
  AzksRecord,
  TreeNodeRecord,
  ValueStateRecord,
  DbRecord,
  RecordKind,
  AzksKey,
  TreeNodeKey,
  ValueStateKey,
  StorageKey,
  RecordFor,
  ValueStateFlag,
} from './records.js';
export type {
  AuditBlobInfo,
  AuditBlobRecord,
  Database,
  DbSetState,
  NodeRecordBytes,
  NodeLayout,
  StoredRecordTotals,
  UserStateAndVrfProofs,
  UserVersion,
  WriterLock,
  WriterLockStatus,
} from './database.js';
export { WriterFencedError, isWriterFenced } from './errors.js';
export { replicationStatusOf } from './replication.js';
export type { ReplicationAware, ReplicationStatus } from './replication.js';
export { MemoryDatabase } from './memory-database.js';
export type { MemoryDatabaseOptions } from './memory-database.js';
export { checkDeletable, recordByWalk, versionAt, versionsToWrite } from './node-versions.js';
export type { VersionLookup } from './node-versions.js';
export { PackedMemoryDatabase } from './packed-memory-database.js';
export type { PackedMemoryOptions } from './packed-memory-database.js';
export {
  ByteReader,
  ByteWriter,
  CHILD_BYTES,
  LABEL_BYTES,
  NO_CHILD_EPOCH,
  NODE_FIELD,
  RECORD_KIND,
  RECORD_LATEST,
  nodeBytesLength,
  nodeHashAt,
  readRecord,
  skipRecord,
  treeNodeBodyLength,
  u64Number,
  writeRecord,
} from './record-codec.js';
export {
  readNodeRecords,
  readWalkNodes,
  readsNodeBytes,
  readWalkNodeBytes,
  copyOfEpoch,
  alignNodes,
  codecLabelCount,
  codecLabels,
  codecLabelBytes,
  recordsOfBytes,
  foundRecordsAnswer,
  joinedRecordsAnswer,
  nodeRecordBytes,
} from './node-reads.js';
export { checkAuditBlob, storableEpochs } from './audit-blob-checks.js';
export {
  NONCE_BYTES,
  VRF_PROOF_BYTES,
  checkOwnVrfProofKeys,
  stateThenVrfProofs,
  checkVrfProofKey,
  checkVrfProofRecord,
  labelChars,
  vrfProofKeyBytes,
  vrfProofKeyFromBytes,
  vrfProofMapKey,
  vrfProofRecordOf,
  vrfProofValueBytes,
} from './vrf-proofs.js';
export type { VrfProofKey, VrfProofRecord } from './vrf-proofs.js';
export {
  VRF_PROOF_ROW_BYTES,
  decodeVrfProofEntries,
  encodeVrfProofRows,
  VrfProofPicker,
} from './vrf-proof-rows.js';
export type { VrfProofRow } from './vrf-proof-rows.js';
export { TimedCache } from './timed-cache.js';
export type { CacheOptions } from './timed-cache.js';
export { DEFAULT_COMMIT_CHUNK, DEFAULT_LARGE_COMMIT, StorageManager } from './storage-manager.js';
export type { StorageManagerOptions, StorageMetrics, RecordReader } from './storage-manager.js';
export { Transaction } from './transaction.js';
export type { CommitLog, NodeRecordBatch } from './transaction.js';
export { InstrumentedDatabase } from './instrumented-database.js';
export type { InstrumentOptions, ReadStats } from './instrumented-database.js';
export { readEpochSetting } from './epoch-setting.js';
export {
  COLLECTED_THROUGH_SETTING,
  collectNodeVersions,
  collectedThrough,
} from './version-collection.js';
export type { Collected, CollectOptions, CollectionProgress } from './version-collection.js';
