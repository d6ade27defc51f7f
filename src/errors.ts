/** Errors about sessions (storage failures are StorageErrors, see port.ts). */
import { CodedError } from "./port.js";

/**
 * What went wrong with a session ({@link SessionError.code}).
 * @category Errors
 */
export type SessionErrorCode =
  /** The file exists but its first record is not a session header. */
  | "not-a-session"
  /** An id that is not in the session. */
  | "entry-not-found"
  /** A write on a session opened read-only. */
  | "read-only"
  /** follow() on a session that writes its file itself. */
  | "not-read-only"
  /** A call after close(). */
  | "closed"
  /** A write failed; latched: every later write reports it. */
  | "persist-failed"
  /** A rename, move, fork or rewrite failed; the files are as they were before it. */
  | "rewrite-failed";

/**
 * Thrown by SessionManager and the session functions for problems with a session itself (storage
 * failures stay {@link StorageError}s). `code` says which; test for it with {@link isSessionError}.
 * @category Errors
 */
export class SessionError extends CodedError<SessionErrorCode> {
  /** Always "SessionError". */
  override readonly name = "SessionError";
  /** The storage path of the session file, when the error is about one. */
  readonly path: string | undefined;

  constructor(code: SessionErrorCode, message: string, options?: { path?: string; cause?: unknown }) {
    super(code, message, options?.cause);
    this.path = options?.path;
  }
}

/**
 * True when `error` is a SessionError (with the given `code`, when one is given).
 * @category Errors
 */
export function isSessionError(error: unknown, code?: SessionErrorCode): error is SessionError {
  return error instanceof SessionError && (code === undefined || error.code === code);
}
