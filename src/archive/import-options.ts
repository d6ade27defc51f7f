/** What an import takes and what it reports (importArchive, importSessionFiles). */
import type { StoragePort } from "../port.js";
import type { StoreLayout } from "../session/paths.js";
import type { StoreOwner } from "../session/store-owner.js";
import type { ReadArchiveOptions } from "./verify.js";


/**
 * What to do with a session whose id is already stored:
 * - "auto": identical → skip; the incoming one extends the stored one (the stored entries are a
 *   prefix of it, by id) → append the new entries; the stored one already holds all incoming
 *   entries → skip; diverged → import as a fork.
 * - "skip": keep the stored one.
 * - "replace": overwrite the stored file with the incoming one.
 * - "fork": import as a fork, whatever the relation.
 * A fork is a new session (new id, new file) whose header `parentSession` is the stored path. Its
 * id is derived from that path and the incoming bytes, so importing the same thing again finds
 * the fork and skips it.
 * @category Archives
 */
export type ConflictPolicy = "auto" | "skip" | "replace" | "fork";

/**
 * How {@link sessionkit/archives!importArchive | importArchive} and
 * {@link sessionkit/archives!importSessionFiles | importSessionFiles} import; every option has a default.
 * @category Archives
 */
export interface ImportOptions extends ReadArchiveOptions {
  /** What to do with a session whose id is already stored; default "auto" (see {@link ConflictPolicy}). */
  onConflict?: ConflictPolicy;
  /**
   * The layout of the store imported into: where a new session file goes and its name (see
   * StoreLayout). Default: the owner's, else "pi".
   */
  layout?: StoreLayout;
  /**
   * Whose store it is (see StoreOwner), so the form sessions are written in: an agent's store gets
   * the agent's dialect and images (inline for pi, indusagi, xcsh and the Python agent, blob refs
   * for oh-my-pi); sessionkit's own stores keep each session's dialect and move large images to
   * `blobs/`. Default as SessionManager's: "sessionkit" on ports no agent reads (IndexedDB, OPFS,
   * PostgreSQL, memory), else the layout's agent.
   */
  owner?: StoreOwner;
  /**
   * A store the imported sessions' blob refs also resolve in (its `blobs/`), after the archive's
   * blobs and before the target store's: the store plain files were copied out of.
   */
  sourceBlobs?: StoragePort;
  /** Validate and plan, write nothing: the summary says what would happen. */
  dryRun?: boolean;
}

/**
 * What an import did with one session: wrote a new file, skipped it (already stored), appended
 * its new entries to the stored one, overwrote the stored one, or stored it as a fork.
 * @category Archives
 */
export type ImportAction = "created" | "skipped" | "extended" | "replaced" | "forked";

/**
 * One session of an import, as {@link ImportSummary.sessions} lists it.
 * @category Archives
 */
export interface ImportedSession {
  /** The archive member or file name the session came from. */
  source: string;
  /** The id as stored (a fork's new id). */
  id: string;
  /** What the import did with it. */
  action: ImportAction;
  /** The storage path written, or the stored session matched when skipped. */
  path: string;
  /** Entries of the incoming session. */
  entries: number;
  /** Entries this import adds to storage. */
  newEntries: number;
  /** For forks: the stored session the incoming one diverged from. */
  parentSession?: string;
  /** Why it took that action, in a sentence (e.g. "diverged from the stored session: imported as a fork"). */
  reason: string;
}

/**
 * What an import did (or, with `dryRun`, would do).
 * @category Archives
 */
export interface ImportSummary {
  /** True when nothing was written (`dryRun`). */
  dryRun: boolean;
  /** Every incoming session and what became of it, in the input's order. */
  sessions: ImportedSession[];
  /** The blobs (images) the imported sessions bring. */
  blobs: {
    /** Blobs written to the store. */
    written: number;
    /** Blobs the store held already (not written again). */
    present: number;
    /** Bytes of the blobs written. */
    bytesWritten: number;
  };
  /** Blobs that imported sessions reference but neither the archive nor the store holds. */
  missingBlobs: string[];
  /** Repairs and migrations done on the way, and missing blobs, one line each. */
  warnings: string[];
  /** Set when the archive was exported redacted: the secrets replaced, per kind (its manifest's). */
  redacted?: Record<string, number>;
}
