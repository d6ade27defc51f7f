/**
 * Progress on stderr. On a terminal: one line rewritten in place and erased at the end.
 * Elsewhere (a log, a pipe) only for large work, as a few plain lines.
 */
import type { ArchiveProgress } from "../src/archive/verify.js";
import type { RefreshCounter as SearchIndexProgress } from "../src/search/search-index.js";
import type { ScanProgress } from "../src/secrets/scan.js";

/** More items than this make work worth reporting when stderr is not a terminal. */
const LARGE_LISTING = 50;
const REDRAW_MS = 100;

export interface ProgressSink {
  write(text: string): void;
  isTTY: boolean;
}

export interface Progress {
  onProgress(loaded: number, total: number): void;
  /** Erases the progress line (terminal). */
  done(): void;
}

/** Counts of one or more phases; a new `phase` starts its own count (and its own quarters). */
interface CountProgress {
  update(phase: string, loaded: number, total: number, what: string): void;
  done(): void;
}

function countProgress(sink: ProgressSink, label: string): CountProgress {
  if (sink.isTTY) {
    // Work done within the first redraw interval never draws (no flicker).
    let lastDraw = Date.now();
    let drawn = false;
    return {
      update(_phase, loaded, total, what) {
        const now = Date.now();
        if (now - lastDraw < REDRAW_MS) return;
        lastDraw = now;
        drawn = true;
        sink.write(`\r\x1b[K${label}: ${loaded}/${total} ${what}`);
      },
      done() {
        if (drawn) sink.write("\r\x1b[K");
      },
    };
  }
  let currentPhase = "";
  let reportedQuarter = 0;
  return {
    update(phase, loaded, total, what) {
      if (total <= LARGE_LISTING) return;
      if (phase !== currentPhase) {
        currentPhase = phase;
        reportedQuarter = 0;
      }
      const quarter = Math.floor((loaded * 4) / total);
      if (quarter <= reportedQuarter) return;
      reportedQuarter = quarter;
      sink.write(`${label}: ${loaded}/${total} ${what}\n`);
    },
    done() {},
  };
}

export function listingProgress(sink: ProgressSink, label: string): Progress {
  const progress = countProgress(sink, label);
  return { onProgress: (loaded, total) => progress.update("list", loaded, total, "session files read"), done: () => progress.done() };
}

const PHASE_TEXT: Record<ArchiveProgress["phase"], string> = {
  prepare: "sessions read",
  export: "members written",
  verify: "members verified",
  write: "files written",
};

/** Progress of an export, import or verify (phases as the archive API reports them). */
export function archiveProgress(sink: ProgressSink, label: string): { onProgress(progress: ArchiveProgress): void; done(): void } {
  const progress = countProgress(sink, label);
  return {
    onProgress: ({ phase, done, total }) => progress.update(phase, done, total, PHASE_TEXT[phase]),
    done: () => progress.done(),
  };
}

const mb = (bytes: number) => (bytes / 1e6).toFixed(bytes < 10e6 ? 1 : 0);

/**
 * Progress of a search's index update: session files read of those that changed, and their
 * bytes. A warm index reports nothing (no file changed); `quiet` reports nothing at all.
 */
export function searchProgress(sink: ProgressSink, label: string, quiet: boolean): { onProgress(progress: SearchIndexProgress): void; done(): void } {
  if (quiet) return { onProgress() {}, done() {} };
  const progress = countProgress(sink, label);
  return {
    onProgress: ({ filesDone, filesTotal, bytesDone, bytesTotal }) =>
      progress.update("index", filesDone, filesTotal, `session files indexed (${mb(bytesDone)} of ${mb(bytesTotal)} MB)`),
    done: () => progress.done(),
  };
}

/**
 * Progress of a scan: session files read of those that changed since the last scan, and their
 * bytes. A warm scan reports nothing; `quiet` reports nothing at all.
 */
export function scanProgress(sink: ProgressSink, label: string, quiet: boolean): { onProgress(progress: ScanProgress): void; done(): void } {
  if (quiet) return { onProgress() {}, done() {} };
  const progress = countProgress(sink, label);
  return {
    onProgress: ({ filesDone, filesTotal, bytesDone, bytesTotal }) =>
      progress.update("scan", filesDone, filesTotal, `session files scanned (${mb(bytesDone)} of ${mb(bytesTotal)} MB)`),
    done: () => progress.done(),
  };
}

/** Progress of a sync pass over one agent store: session files looked at (most need only a stat). */
export function syncProgress(sink: ProgressSink, label: string): Progress {
  const progress = countProgress(sink, label);
  return { onProgress: (done, total) => progress.update("sync", done, total, "session files synced"), done: () => progress.done() };
}
