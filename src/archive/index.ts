/** Archives: sessions and their blobs as a zip another machine, browser or person can import. */
export { ArchiveError, isArchiveError, type ArchiveErrorCode } from "./errors.js";
export { DEFAULT_LIMITS, type ArchiveLimits } from "./limits.js";
export {
  ARCHIVE_FORMAT,
  ARCHIVE_VERSION,
  MANIFEST_NAME,
  manifestSchema,
  parseManifest,
  type ArchiveManifest,
  type ManifestSession,
} from "./manifest.js";
export type { ArchiveSource } from "./zip-read.js";
export { verifyArchive, type ArchiveProgress, type ReadArchiveOptions, type VerifySummary } from "./verify.js";
export { exportArchive, type ExportOptions, type ExportSessionSpec, type ExportSummary } from "./export.js";
export {
  importArchive,
  importSessionFiles,
  type ConflictPolicy,
  type ImportAction,
  type ImportedSession,
  type ImportOptions,
  type ImportSummary,
  type SessionFileInput,
} from "./import.js";
export { findSessionPaths } from "./store-index.js";
