export * from "./port.js";
export * from "./errors.js";
export * from "./format/types.js";
export { checkEntry, sessionHeaderSchema, agentMessageSchema } from "./format/schema.js";
export { scanJsonl, splitGluedObjects, type JsonlScan, type JsonlTail, type LineProblem, type LineProblemKind } from "./format/jsonl-reader.js";
export { readSessionFile, encodeJsonl, type LoadedSessionFile, type SessionFileRead } from "./format/session-file.js";
export { migrateRecords, headerVersion } from "./format/migrate.js";
export { createEntryId, createSessionId } from "./format/ids.js";
export { BlobStore, BLOB_REF_PREFIX, parseBlobRef, sha256Hex } from "./blobs/blob-store.js";
export { externalizeImages, resolveImages, collectBlobRefs, EXTERNALIZE_MIN_BASE64 } from "./blobs/images.js";
export { base64ToBytes, bytesToBase64 } from "./blobs/base64.js";
export { buildSessionContext, pathToRoot } from "./session/context.js";
export { buildTree } from "./session/tree.js";
export { prepareValueForPersistence, truncateForPersistence, MAX_PERSIST_CHARS, TRUNCATION_NOTICE } from "./session/persist-transform.js";
export { sessionDirFor, sessionFileName, SESSIONS_DIR } from "./session/paths.js";
export { listSessions, listAllSessions, findMostRecentSession, CATALOG_DIR, type ListOptions } from "./session/listing.js";
export { SessionManager, type SessionManagerOptions, type NewSessionOptions } from "./session/session-manager.js";
export { deleteSessionWithBlobs, type DeleteSessionOptions, type DeleteSessionResult } from "./session/delete-session.js";
export {
  ArchiveError,
  isArchiveError,
  type ArchiveErrorCode,
  DEFAULT_LIMITS,
  type ArchiveLimits,
  ARCHIVE_FORMAT,
  ARCHIVE_VERSION,
  MANIFEST_NAME,
  manifestSchema,
  parseManifest,
  type ArchiveManifest,
  type ManifestSession,
  type ArchiveSource,
  verifyArchive,
  type ArchiveProgress,
  type ReadArchiveOptions,
  type VerifySummary,
  exportArchive,
  type ExportOptions,
  type ExportSessionSpec,
  type ExportSummary,
  importArchive,
  importSessionFiles,
  type ConflictPolicy,
  type ImportAction,
  type ImportedSession,
  type ImportOptions,
  type ImportSummary,
  type SessionFileInput,
  findSessionPaths,
} from "./archive/index.js";
