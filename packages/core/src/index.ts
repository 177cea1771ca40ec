/**
 * @akd-ts/core: everything a client or auditor needs to check facebook/akd proofs, with no
 * Node dependency. Byte layouts follow the akd specification section by section.
 */

// Importing core starts compiling the WebAssembly VRF module (loader.ts), so a page has it by
// its first verification: the one side effect package.json's sideEffects declares to bundlers.
import './vrf/wasm/loader.js';

export {
  toHex,
  fromHex,
  concatBytes,
  bytesEqual,
  compareBytes,
  be32,
  be64,
  i2osp,
  utf8,
  fromUtf8,
  isUtf8,
  isWellFormedText,
  assertU64,
} from './bytes.js';
export { appendAll } from './arrays.js';
export { AkdError, isAkdError, ERROR_CODES } from './errors.js';
export { describeLabel } from './label-text.js';
export type { AkdErrorCode, AkdErrorOptions } from './errors.js';
export {
  NodeLabel,
  LEAF_LEN,
  Direction,
  PrefixOrdering,
  compareNodeLabels,
  orderingToDirection,
} from './node-label.js';
export { VersionFreshness, BaseConfiguration } from './config/configuration.js';
export type { Configuration, ConfigurationName } from './config/configuration.js';
export { WhatsAppV1Configuration } from './config/whatsapp-v1.js';
export { ExperimentalConfiguration, EXAMPLE_DOMAIN_LABEL } from './config/experimental.js';
export { configurationByName, CONFIGURATION_NAMES } from './config/index.js';
export { treeHasherOf } from './config/tree-hasher.js';
export { alloc32, carvedCopy, carvedUtf8 } from './slab.js';
export { packedLabelOrder } from './label-order.js';
export type { TreeHasher } from './config/tree-hasher.js';
export type {
  AkdLabel,
  AkdValue,
  Digest,
  AzksElement,
  SiblingProof,
  MembershipProof,
  NonMembershipProof,
  LookupProof,
  UpdateProof,
  HistoryProof,
  SingleAppendOnlyProof,
  AppendOnlyProof,
  VerifyResult,
  EpochHash,
  HistoryParams,
  HistoryVerificationParams,
} from './types.js';
export { getMarkerVersions, markerVersion } from './markers.js';
export { verifyMembership, verifyNonMembership, membershipRootValue } from './verify/membership.js';
export { lookupVerify } from './verify/lookup.js';
export type { PublicKeyInput } from './verify/lookup.js';
export { keyHistoryVerify } from './verify/history.js';
export { auditVerify, verifyConsecutiveAppendOnly, rootHashOfElements } from './verify/audit.js';
export { appendOnlyStepRoots } from './verify/append-only-step.js';
export { elementArrays, packAzksElements } from './verify/element-arrays.js';
export type { ElementArrays } from './verify/element-arrays.js';
export type { ElementsInPlace } from './proto/append-only-step.js';
export type { AuditVerifyResult } from './verify/audit.js';
export {
  encodeLookupProof,
  decodeLookupProof,
  encodeHistoryProof,
  decodeHistoryProof,
  encodeAppendOnlyProof,
  decodeAppendOnlyProof,
  encodeSingleAppendOnlyProof,
  encodeSingleAppendOnlyProofArrays,
  encodeSingleAppendOnlyProofInPlace,
  decodeSingleAppendOnlyProof,
  encodeMembershipProof,
  decodeMembershipProof,
  encodeNonMembershipProof,
  decodeNonMembershipProof,
} from './proto/codec.js';
export { nodeLabelToMessage, azksElementToMessage } from './proto/to-message.js';
export { nodeLabelFromMessage, azksElementFromMessage } from './proto/from-message.js';
export {
  VrfPublicKey,
  VrfSecretKey,
  VRF_KEY_LENGTH,
  VRF_PROOF_LENGTH,
  VRF_OUTPUT_LENGTH,
  vrfPublicKeyFromSecret,
  vrfProve,
  vrfEvaluate,
  vrfVerify,
  vrfProofToHash,
  initVrfWasm,
  setVrfArithmetic,
  vrfArithmetic,
  vrfWasmAvailable,
  vrfWasmError,
} from './vrf/ecvrf.js';
export type { VrfArithmetic, VrfArithmeticChoice } from './vrf/ecvrf.js';
export {
  nodeLabelFromVrfOutput,
  verifyVrfLabel,
  vrfNodeLabel,
  vrfLabelProof,
} from './vrf/vrf-label.js';
// Building blocks for alternative VRF backends (a native library must give identical bytes).
export {
  challengeInput,
  encodeToCurveInput,
  expandSecretKeyBytes,
  isRejectedNonCanonical,
  proofToHashInput,
  reducedSecretScalars,
} from './vrf/ecvrf.js';
export type { ReducedSecretScalars } from './vrf/ecvrf.js';
// Audit blobs and the auditor (spec 16): names, blobs, chains, listings.
export { formatAuditBlobName, parseAuditBlobName } from './audit/blob-name.js';
export type { AuditBlobName } from './audit/blob-name.js';
export {
  AUDIT_BLOB_NAMINGS,
  auditBlobOfStep,
  blobEpochOfStep,
  decodeAuditBlob,
  generateAuditBlobs,
  otherNaming,
  stepStartOfBlob,
  verifyAuditBlob,
} from './audit/blob.js';
export type {
  AuditBlob,
  AuditBlobNaming,
  VerifiedAuditBlob,
  VerifyAuditBlobOptions,
} from './audit/blob.js';
export { AuditChain, verifyAuditChain } from './audit/chain.js';
export type { AuditChainOptions, AuditChainResult, AuditHead } from './audit/chain.js';
export { walkAuditBlobs } from './audit/walk.js';
export type { AuditBlobSource, WalkEnd, WalkOptions, WalkResult } from './audit/walk.js';
export {
  blobUrl,
  listingUrl,
  parseListBucketResult,
  renderListBucketResult,
} from './audit/listing.js';
export type { ListingPage, ListingQuery, ListingResponse } from './audit/listing.js';
export { epochsInKeyOrder } from './audit/listing-order.js';
export type { KeyOrderQuery } from './audit/listing-order.js';
// Witnesses in Plexi's format: the signed message, its encodings, signatures and their JSON.
export {
  encodeSignatureMessage,
  isPlexiCiphersuite,
  parseWitnessSignature,
  PLEXI_CIPHERSUITES,
  signWitness,
  verifyWitnessSignature,
  witnessKeyId,
  witnessPublicKey,
  witnessSignatureToJson,
} from './witness/index.js';
export type { PlexiCiphersuite, SignatureMessage, WitnessSignature } from './witness/index.js';
