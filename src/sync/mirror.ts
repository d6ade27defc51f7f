/**
 * Mirroring the session files of one store into another (`sessionkit sync`): what a file gained
 * since the last pass travels as an append; a file whose bytes changed before that point (a
 * migration, a title rewritten in place, a file that shrank) travels whole, as one atomic `write`;
 * the blobs its lines reference travel before the lines do (content-addressed: one already there
 * is left alone). The source is only read (`read`, `stat`, `list`): an agent writing it meets no
 * lock and no file of ours.
 *
 * Only whole lines travel: a line still being written (no newline yet) goes on the next pass, so
 * the target never ends in a torn line that a later rewrite of it would have to mend.
 *
 * A file that changed since the last pass is checked against the target's own bytes: the last 4
 * KiB the target holds, against the source's bytes at the same offsets, and the first 4 KiB too
 * (against the target's, or, when the target is as long as the state says, against the hash the
 * state kept of the source's). When they agree the target is a prefix of the source and gets the
 * rest; else the file is copied whole. So a pass killed at any point (before or after an append,
 * with or without its state saved) is repaired by the next one, and the copy ends byte-equal to
 * the source's complete lines. The state ({@link MirrorState}) spares the files that did not
 * change any reading, and the others one read of the target.
 */
import { BLOB_REF_PREFIX, sha256Hex } from "../blobs/blob-store.js";
import { joinPath, type FileStat, type StoragePort } from "../port.js";
import { sessionDirListings } from "../session/listing.js";
import { SESSIONS_DIR } from "../session/paths.js";

/** What a pass left of one file: enough to tell next time, without reading, that nothing changed. */
interface MirrorFileState {
  /** Bytes the target holds (the source's complete lines up to there). */
  size: number;
  /** The source's size and mtime when it was read. */
  sourceSize: number;
  sourceMtimeMs: number;
  /** SHA-256 (hex) of the first 4 KiB of those bytes (all of them, when fewer). */
  head: string;
}

/** What the passes into one target remember (JSON-serializable). */
export interface MirrorState {
  /** By storage path (the same in source and target). */
  files: Record<string, MirrorFileState>;
  /** Blobs a line referenced that the source did not have then: looked for again on each pass. */
  missingBlobs: string[];
}

/** A new state: nothing mirrored yet. */
export function emptyMirrorState(): MirrorState {
  return { files: {}, missingBlobs: [] };
}

/** What one pass did. */
export interface MirrorCounts {
  /** Session files of the source the pass looked at (all of them, or the paths it was given). */
  sessions: number;
  /** Copied for the first time. */
  created: number;
  /** Extended by an append. */
  appended: number;
  /** Copied whole again: the target was not a prefix of the source. */
  rewritten: number;
  /** Session files the source no longer has, so removed from the target. */
  removed: number;
  /** Session bytes written (appended or written whole). */
  bytes: number;
  /** Lines (entries and headers) among those bytes. */
  entries: number;
  /** Blobs copied, and their bytes. */
  blobs: number;
  blobBytes: number;
}

export interface MirrorOptions {
  /** What earlier passes into this target left; the pass updates it in place. */
  state: MirrorState;
  /**
   * Only these session files (a watch's changes); default every session file of the source and of
   * the target (whose files the source no longer has are removed: the target is this source's alone).
   */
  paths?: readonly string[];
  /** `done` of `total` session files looked at. */
  onProgress?: (done: number, total: number) => void;
  /** A file's entry in the state changed (the caller may save the state). */
  onStateChange?: () => void;
  /** Something that did not stop the pass: a blob a line references is missing, a source file vanished mid-read. */
  onWarning?: (message: string) => void;
}

/** Bytes compared at each end of what the target holds. */
const WINDOW_BYTES = 4096;
/** An append is cut into pieces of about this size, each ending at a line's end. */
const APPEND_PIECE_BYTES = 4 << 20;
/** Files mirrored at once (a database target answers each call over the network). */
const CONCURRENCY = 4;
const NEWLINE = 0x0a;
const BLOBS_DIR = "blobs";
const BLOB_REF = new RegExp(`${BLOB_REF_PREFIX.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}([0-9a-f]{64})`, "g");

/** True for a path a session file may have in a store: `sessions/<file>.jsonl` or `sessions/<project>/<file>.jsonl`. */
export function isSessionFilePath(path: string): boolean {
  const parts = path.split("/");
  return parts[0] === SESSIONS_DIR && (parts.length === 2 || parts.length === 3) && parts[parts.length - 1]!.endsWith(".jsonl");
}

