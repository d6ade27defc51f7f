/**
 * Opening a session for viewing, built so that a 100,000-entry file never blocks the page: the
 * core's streaming reader (scanJsonl) reads it in 1 MiB ranges; each record is checked
 * (sessionHeaderSchema, checkEntry) as it arrives and the entries of each range join the
 * SessionModel before the next range is read, after a yield to the event loop. The core's
 * readSessionFile does the same checks, but after the whole scan, in one task (300 ms for 100,000
 * entries here); SessionManager adds indexes the viewer does not use. Both dialects are read as
 * readSessionFile reads them (seed 003's records decoded, `completeSeed003Entry`); pi files older
 * than version 3 are migrated as the core migrates them (all records at once, as it needs them).
 *
 * Following: `followSession` reads what was appended since (from the last complete line), on each
 * `watch` notification when the port has `watch`, else by polling its size.
 */
import { CURRENT_SESSION_VERSION, type SessionEntry, type SessionHeader } from "../../../src/format/types.js";
import { DialectError, EXPECTED_HEADERS, completeSeed003Entry, decodeRecord, detectDialect, type SessionDialect } from "../../../src/format/dialect.js";
import { SessionError } from "../../../src/errors.js";
import { checkEntry } from "../../../src/format/schema.js";
import { decodeHeader } from "../../../src/format/session-file.js";
import { migrateRecords } from "../../../src/format/migrate.js";
import { parentDir, type StoragePort } from "../../../src/port.js";
import { scanJsonl, type LineProblem } from "../../../src/format/jsonl-reader.js";
import { yieldToEventLoop } from "../model/filters.js";
import { SessionModel } from "../model/session-model.js";

export interface LoadedSession {
  storage: StoragePort;
  path: string;
  model: SessionModel;
  /** Lines not read as written (skipped or recovered), by line. */
  problems: LineProblem[];
  migratedFrom: number | null;
  /** The file's dialect: appended records are decoded from it. */
  dialect: SessionDialect;
  /** Bytes up to the end of the last complete line read: where following continues. */
  completeBytes: number;
}

export interface LoadOptions {
  /** Bytes read so far of the file's size at the start. */
  onProgress?: (bytesRead: number, totalBytes: number) => void;
  /** Range size per read (a range's records are parsed and checked in one task). */
  rangeBytes?: number;
}

const RANGE_BYTES = 1 << 20;

export async function loadSession(storage: StoragePort, path: string, options: LoadOptions = {}): Promise<LoadedSession> {
  const total = (await storage.stat(path))?.size ?? 0;
  let header = null as SessionHeader | null;
  let dialect: SessionDialect = "pi";
  let previousTimestamp: unknown;
  let model = null as SessionModel | null;
  let legacy = null as Record<string, unknown>[] | null;
  let batch: SessionEntry[] = [];
  const problems: LineProblem[] = [];
  let bytesRead = 0;

  const accept = (record: Record<string, unknown>, line: number) => {
    const entryId = typeof record.id === "string" ? { entryId: record.id } : {};
    if (detectDialect(record) !== null) {
      problems.push({ line, kind: "extra-header", message: `line ${line}: a second session header (left by an old fork bug)` });
      return;
    }
    let entry = record;
    if (dialect !== "pi") {
      try {
        entry = decodeRecord(dialect, record);
      } catch (error) {
        if (!(error instanceof DialectError)) throw error;
        problems.push({ line, kind: "invalid-entry", message: `line ${line}: invalid entry: ${error.message}`, ...entryId });
        return;
      }
      previousTimestamp = completeSeed003Entry(entry, previousTimestamp);
    }
    const check = checkEntry(entry);
    if (check.ok) batch.push(entry as unknown as SessionEntry);
    else problems.push({ line, kind: "invalid-entry", message: `line ${line}: invalid entry: ${check.problem}`, ...entryId });
  };

  // Between ranges: the entries read so far join the model, then the page gets its turn.
  const pacedPort = readOnlyView(storage, async (p, range) => {
    if (model && batch.length > 0) {
      model.append(batch);
      batch = [];
    }
    await yieldToEventLoop();
    const bytes = await storage.read(p, range);
    bytesRead += bytes?.length ?? 0;
    options.onProgress?.(Math.min(bytesRead, total), total);
    return bytes;
  });

  const scan = await scanJsonl(
    pacedPort,
    path,
    (record, line) => {
      if (legacy) {
        legacy.push(record);
        return;
      }
      if (!header) {
        const found = detectDialect(record);
        const parsed = found === null ? null : decodeHeader(found, record);
        if (found === null || !parsed?.success) {
          const what = typeof record.type === "string" ? `first record has type ${JSON.stringify(record.type)}` : "first record is not a session header";
          throw new SessionError("not-a-session", `${path} is not a session file: ${what} (expected ${EXPECTED_HEADERS})`, { path });
        }
        dialect = found;
        header = parsed.data;
        previousTimestamp = header.timestamp;
        if (dialect !== "pi" || header.version === CURRENT_SESSION_VERSION) model = new SessionModel(header);
        else legacy = [record];
        return;
      }
      accept(record, line);
    },
    { chunkSize: options.rangeBytes ?? RANGE_BYTES },
  );
  if (!scan) throw new SessionError("entry-not-found", `${path}: no such session file`, { path });
  if (!header) {
    const problem = scan.problems[0]?.message ?? "the file is empty";
    throw new SessionError("not-a-session", `${path} is not a session file: ${problem}`, { path });
  }
  problems.push(...scan.problems);
  let migratedFrom: number | null = null;
  if (legacy) {
    migratedFrom = migrateRecords(legacy);
    model = new SessionModel(legacy[0] as SessionHeader);
    // Line numbers of migrated records are not tracked (migration may rewrite them): 0.
    for (const record of legacy.slice(1)) accept(record, 0);
  }
  model!.append(batch);
  problems.sort((a, b) => a.line - b.line);
  return { storage, path, model: model!, problems, migratedFrom, dialect, completeBytes: scan.completeBytes };
}

