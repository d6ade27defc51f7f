/** Errors about sessions (storage failures are StorageErrors, see port.ts). */

export type SessionErrorCode =
  | "not-a-session" // the file exists but its first record is not a session header
  | "entry-not-found" // an id that is not in the session
  | "read-only" // a write on a session opened read-only
  | "closed" // a call after close()
  | "persist-failed" // a write failed; latched: every later write reports it
  | "rewrite-failed"; // a rename, move, fork or rewrite failed; the files are as they were before it

export class SessionError extends Error {
  override readonly name = "SessionError";
  readonly code: SessionErrorCode;
  /** The storage path of the session file, when the error is about one. */
  readonly path: string | undefined;

  constructor(code: SessionErrorCode, message: string, options?: { path?: string; cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.path = options?.path;
  }
}

export function isSessionError(error: unknown, code?: SessionErrorCode): error is SessionError {
  return error instanceof SessionError && (code === undefined || error.code === code);
}