/** Mirrors the session files of `source` (and the blobs they reference) into `target`. */
export async function mirrorSessions(source: StoragePort, target: StoragePort, options: MirrorOptions): Promise<MirrorCounts> {
  return new MirrorPass(source, target, options).run();
}

class MirrorPass {
  private readonly counts: MirrorCounts = { sessions: 0, created: 0, appended: 0, rewritten: 0, removed: 0, bytes: 0, entries: 0, blobs: 0, blobBytes: 0 };
  /** Each blob's copy in this pass (one per blob, however many files reference it at once). */
  private readonly blobCopies = new Map<string, Promise<void>>();
  private readonly state: MirrorState;

  constructor(
    private readonly source: StoragePort,
    private readonly target: StoragePort,
    private readonly options: MirrorOptions,
  ) {
    this.state = options.state;
  }

  async run(): Promise<MirrorCounts> {
    const retried = this.state.missingBlobs.splice(0);
    for (const hash of retried) await this.copyBlob(hash, { warn: false });
    if (retried.length > 0) this.options.onStateChange?.();
    const files = this.options.paths ? await this.statPaths(this.options.paths) : await this.listAll();
    this.counts.sessions = files.filter((file) => file.source !== null).length;
    let done = 0;
    await forEachLimited(files, CONCURRENCY, async (file) => {
      await this.mirrorFile(file);
      this.options.onProgress?.(++done, files.length);
    });
    return this.counts;
  }

  /** Every session file of the source and of the target, with its stat in each. */
  private async listAll(): Promise<FilePair[]> {
    const [sourceDirs, targetDirs] = await Promise.all([sessionDirListings(this.source), sessionDirListings(this.target)]);
    const pairs = new Map<string, FilePair>();
    for (const { dir, files } of targetDirs) {
      for (const file of files) pairs.set(joinPath(dir, file.name), { path: joinPath(dir, file.name), source: null, target: file, targetKnown: true });
    }
    for (const { dir, files } of sourceDirs) {
      for (const file of files) {
        const path = joinPath(dir, file.name);
        pairs.set(path, { path, source: file, target: pairs.get(path)?.target ?? null, targetKnown: true });
      }
    }
    // Files the state knows that neither side has now: only their entries go.
    for (const path of Object.keys(this.state.files)) if (!pairs.has(path)) pairs.set(path, { path, source: null, target: null, targetKnown: true });
    return [...pairs.values()];
  }

  private async statPaths(paths: readonly string[]): Promise<FilePair[]> {
    const unique = [...new Set(paths)].filter(isSessionFilePath);
    return Promise.all(unique.map(async (path) => ({ path, source: await this.source.stat(path), target: null, targetKnown: false })));
  }

  private async mirrorFile(file: FilePair): Promise<void> {
    const { path, source } = file;
    const known = this.state.files[path];
    const target = file.targetKnown ? file.target : await this.target.stat(path);
    if (source === null) {
      if (target) {
        await this.target.remove(path);
        this.counts.removed++;
      }
      if (known) {
        delete this.state.files[path];
        this.options.onStateChange?.();
      }
      return;
    }
    if (known && target && known.sourceSize === source.size && known.sourceMtimeMs === source.mtimeMs && known.size === target.size) return;

    let outcome: "created" | "appended" | "rewritten" | null;
    let size: number;
    let head: Uint8Array;
    const held = target ? await this.heldPrefix(path, target.size, source.size, known) : null;
    if (target && held) {
      const rest = await this.completeLines(path, target.size, source.size);
      if (rest === null) return this.options.onWarning?.(`${path}: gone from the source while it was read`);
      await this.appendLines(path, rest);
      outcome = rest.length > 0 ? "appended" : null;
      size = target.size + rest.length;
      head = held.length < WINDOW_BYTES && rest.length > 0 ? concatBytes(held, rest.subarray(0, WINDOW_BYTES - held.length)) : held;
    } else {
      const whole = await this.completeLines(path, 0, source.size);
      if (whole === null) return this.options.onWarning?.(`${path}: gone from the source while it was read`);
      // A file without a complete line yet (an agent is writing its header) comes on a later pass.
      if (whole.length === 0 && !target) return;
      await this.copyBlobsOf(whole);
      await this.target.write(path, whole);
      this.count(whole);
      outcome = target ? "rewritten" : "created";
      size = whole.length;
      head = whole.subarray(0, WINDOW_BYTES);
    }
    if (outcome) this.counts[outcome]++;
    // The hash of what was copied (not of the source now: it may have changed since).
    this.state.files[path] = { size, sourceSize: source.size, sourceMtimeMs: source.mtimeMs, head: await sha256Hex(head) };
    this.options.onStateChange?.();
  }

