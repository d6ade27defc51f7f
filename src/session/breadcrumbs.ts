/**
 * oh-my-pi's terminal breadcrumbs: `terminal-sessions/<terminal id>` in the agent dir holds two
 * lines, the cwd and the session file this terminal used last, so `continueRecent` in the same
 * terminal resumes that session. The terminal id comes from the process's environment (the Node
 * adapter's `terminalId`); the core only reads and writes the file.
 */
import { checkStoragePath, joinPath, type StoragePort } from "../port.js";

const BREADCRUMB_DIR = "terminal-sessions";

/**
 * oh-my-pi's terminal breadcrumbs, for `continueRecent` to resume the session this terminal used
 * last: a file per terminal in `terminal-sessions/` naming that session. node-fs's
 * `nodeTerminalBreadcrumb()` makes one from the process's environment.
 * @category Sessions
 */
export interface TerminalBreadcrumb {
  /** This terminal's id ("pts-3", "tmux-%1", …): it names the breadcrumb file. */
  terminalId: string;
  /** How the breadcrumb names a session file; its storage path by default (oh-my-pi writes absolute paths). */
  fileName?: (storagePath: string) => string;
  /** The storage path of a file a breadcrumb names, null when it is not in this storage; the name itself by default. */
  storagePath?: (fileName: string) => string | null;
}

/** The breadcrumb file of a terminal (separators in the id become "-"). */
export function breadcrumbPath(terminalId: string): string {
  return joinPath(BREADCRUMB_DIR, terminalId.replace(/[/\\\0]/g, "-"));
}

async function writeBreadcrumb(storage: StoragePort, crumb: TerminalBreadcrumb, cwd: string, sessionFile: string): Promise<void> {
  const name = crumb.fileName ? crumb.fileName(sessionFile) : sessionFile;
  await storage.write(breadcrumbPath(crumb.terminalId), new TextEncoder().encode(`${cwd}\n${name}\n`));
}

/** The cwd and session file (a storage path) this terminal used last; null when there is none or it is unusable. */
export async function readBreadcrumb(storage: StoragePort, crumb: TerminalBreadcrumb): Promise<{ cwd: string; path: string } | null> {
  const bytes = await storage.read(breadcrumbPath(crumb.terminalId));
  if (!bytes) return null;
  const [cwd, name] = new TextDecoder().decode(bytes).split("\n");
  if (!cwd || !name) return null;
  const path = crumb.storagePath ? crumb.storagePath(name) : name;
  if (path === null) return null;
  try {
    return { cwd, path: checkStoragePath(path) };
  } catch {
    return null; // not a path of this storage
  }
}

/** Writes one terminal's breadcrumb as the session's file changes, never holding the session up: a failure is a warning. */
export class BreadcrumbWriter {
  readonly #storage: StoragePort;
  readonly #crumb: TerminalBreadcrumb;
  readonly #onWarning: (message: string) => void;
  /** Writes in flight (close waits for them). */
  readonly #writes = new Set<Promise<void>>();

  constructor(storage: StoragePort, crumb: TerminalBreadcrumb, onWarning: (message: string) => void) {
    this.#storage = storage;
    this.#crumb = crumb;
    this.#onWarning = onWarning;
  }

  /** Names `sessionFile` (of `cwd`) as this terminal's last session; nothing for a session that writes no file. */
  remember(cwd: string, sessionFile: string | undefined): void {
    if (sessionFile === undefined) return;
    const write = writeBreadcrumb(this.#storage, this.#crumb, cwd, sessionFile).catch((error: unknown) => {
      this.#onWarning(`terminal breadcrumb not written: ${(error as Error)?.message ?? String(error)}`);
    });
    this.#writes.add(write);
    void write.finally(() => this.#writes.delete(write));
  }

  /** Resolves when the writes started so far are done. */
  async settled(): Promise<void> {
    await Promise.all(this.#writes);
  }
}
