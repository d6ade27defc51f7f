/**
 * The kit's canonical session records: pi's shapes, with oh-my-pi's (omp) and seed 003's entry
 * types in one union. Files of another dialect are decoded into these (format/dialect.ts). Fields
 * not named here are kept as they are (entries round-trip unchanged), hence the open
 * `[key: string]: unknown` on each.
 */

/**
 * The session format version pi writes today; older files are migrated to it on load.
 * @category Session format
 */
export const CURRENT_SESSION_VERSION = 3;

/**
 * The first line of a session file: who the session is and where it belongs.
 * @category Session format
 */
export interface SessionHeader {
  /** Always "session" (the marker of a session file). */
  type: "session";
  /** The format version; absent means 1 (see {@link CURRENT_SESSION_VERSION}). */
  version?: number;
  /** The session's id. */
  id: string;
  /** When the session was created (ISO 8601). */
  timestamp: string;
  /** The working directory the session belongs to. */
  cwd?: string;
  /** The session this one was forked or branched from (a storage path; oh-my-pi: its id). */
  parentSession?: string;
  /** omp */
  title?: string;
  [key: string]: unknown;
}

/**
 * A text block of a message's `content`.
 * @category Session format
 */
export interface TextContent {
  /** Always "text". */
  type: "text";
  /** The text itself. */
  text: string;
  [key: string]: unknown;
}

/**
 * An image block of a message's `content`.
 * @category Session format
 */
export interface ImageContent {
  /** Always "image". */
  type: "image";
  /** base64, or `"blob:sha256:<hex>"` when externalized */
  data: string;
  /** The image's media type, e.g. "image/png". */
  mimeType: string;
  [key: string]: unknown;
}

/**
 * An AgentMessage: user, assistant, toolResult, bashExecution, custom… Kept as written.
 * @category Session format
 */
export interface AgentMessage {
  /** Who speaks: "user", "assistant", "toolResult", "bashExecution", "custom", ... */
  role: string;
  /** A string, or an array of blocks (text, images, tool calls...) as the agent wrote them. */
  content?: unknown;
  /** When the message was made, in milliseconds since the epoch. */
  timestamp?: number;
  [key: string]: unknown;
}

interface EntryBase {
  /** The entry's id, unique in its session (pi's: 8 hex digits). */
  id: string;
  /** null for a root; absent in a few real files (treated as a root, as pi does). */
  parentId: string | null;
  /** When the entry was written (ISO 8601). */
  timestamp: string;
  [key: string]: unknown;
}

/**
 * One message of the conversation (user, assistant, tool result, ...).
 * @category Session format
 */
export interface MessageEntry extends EntryBase {
  /** Always "message". */
  type: "message";
  /** The message, kept as the agent wrote it. */
  message: AgentMessage;
}

/**
 * The thinking level the model uses from this entry on.
 * @category Session format
 */
export interface ThinkingLevelChangeEntry extends EntryBase {
  /** Always "thinking_level_change". */
  type: "thinking_level_change";
  /** The level ("off", "low", "medium", "high", ...). */
  thinkingLevel: string;
}

/**
 * pi writes {provider, modelId}; omp writes {model: "provider/modelId", role?}.
 * @category Session format
 */
export interface ModelChangeEntry extends EntryBase {
  /** Always "model_change". */
  type: "model_change";
  /** pi: the model's provider, e.g. "anthropic". */
  provider?: string;
  /** pi: the model's id at its provider. */
  modelId?: string;
  /** omp: "provider/modelId". */
  model?: string;
  /** omp: the role the model is set for (e.g. "default"); see `appendRoleModelChange`. */
  role?: string;
}

/**
 * A summary that stands in for the conversation before `firstKeptEntryId` in the model's context.
 * @category Session format
 */
export interface CompactionEntry extends EntryBase {
  /** Always "compaction". */
  type: "compaction";
  /** The summary the model gets in place of the compacted entries. */
  summary: string;
  /** The first entry kept as it is; the path before it is replaced by `summary`. */
  firstKeptEntryId: string;
  /** Context tokens before the compaction. */
  tokensBefore: number;
  /** The agent's or extension's own data about the compaction, kept as written. */
  details?: unknown;
  /** True when a hook (not the agent) made the compaction. */
  fromHook?: boolean;
  /** omp */
  shortSummary?: string;
  /** omp: data an extension keeps across the compaction. */
  preserveData?: unknown;
  /** omp: true when an extension made the compaction. */
  fromExtension?: boolean;
}

/**
 * A summary of the branch left behind when the conversation went back to `fromId`.
 * @category Session format
 */
export interface BranchSummaryEntry extends EntryBase {
  /** Always "branch_summary". */
  type: "branch_summary";
  /** The entry the conversation branched from. */
  fromId: string;
  /** The summary of the abandoned branch, given to the model. */
  summary: string;
  /** The agent's or extension's own data, kept as written. */
  details?: unknown;
  /** True when a hook made the summary. */
  fromHook?: boolean;
  /** omp: true when an extension made the summary. */
  fromExtension?: boolean;
}

/**
 * An extension's own data in the session; never part of the model's context.
 * @category Session format
 */
export interface CustomEntry extends EntryBase {
  /** Always "custom". */
  type: "custom";
  /** The extension's name for this kind of entry. */
  customType: string;
  /** The extension's data, kept as written. */
  data?: unknown;
}