/** A port that reads through `read` and refuses every write (the viewer never writes a session). */
function readOnlyView(storage: StoragePort, read: StoragePort["read"]): StoragePort {
  const refuse = async () => {
    throw new SessionError("read-only", "the viewer reads sessions; it does not write them");
  };
  return { kind: storage.kind, read, stat: (p) => storage.stat(p), list: (d) => storage.list(d), append: refuse, write: refuse, truncate: refuse, remove: refuse };
}

export interface SessionFollower {
  stop(): Promise<void>;
}

export interface FollowOptions {
  /** New entries, in file order. */
  onAppend: (entries: SessionEntry[]) => void;
  /** The file shrank or was replaced: what is shown is no longer a prefix of it. */
  onReplaced?: () => void;
  onError?: (error: unknown) => void;
  /** Polling period when the port has no `watch`. */
  pollMs?: number;
}

/** Reads entries appended to a loaded session from now on. */
export async function followSession(session: LoadedSession, options: FollowOptions): Promise<SessionFollower> {
  const { storage, path, model } = session;
  let stopped = false;
  let running: Promise<void> | null = null;
  let again = false;

  const readNew = async () => {
    const stat = await storage.stat(path);
    if (stopped) return;
    if (!stat || stat.size < session.completeBytes) {
      options.onReplaced?.();
      return;
    }
    if (stat.size === session.completeBytes) return;
    const entries: SessionEntry[] = [];
    let previousTimestamp: unknown = model.stats.lastTimestamp;
    const scan = await scanJsonl(
      storage,
      path,
      (record) => {
        if (detectDialect(record) !== null) return;
        let entry = record;
        if (session.dialect !== "pi") {
          try {
            entry = decodeRecord(session.dialect, record);
          } catch {
            return; // not an entry of this dialect: skipped, as loading skips it
          }
          previousTimestamp = completeSeed003Entry(entry, previousTimestamp);
        }
        if (checkEntry(entry).ok) entries.push(entry as unknown as SessionEntry);
      },
      { offset: session.completeBytes },
    );
    if (stopped || !scan) return;
    session.completeBytes = scan.completeBytes;
    const added = model.append(entries);
    if (added.length > 0) options.onAppend(added);
  };

  // One read at a time; a notification during a read schedules one more.
  const check = () => {
    if (stopped) return;
    if (running) {
      again = true;
      return;
    }
    running = readNew()
      .catch((error: unknown) => options.onError?.(error))
      .finally(() => {
        running = null;
        if (again) {
          again = false;
          check();
        }
      });
  };

  let unwatch: () => Promise<void>;
  if (storage.watch) {
    // Watched at its folder (the contract watches directories); the folder itself means "something below changed".
    const dir = parentDir(path);
    const watch = await storage.watch(dir, (changed) => {
      if (changed === path || changed === dir) check();
    });
    unwatch = () => watch.close();
  } else {
    const timer = setInterval(check, options.pollMs ?? 1000);
    unwatch = async () => clearInterval(timer);
  }
  check(); // whatever arrived between loading and watching
  return {
    async stop() {
      stopped = true;
      await unwatch();
      await running;
    },
  };
}
