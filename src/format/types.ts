/**
 * The kit's canonical session records: pi's shapes, with oh-my-pi's (omp) and seed 003's entry
 * types in one union. Files of another dialect are decoded into these (format/dialect.ts). Fields
 * not named here are kept as they are (entries round-trip unchanged), hence the open
 * `[key: string]: unknown` on each.
 */

export const CURRENT_SESSION_VERSION = 3;

export interface SessionHeader {
  type: "session";
  version?: number;
  id: string;
  timestamp: string;
  cwd?: string;
  parentSession?: string;
  /** omp */
  title?: string;
  [key: string]: unknown;
}

export interface TextContent {
  type: "text";
  text: string;
  [key: string]: unknown;
}

export interface ImageContent {
  type: "image";
  /** base64, or "blob:sha256:<hex>" when externalized */
  data: string;
  mimeType: string;
  [key: string]: unknown;
}

/** An AgentMessage: user, assistant, toolResult, bashExecution, custom… Kept as written. */
export interface AgentMessage {
  role: string;
  content?: unknown;
  timestamp?: number;
  [key: string]: unknown;
}

interface EntryBase {
  id: string;
  /** null for a root; absent in a few real files (treated as a root, as pi does). */
  parentId: string | null;
  timestamp: string;
  [key: string]: unknown;
}

export interface MessageEntry extends EntryBase {
  type: "message";
  message: AgentMessage;
}

export interface ThinkingLevelChangeEntry extends EntryBase {
  type: "thinking_level_change";
  thinkingLevel: string;
}

/** pi writes {provider, modelId}; omp writes {model: "provider/modelId", role?}. */
export interface ModelChangeEntry extends EntryBase {
  type: "model_change";
  provider?: string;
  modelId?: string;
  model?: string;
  role?: string;
}

export interface CompactionEntry extends EntryBase {
  type: "compaction";
  summary: string;
  firstKeptEntryId: string;
  tokensBefore: number;
  details?: unknown;
  fromHook?: boolean;
  /** omp */
  shortSummary?: string;
  preserveData?: unknown;
  fromExtension?: boolean;
}

export interface BranchSummaryEntry extends EntryBase {
  type: "branch_summary";
  fromId: string;
  summary: string;
  details?: unknown;
  fromHook?: boolean;
  fromExtension?: boolean;
}

export interface CustomEntry extends EntryBase {
  type: "custom";
  customType: string;
  data?: unknown;
}

export interface CustomMessageEntry extends EntryBase {
  type: "custom_message";
  customType: string;
  content: string | Array<TextContent | ImageContent>;
  display: boolean;
  details?: unknown;
}

export interface LabelEntry extends EntryBase {
  type: "label";
  targetId: string;
  /** Absent, "" or null (seed 003 may write null) clears the label. */
  label?: string | null;
}

export interface SessionInfoEntry extends EntryBase {
  type: "session_info";
  name?: string;
}

/** omp */
export interface TtsrInjectionEntry extends EntryBase {
  type: "ttsr_injection";
  injectedRules: string[];
}

/** omp */
export interface SessionInitEntry extends EntryBase {
  type: "session_init";
  systemPrompt?: string;
  task?: string;
  tools?: string[];
  outputSchema?: unknown;
}

/** omp */
export interface ModeChangeEntry extends EntryBase {
  type: "mode_change";
  mode: string;
  data?: unknown;
}

/**
 * seed 003: a durable navigation pointer. Loading it moves the leaf to `targetId`; it is not the
 * leaf itself. Its parent is the leaf it moved away from.
 */
export interface LeafEntry extends EntryBase {
  type: "leaf";
  targetId: string;
}

export type KnownSessionEntry =
  | MessageEntry
  | ThinkingLevelChangeEntry
  | ModelChangeEntry
  | CompactionEntry
  | BranchSummaryEntry
  | CustomEntry
  | CustomMessageEntry
  | LabelEntry
  | SessionInfoEntry
  | TtsrInjectionEntry
  | SessionInitEntry
  | ModeChangeEntry
  | LeafEntry;

export type SessionEntry = KnownSessionEntry;

export interface SessionTreeNode {
  entry: SessionEntry;
  children: SessionTreeNode[];
  label?: string;
  labelTimestamp?: string;
}

export interface ContextModel {
  provider: string;
  modelId: string;
}

/** What `buildSessionContext` returns: pi's shape; omp's extra state only when omp entries exist. */
export interface SessionContext {
  messages: AgentMessage[];
  thinkingLevel: string;
  model: ContextModel | null;
  omp?: {
    /** role → "provider/modelId" */
    models: Record<string, string>;
    injectedTtsrRules: string[];
    mode: string;
    modeData?: unknown;
  };
}

/** pi's SessionInfo, as `SessionManager.list()` returns it. */
export interface SessionInfo {
  path: string;
  id: string;
  cwd: string;
  name?: string;
  /** oh-my-pi's listing title: the header's `title`, else the last compaction's `shortSummary`. */
  title?: string;
  parentSessionPath?: string;
  created: Date;
  modified: Date;
  messageCount: number;
  /** The first user message; in a listing without `withText`, its first 4,096 characters. */
  firstMessage: string;
  /** Every user and assistant text, joined by spaces: only when listed with `withText: true`. */
  allMessagesText?: string;
}