/**
 * A message an extension adds to the conversation (and, in pi, to the model's context).
 * @category Session format
 */
export interface CustomMessageEntry extends EntryBase {
  /** Always "custom_message". */
  type: "custom_message";
  /** The extension's name for this kind of message. */
  customType: string;
  /** The message: text, or text and image blocks. */
  content: string | Array<TextContent | ImageContent>;
  /** Whether the agent's UI shows the message. */
  display: boolean;
  /** The extension's own data, kept as written. */
  details?: unknown;
}

/**
 * Sets (or clears) the label of another entry.
 * @category Session format
 */
export interface LabelEntry extends EntryBase {
  /** Always "label". */
  type: "label";
  /** The entry the label is on. */
  targetId: string;
  /** Absent, "" or null (seed 003 may write null) clears the label. */
  label?: string | null;
}

/**
 * Names the session (the last one in the file wins).
 * @category Session format
 */
export interface SessionInfoEntry extends EntryBase {
  /** Always "session_info". */
  type: "session_info";
  /** The session's name; absent or "" clears it. */
  name?: string;
}

/**
 * omp: rules oh-my-pi injected into the model's context at this point.
 * @category Session format
 */
export interface TtsrInjectionEntry extends EntryBase {
  /** Always "ttsr_injection". */
  type: "ttsr_injection";
  /** The rules injected at this point. */
  injectedRules: string[];
}

/**
 * omp: how a session (or a subagent's task) was started.
 * @category Session format
 */
export interface SessionInitEntry extends EntryBase {
  /** Always "session_init". */
  type: "session_init";
  /** The system prompt the session started with. */
  systemPrompt?: string;
  /** The task the session was started for. */
  task?: string;
  /** The names of the tools it was given. */
  tools?: string[];
  /** The schema its output must follow, kept as written. */
  outputSchema?: unknown;
}

/**
 * omp: the agent's mode from this entry on.
 * @category Session format
 */
export interface ModeChangeEntry extends EntryBase {
  /** Always "mode_change". */
  type: "mode_change";
  /** The mode's name. */
  mode: string;
  /** The mode's own data, kept as written. */
  data?: unknown;
}

/**
 * seed 003: a durable navigation pointer. Loading it moves the leaf to `targetId`; it is not the
 * leaf itself. Its parent is the leaf it moved away from.
 * @category Session format
 */
export interface LeafEntry extends EntryBase {
  /** Always "leaf". */
  type: "leaf";
  /** The entry the leaf moves to. */
  targetId: string;
}

/**
 * Every entry type sessionkit knows, as a union to narrow on `type`.
 * @category Session format
 */
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

/**
 * One line of a session after the header. Entries of types sessionkit does not know are kept too
 * (and written back unchanged); they arrive typed as one of these, so check `type` before use.
 * @category Session format
 */
export type SessionEntry = KnownSessionEntry;

/**
 * One entry of a session's tree, as `getTree()` returns it.
 * @category Session format
 */
export interface SessionTreeNode {
  /** The entry itself. */
  entry: SessionEntry;
  /** Entries whose parent this one is, oldest first. */
  children: SessionTreeNode[];
  /** The entry's current label, if it has one. */
  label?: string;
  /** When that label was set (ISO 8601). */
  labelTimestamp?: string;
}

/**
 * The model in effect at the leaf, as {@link SessionContext.model} gives it.
 * @category Session format
 */
export interface ContextModel {
  /** The model's provider, e.g. "anthropic". */
  provider: string;
  /** The model's id at its provider. */
  modelId: string;
}

/**
 * What `buildSessionContext` returns: pi's shape; omp's extra state only when omp entries exist.
 * @category Session format
 */
export interface SessionContext {
  /** The messages the model gets, from the root to the leaf, with compactions and summaries applied. */
  messages: AgentMessage[];
  /** The thinking level in effect at the leaf ("off" when none was set). */
  thinkingLevel: string;
  /** The model in effect at the leaf; null when none was set. */
  model: ContextModel | null;
  /** oh-my-pi's state at the leaf; only when oh-my-pi entries are on the path. */
  omp?: {
    /** role → "provider/modelId" */
    models: Record<string, string>;
    /** The TTSR rules injected on the path. */
    injectedTtsrRules: string[];
    /** The mode in effect. */
    mode: string;
    /** That mode's data. */
    modeData?: unknown;
  };
}

/**
 * pi's SessionInfo, as `SessionManager.list()` returns it.
 * @category Listing
 */
export interface SessionInfo {
  /** The session file's storage path. */
  path: string;
  /** The session's id. */
  id: string;
  /** The working directory the session belongs to ("" when the header has none). */
  cwd: string;
  /** The session's name (its last `session_info` entry), when it has one. */
  name?: string;
  /** oh-my-pi's listing title: the header's `title`, else the last compaction's `shortSummary`. */
  title?: string;
  /** The header's `parentSession`: the session this one was forked or branched from. */
  parentSessionPath?: string;
  /** When the session was created (the header's timestamp). */
  created: Date;
  /** The last user or assistant message's time; the header's (or the file's mtime) when there is none. */
  modified: Date;
  /** How many message entries the file holds (every branch). */
  messageCount: number;
  /** The first user message; in a listing without `withText`, its first 4,096 characters. */
  firstMessage: string;
  /** Every user and assistant text, joined by spaces: only when listed with `withText: true`. */
  allMessagesText?: string;
}
