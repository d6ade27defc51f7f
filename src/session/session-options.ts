/**
 * SessionManager's options, as callers give them (SessionManagerOptions, NewSessionOptions) and
 * with their defaults filled in.
 */
import type { TerminalBreadcrumb } from "./breadcrumbs.js";
import type { StoreLayout } from "./paths.js";
import { ownerLayout, type StoreOwner } from "./store-owner.js";

/**
 * How a {@link SessionManager} finds, writes and reads its session file; every option has a default.
 * @category Sessions
 */
export interface SessionManagerOptions {
  /** Storage directory for new session files; the layout's (pi's `sessions/--<cwd>--`) by default. */
  sessionDir?: string;
  /**
   * The store's layout: where new sessions go, their dialect, how a session is named (see
   * StoreLayout). Default: the owner's layout, else "pi"; a session opened from a seed-003 file
   * defaults to "seed003".
   */
  layout?: StoreLayout;
  /**
   * Whose store this is, and so the form every file written keeps (see StoreOwner): images inline
   * for pi, indusagi, xcsh and the Python agent ("operator"), as blob refs for oh-my-pi ("omp")
   * and sessionkit's own stores. Default: "sessionkit" on ports no agent reads (IndexedDB, OPFS,
   * PostgreSQL, memory), else the agent of the layout ("pi" for "pi", "omp" for "omp",
   * "operator" for "seed003").
   */
  owner?: StoreOwner;
  /**
   * oh-my-pi's terminal breadcrumbs: `terminal-sessions/<terminal id>` names the session this
   * terminal used last, and `continueRecent` prefers it. Off unless given.
   */
  terminalBreadcrumb?: TerminalBreadcrumb;
  /** Never write: migrations happen in memory, appends throw "read-only". */
  readOnly?: boolean;
  /** pi's rule: write nothing until the session has an assistant message. Default true. */
  deferUntilAssistant?: boolean;
  /** "eager": blob refs become base64 on load; "lazy": refs stay until `resolveImages`. Default "eager". */
  resolveImages?: "eager" | "lazy";
  /**
   * oh-my-pi's persistence limits on disk: strings over 500,000 chars cut, `partialJson` and
   * `jsonlEvents` dropped (memory keeps them whole). Default: the owner's (on for oh-my-pi, xcsh
   * and sessionkit's stores; off for pi, indusagi and the Python agent, which write entries whole).
   */
  truncateLargeContent?: boolean;
  /** Take the storage's writer lock for each file written. Default true. */
  lock?: boolean;
  /** Non-fatal findings: skipped lines, missing blobs, repaired tails. */
  onWarning?: (message: string) => void;
  /**
   * How a file is read. "lazy" (the default): a message line whose bytes prove it a valid entry
   * (pi's field order) is kept unparsed, holding its id, parent, timestamp and role, and parsed when
   * first needed (getEntry, getEntries, getBranch, getTree, buildSessionContext for the messages it
   * returns); every result is the one "full" gives. "full": every line is parsed at open.
   */
  parse?: "lazy" | "full";
}

/**
 * Options of {@link SessionManager.newSession}.
 * @category Sessions
 */
export interface NewSessionOptions {
  /** The new session's id; a fresh UUID by default. */
  id?: string;
  /** The header's `parentSession`: the session this one continues (a storage path). */
  parentSession?: string;
}

/** SessionManagerOptions with their defaults, as the manager's parts read them. */
export type ResolvedOptions = Required<Omit<SessionManagerOptions, "sessionDir" | "onWarning" | "layout" | "owner" | "terminalBreadcrumb" | "truncateLargeContent">> & {
  onWarning: (message: string) => void;
  /** Undefined: the owner's. */
  truncateLargeContent: boolean | undefined;
};

/** The options with their defaults (those that depend on the file or the owner stay undefined). */
export function resolveOptions(options: SessionManagerOptions): ResolvedOptions {
  return {
    readOnly: options.readOnly ?? false,
    deferUntilAssistant: options.deferUntilAssistant ?? true,
    resolveImages: options.resolveImages ?? "eager",
    truncateLargeContent: options.truncateLargeContent,
    lock: options.lock ?? true,
    onWarning: options.onWarning ?? (() => {}),
    parse: options.parse ?? "lazy",
  };
}

/** The layout of a store: given, else the owner's, else pi's. */
export function layoutOf(options: Pick<SessionManagerOptions, "layout" | "owner">): StoreLayout {
  return options.layout ?? (options.owner && ownerLayout(options.owner)) ?? "pi";
}
