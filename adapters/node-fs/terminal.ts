/**
 * oh-my-pi's terminal breadcrumbs on a Node store: which terminal this process runs in, and how a
 * breadcrumb names a session file (an absolute path, as oh-my-pi writes it, so both read each
 * other's breadcrumbs). Pass the result as `SessionManagerOptions.terminalBreadcrumb`.
 */
import { readlinkSync } from "node:fs";
import nodePath from "node:path";

/** What a breadcrumb needs from the process (the core's TerminalBreadcrumb, structurally). */
export interface NodeTerminalBreadcrumb {
  /** This terminal's id ("pts-3", "tmux-%1", …): it names the breadcrumb file. */
  terminalId: string;
  /** The absolute file name a breadcrumb records for a storage path (as oh-my-pi writes it). */
  fileName(storagePath: string): string;
  /** The storage path of a file a breadcrumb names; null when the file is outside the store. */
  storagePath(fileName: string): string | null;
}

/** Where {@link terminalId} looks; each field defaults to this process's own. */
export interface TerminalEnvironment {
  /** Environment variables (process.env by default). */
  env?: NodeJS.ProcessEnv;
  /** Whether stdin is a terminal (process.stdin.isTTY by default). */
  stdinIsTty?: boolean;
  /** The device stdin is (read from /proc/self/fd/0 by default; Linux only). */
  ttyPath?: () => string | null;
}

/**
 * oh-my-pi's terminal id, the first that applies: the controlling tty when stdin is a terminal
 * ("/dev/pts/3" → "pts-3"), `kitty-$KITTY_WINDOW_ID`, `tmux-$TMUX_PANE`, `apple-$TERM_SESSION_ID`,
 * `wt-$WT_SESSION`; undefined when none does.
 */
export function terminalId(environment: TerminalEnvironment = {}): string | undefined {
  const env = environment.env ?? process.env;
  const isTty = environment.stdinIsTty ?? process.stdin.isTTY === true;
  if (isTty) {
    const tty = (environment.ttyPath ?? stdinDevice)();
    if (tty?.startsWith("/dev/")) return tty.slice("/dev/".length).replace(/\//g, "-");
  }
  if (env.KITTY_WINDOW_ID) return `kitty-${env.KITTY_WINDOW_ID}`;
  if (env.TMUX_PANE) return `tmux-${env.TMUX_PANE}`;
  if (env.TERM_SESSION_ID) return `apple-${env.TERM_SESSION_ID}`;
  if (env.WT_SESSION) return `wt-${env.WT_SESSION}`;
  return undefined;
}

function stdinDevice(): string | null {
  try {
    return readlinkSync("/proc/self/fd/0");
  } catch {
    return null;
  }
}

/**
 * Breadcrumbs for the store at `root` in this terminal; undefined when the process has no
 * terminal id (oh-my-pi writes none then).
 */
export function nodeTerminalBreadcrumb(root: string, environment: TerminalEnvironment = {}): NodeTerminalBreadcrumb | undefined {
  const id = terminalId(environment);
  if (id === undefined) return undefined;
  const absoluteRoot = nodePath.resolve(root);
  return {
    terminalId: id,
    fileName: (storagePath) => nodePath.join(absoluteRoot, ...storagePath.split("/")),
    storagePath: (fileName) => {
      const relative = nodePath.relative(absoluteRoot, nodePath.resolve(absoluteRoot, fileName));
      if (relative === "" || relative.startsWith("..") || nodePath.isAbsolute(relative)) return null;
      return relative.split(nodePath.sep).join("/");
    },
  };
}
