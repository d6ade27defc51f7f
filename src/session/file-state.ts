/**
 * The state of a SessionManager's session file, one union in place of flags (a path is set, the
 * file is started, the manager is closed). Whether the manager writes at all is fixed when it is
 * made (SessionManager.isPersisted): one that never does is in `memory`, one that does goes from
 * `unstarted` to `open`; both end `closed`.
 */

/**
 * - `memory`: this manager never writes (SessionManager.inMemory, or a session opened `readOnly`);
 *   `path` is the file it read or would name, undefined for a session that never had one.
 * - `unstarted`: the manager writes, but the file is not written yet: the header and every entry
 *   are written whole with the first assistant message (pi's deferUntilAssistant), or at the
 *   first append without it.
 * - `open`: the file holds the header and every entry appended so far; each append goes to the
 *   journal.
 * - `closed`: close() ran; every call that touches storage throws "closed". It is final
 *   (SessionTree's setter keeps it).
 */
export type FileState =
  | { readonly kind: "memory"; readonly path: string | undefined }
  | { readonly kind: "unstarted"; readonly path: string }
  | { readonly kind: "open"; readonly path: string }
  | { readonly kind: "closed"; readonly path: string | undefined };

/** The path of the file this manager writes, now or with its first write; undefined when it writes none. */
export function writtenPath(file: FileState): string | undefined {
  switch (file.kind) {
    case "unstarted":
    case "open":
      return file.path;
    case "memory":
    case "closed":
      return undefined;
  }
}
