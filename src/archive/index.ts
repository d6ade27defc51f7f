/** Archives: sessions and their blobs as a zip another machine, browser or person can import. */
export { ArchiveError, isArchiveError, type ArchiveErrorCode } from "./errors.js";
export type { ArchiveLimits } from "./limits.js";
export { verifyArchive } from "./verify.js";
export { exportArchive, type ExportOptions, type ExportSessionSpec, type ExportSummary } from "./export.js";
export { importArchive, importSessionFiles, type ImportSummary } from "./import.js";
