export * from "./port.js";
export * from "./errors.js";
export * from "./format/types.js";
export { checkEntry, sessionHeaderSchema, agentMessageSchema } from "./format/schema.js";
export { scanJsonl, splitGluedObjects, type JsonlScan, type JsonlTail, type LineSpan, type LineProblem, type LineProblemKind } from "./format/jsonl-reader.js";
export { readSessionFile, encodeJsonl, encodeSessionFile, decodeHeader, type LoadedSessionFile, type SessionFileRead } from "./format/session-file.js";
export { decodeRecord, encodeRecord, detectDialect, dialectName, completeSeed003Entry, DialectError, SEED003_HEADER_TYPE, type SessionDialect } from "./format/dialect.js";
export { migrateRecords, headerVersion } from "./format/migrate.js";
export { createEntryId, createSessionId } from "./format/ids.js";
export { BlobStore, BLOB_REF_PREFIX, parseBlobRef, sha256Hex } from "./blobs/blob-store.js";
export { externalizeImages, resolveImages, collectBlobRefs, EXTERNALIZE_MIN_BASE64 } from "./blobs/images.js";
export { base64ToBytes, bytesToBase64 } from "./blobs/base64.js";
export { buildSessionContext, pathToRoot, lastLeafId, type ContextOptions } from "./session/context.js";
export { buildTree } from "./session/tree.js";
export { prepareValueForPersistence, truncateForPersistence, MAX_PERSIST_CHARS, TRUNCATION_NOTICE } from "./session/persist-transform.js";
export {
  sessionDirFor,
  sessionFileName,
  seed003FileName,
  storeSessionDir,
  storeSessionFileName,
  layoutDialect,
  sameCwd,
  SESSIONS_DIR,
  STORE_LAYOUTS,
  type StoreLayout,
} from "./session/paths.js";
export { getRecentSessions, formatTimeAgo, sanitizeName, type RecentSessionInfo, type RecentSessionsOptions } from "./session/recent.js";
export { breadcrumbPath, readBreadcrumb, writeBreadcrumb, BREADCRUMB_DIR, type TerminalBreadcrumb } from "./session/breadcrumbs.js";
export { sideFolderOf } from "./session/relocate.js";
export { listSessions, listAllSessions, findMostRecentSession, CATALOG_DIR, type ListOptions } from "./session/listing.js";
export { searchSessions, type SearchOptions, type SearchHit } from "./search/search.js";
export { configureSqlite, type SqliteOptions } from "./search/sqlite.js";
export { SEARCH_SOURCES, DEFAULT_SOURCES, type SearchSource } from "./search/text.js";
export { SEARCH_DIR, type RefreshCounter as SearchIndexProgress } from "./search/search-index.js";
export { PromptHistory, PROMPT_HISTORY_FILE, clampLimit, type PromptHistoryOptions } from "./history/prompt-history.js";
export { readHistoryDb, HistoryError, HISTORY_DB, type HistoryEntry, type HistoryErrorCode } from "./history/history-db.js";
export { SessionManager, type SessionManagerOptions, type NewSessionOptions } from "./session/session-manager.js";
export { SessionTail, type FileExtent, type FollowOptions, type FollowUpdate, type SessionFollow, type TailRead } from "./session/follow.js";
export { deleteSessionWithBlobs, type DeleteSessionOptions, type DeleteSessionResult } from "./session/delete-session.js";
export * from "./archive/index.js";
