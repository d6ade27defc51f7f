/**
 * Listing progress on stderr. On a terminal: one line rewritten in place and erased at the end.
 * Elsewhere (a log, a pipe) only for large listings, as a few plain lines.
 */

/** More files than this make a listing worth reporting when stderr is not a terminal. */
export const LARGE_LISTING = 50;
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

export function listingProgress(sink: ProgressSink, label: string): Progress {
  if (sink.isTTY) {
    // A listing done within the first redraw interval never draws (no flicker).
    let lastDraw = Date.now();
    let drawn = false;
    return {
      onProgress(loaded, total) {
        const now = Date.now();
        if (now - lastDraw < REDRAW_MS) return;
        lastDraw = now;
        drawn = true;
        sink.write(`\r\x1b[K${label}: ${loaded}/${total} session files read`);
      },
      done() {
        if (drawn) sink.write("\r\x1b[K");
      },
    };
  }
  let reportedQuarter = 0;
  return {
    onProgress(loaded, total) {
      if (total <= LARGE_LISTING) return;
      const quarter = Math.floor((loaded * 4) / total);
      if (quarter <= reportedQuarter) return;
      reportedQuarter = quarter;
      sink.write(`${label}: ${loaded}/${total} session files read\n`);
    },
    done() {},
  };
}
