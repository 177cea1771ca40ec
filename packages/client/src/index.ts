/**
 * @akd-ts/client: a browser-safe client of an akd-ts server that holds state. It remembers
 * the last head it verified per directory and the versions it saw per label, proves every new
 * head extends the last (append-only proof or a quorum of witness signatures), refuses stale
 * heads, monitors owned and contacts' labels, and turns what it catches into evidence anyone
 * can check offline. The file store is in `@akd-ts/client/node`.
 */

export { AkdClient, labelBytes } from './client.js';
export type { ClientOptions, HeadUpdate, LabelInput } from './client.js';
export type { LabelCheck, VerifiedLookup } from './monitor.js';
export { MemoryStore, WebStorageStore } from './store.js';
export type { StateStore, WebStorageLike } from './store.js';
export { loadDirectoryState, saveDirectoryState } from './state.js';
export type { DirectoryState, Head, HeadBasis, LabelState, VerifiedHead } from './state.js';
export { EVIDENCE_FORMAT, EvidenceError, isEvidenceError } from './evidence.js';
export type { Evidence, EvidenceHead, EvidenceKind } from './evidence.js';
export { verifyEvidence } from './verify-evidence.js';
export type { EvidenceVerdict } from './verify-evidence.js';
export { checkPolicy, readWitnesses } from './witness.js';
export { plexiCodec } from './plexi.js';
export type {
  ValidWitness,
  WitnessCodec,
  WitnessPolicy,
  WitnessReading,
  WitnessSignatureLike,
} from './witness.js';
export { verifyRange, proveAppendOnly } from './append-only.js';
export type { AppendOnlyRange, AppendOnlyResult } from './append-only.js';
export type { FetchLike } from './http.js';
