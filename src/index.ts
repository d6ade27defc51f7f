/**
 * `sessionkit`: the application API. Sessions (SessionManager), listing, search, prompt history,
 * following a session another process writes, and the types and errors these hand out (archives'
 * too). A storage comes from an adapter (`sessionkit/adapters/*`); writing one: `sessionkit/adapter-kit`.
 * Finding and redacting secrets: `sessionkit/secrets`; exporting and importing archives:
 * `sessionkit/archives`.
 *
 * @module sessionkit
 */
// Everything here is a deliberate choice: test/node/package-exports.test.ts lists it.

// Sessions
export { SessionManager, type SessionManagerOptions, type NewSessionOptions } from "./session/session-manager.js";
export type { TerminalBreadcrumb } from "./session/breadcrumbs.js";
export type { StoreLayout } from "./session/paths.js";
export type { StoreOwner } from "./session/store-owner.js";
export type { SessionDialect } from "./format/dialect.js";
export type { LineProblem, LineProblemKind } from "./format/jsonl-reader.js";
export { deleteSessionWithBlobs, type DeleteSessionOptions, type DeleteSessionResult } from "./session/delete-session.js";

// The session format: header, entries, messages, and what is built from them
export {
  CURRENT_SESSION_VERSION,
  type SessionHeader,
  type TextContent,
  type ImageContent,
  type AgentMessage,
  type MessageEntry,
  type ThinkingLevelChangeEntry,
  type ModelChangeEntry,
  type CompactionEntry,
  type BranchSummaryEntry,
  type CustomEntry,
  type CustomMessageEntry,
  type LabelEntry,
  type SessionInfoEntry,
  type TtsrInjectionEntry,
  type SessionInitEntry,
  type ModeChangeEntry,
  type LeafEntry,
  type KnownSessionEntry,
  type SessionEntry,
  type SessionTreeNode,
  type ContextModel,
  type SessionContext,
  type SessionInfo,
} from "./format/types.js";
export { buildSessionContext, type ContextOptions } from "./session/context.js";
export { buildTree } from "./session/tree.js";

// Listing
export { listSessions, listAllSessions, findMostRecentSession, type ListOptions } from "./session/listing.js";
export { getRecentSessions, type RecentSessionInfo, type RecentSessionsOptions } from "./session/recent.js";

// Search
export { searchSessions, type SearchOptions, type SearchHit } from "./search/search.js";
export { configureSqlite, type SqliteOptions } from "./search/sqlite.js";
export { SEARCH_SOURCES, DEFAULT_SOURCES, type SearchSource } from "./search/text.js";
export type { RefreshCounter as SearchIndexProgress } from "./search/search-index.js";

// Prompt history
export { PromptHistory, type PromptHistoryOptions } from "./history/prompt-history.js";
export { readHistoryDb, HistoryError, type HistoryEntry, type HistoryErrorCode } from "./history/history-db.js";

// Following a session file another process appends to
export { SessionTail, type FileExtent, type FollowOptions, type FollowUpdate, type SessionFollow, type TailRead } from "./session/follow.js";

// Archives: their options, summaries, limits and errors. The functions that read and write them
// (zip.js) are in sessionkit/archives: importing them here would put zip.js in the first load of
// every app built with code splitting (evanw/esbuild#3531). `export type` keeps these files' code
// out of this module.
export type { ExportOptions, ExportSessionSpec, ExportSummary } from "./archive/export.js";
export type { ConflictPolicy, ImportAction, ImportedSession, ImportOptions, ImportSummary, SessionFileInput } from "./archive/import.js";
export type { ArchiveProgress, ReadArchiveOptions, VerifySummary } from "./archive/verify.js";
export type { ArchiveRangeSource, ArchiveSource } from "./archive/zip-read.js";
export { DEFAULT_LIMITS, type ArchiveLimits } from "./archive/limits.js";
export { ArchiveError, isArchiveError, type ArchiveErrorCode } from "./archive/errors.js";

// Errors
export { SessionError, isSessionError, type SessionErrorCode } from "./errors.js";

// Storage: what an adapter hands the functions above (implementing one: sessionkit/adapter-kit)
export {
  StorageError,
  isStorageError,
  type StorageErrorCode,
  type StoragePort,
  type FileStat,
  type FileToWrite,
  type DirEntry,
  type ByteRange,
  type StorageLock,
  type StorageWatch,
} from "./port.js";