  /**
   * The source's first bytes (up to 4 KiB) when the target's `held` bytes are the source's first
   * bytes, as far as their first and last 4 KiB tell; null when the target must be copied whole.
   */
  private async heldPrefix(path: string, held: number, sourceSize: number, known: MirrorFileState | undefined): Promise<Uint8Array | null> {
    if (held > sourceSize) return null;
    if (held === 0) return new Uint8Array();
    /** The source's bytes of the range when the target's are the same; else null. */
    const sameRange = async (offset: number, length: number) => {
      const [ours, theirs] = await Promise.all([this.target.read(path, { offset, length }), this.source.read(path, { offset, length })]);
      return ours !== null && theirs !== null && ours.length === length && sameBytes(ours, theirs) ? theirs : null;
    };
    if (held <= 2 * WINDOW_BYTES) return (await sameRange(0, held))?.subarray(0, WINDOW_BYTES) ?? null;
    const [head, tail] = await Promise.all([
      // The target as the last pass left it: its first bytes are those whose hash the state kept.
      known?.size === held ? this.sourceHeadIf(path, known.head) : sameRange(0, WINDOW_BYTES),
      sameRange(held - WINDOW_BYTES, WINDOW_BYTES),
    ]);
    return tail ? head : null;
  }

  /** The source's first 4 KiB when their hash is `hash`; else null. */
  private async sourceHeadIf(path: string, hash: string): Promise<Uint8Array | null> {
    const head = await this.source.read(path, { offset: 0, length: WINDOW_BYTES });
    return head && (await sha256Hex(head)) === hash ? head : null;
  }

  /** The source's bytes from `from` up to its last complete line (before `size`); null when the file is gone. */
  private async completeLines(path: string, from: number, size: number): Promise<Uint8Array | null> {
    if (size <= from) return (await this.source.stat(path)) ? new Uint8Array() : null;
    const bytes = await this.source.read(path, { offset: from, length: size - from });
    if (!bytes) return null;
    return bytes.subarray(0, bytes.lastIndexOf(NEWLINE) + 1);
  }

  /** Appends `lines` in pieces that each end a line, the blobs of each piece first. */
  private async appendLines(path: string, lines: Uint8Array): Promise<void> {
    for (let start = 0; start < lines.length; ) {
      let end = Math.min(lines.length, start + APPEND_PIECE_BYTES);
      if (end < lines.length) {
        const lineEnd = lines.indexOf(NEWLINE, end - 1);
        end = lineEnd < 0 ? lines.length : lineEnd + 1;
      }
      const piece = lines.subarray(start, end);
      await this.copyBlobsOf(piece);
      await this.target.append(path, piece);
      this.count(piece);
      start = end;
    }
  }

  private count(bytes: Uint8Array): void {
    this.counts.bytes += bytes.length;
    for (let at = bytes.indexOf(NEWLINE); at >= 0; at = bytes.indexOf(NEWLINE, at + 1)) this.counts.entries++;
  }

  private async copyBlobsOf(bytes: Uint8Array): Promise<void> {
    const text = new TextDecoder().decode(bytes);
    if (!text.includes(BLOB_REF_PREFIX)) return;
    for (const match of new Set([...text.matchAll(BLOB_REF)].map((m) => m[1]!))) await this.copyBlob(match);
  }

  /** Copies blob `hash` unless the target has it; a blob the source lacks is noted (and said, once) and looked for again next pass. */
  private copyBlob(hash: string, options = { warn: true }): Promise<void> {
    let copy = this.blobCopies.get(hash);
    if (!copy) {
      copy = this.copyBlobOnce(hash, options.warn);
      this.blobCopies.set(hash, copy);
    }
    return copy;
  }

  private async copyBlobOnce(hash: string, warn: boolean): Promise<void> {
    const path = joinPath(BLOBS_DIR, hash);
    const [there, here] = await Promise.all([this.target.stat(path), this.source.stat(path)]);
    if (there && (here === null || there.size === here.size)) return;
    const bytes = here ? await this.source.read(path) : null;
    if (!bytes) {
      if (this.state.missingBlobs.includes(hash)) return;
      this.state.missingBlobs.push(hash);
      if (warn) this.options.onWarning?.(`${path}: referenced by a session, missing in the source (looked for again on the next pass)`);
      return;
    }
    await this.target.write(path, bytes);
    this.counts.blobs++;
    this.counts.blobBytes += bytes.length;
  }
}

/** One session file: its stat in the source (null: gone) and in the target (when the target's listing gave it). */
interface FilePair {
  path: string;
  source: FileStat | null;
  target: FileStat | null;
  /** False when `target` was not looked up yet. */
  targetKnown: boolean;
}

function concatBytes(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

async function forEachLimited<T>(items: readonly T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await work(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}
