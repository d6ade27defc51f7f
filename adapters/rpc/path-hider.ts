/** What a client is told of the server's paths: storage paths, never the server's own. */

/** Stands in an error message for an absolute path of the server's that no `hostPaths` entry maps. */
const HIDDEN_PATH = "<server path>";

/**
 * Rewrites the server's absolute paths in a message: those at or below a directory of `hostPaths`
 * as the storage paths they are, any other as HIDDEN_PATH (a POSIX "/a/b" or a Windows "C:\\a"
 * after a space, quote, parenthesis or "=", or at the start).
 */
export function pathHider(hostPaths: Readonly<Record<string, string>>): (message: string) => string {
  const rewrites = Object.entries(hostPaths)
    .map(([dir, storagePath]) => [dir.replace(/[\\/]+$/, ""), storagePath] as const)
    .filter(([dir]) => dir !== "")
    // Longest first: a cache directory may lie inside the store's root.
    .sort(([a], [b]) => b.length - a.length)
    .map(([dir, storagePath]) => {
      // The directory itself, or followed by a separator (consumed), never a longer name ("/a" in "/ab").
      const pattern = new RegExp(`${dir.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}(?:([\\\\/])|(?=[\\s'"\`)]|$))`, "g");
      return (text: string) => text.replace(pattern, (_match, separator?: string) => (separator === undefined ? storagePath || "." : storagePath === "" ? "" : `${storagePath}/`));
    });
  return (message) => rewrites.reduce((text, rewrite) => rewrite(text), message).replace(/(^|[\s'"`(=])(?:\/(?!\/)|[A-Za-z]:\\)[^\s'"`)]*/g, `$1${HIDDEN_PATH}`);
}
