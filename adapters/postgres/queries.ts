/** The port's read-side SQL (the mutations are functions in schema.ts); tests EXPLAIN these very queries. */

/** The end of a range read with no length: past any file. */
export const NO_END = Number.MAX_SAFE_INTEGER;

/**
 * $1 path, $2 start, $3 end (exclusive): the file's size, and the chunks from the one holding byte
 * $2 up to $3, each cut to the range (offset and full length kept to check they are contiguous).
 * No row: no such file.
 */
export function readQuery(s: string): string {
  return `SELECT f.size, c.off, c.length, c.data FROM ${s}.files f
    LEFT JOIN LATERAL (
      SELECT k.off, octet_length(k.data) AS length,
             substring(k.data FROM least(greatest($2 - k.off, 0), octet_length(k.data))::integer + 1
                              FOR greatest(least(least($3, f.size) - greatest($2, k.off), octet_length(k.data)), 0)::integer) AS data
      FROM ${s}.chunks k
      WHERE k.file_id = f.id AND k.off < least($3, f.size)
        AND k.off >= coalesce((SELECT max(m.off) FROM ${s}.chunks m WHERE m.file_id = f.id AND m.off <= $2), 0)
      ORDER BY k.off
    ) c ON true
    WHERE f.path = $1`;
}

export function statQuery(s: string): string {
  return `SELECT size, mtime_ms FROM ${s}.files WHERE path = $1`;
}

/**
 * The direct children of `dir`: its files through the parent index, and its subdirectories with
 * the newest mtime below them through a range of the path index ("dir/" ≤ path < "dir0"; "0"
 * follows "/"). Never a scan of every row, never the chunks.
 */
export function listQuery(s: string, dir: string): { text: string; values: unknown[] } {
  const below = dir === "" ? "parent <> ''" : "path >= $3 AND path < $4 AND parent <> $1";
  return {
    text: `SELECT substr(path, $2) AS name, 'file' AS kind, size, mtime_ms FROM ${s}.files WHERE parent = $1
      UNION ALL
      SELECT split_part(substr(path, $2), '/', 1), 'dir', 0, max(mtime_ms) FROM ${s}.files WHERE ${below} GROUP BY 1
      ORDER BY 1`,
    values: dir === "" ? [dir, 1] : [dir, dir.length + 2, `${dir}/`, `${dir}0`],
  };
}

/**
 * What keeps the path `path` (a parameter such as "$1") from being a file, given its parent paths
 * (`parents`, a text[] parameter): a file at one of them (that file's path), or files below it
 * (the path itself: a directory); null when nothing does. Index lookups only.
 */
export function inTheWayExpression(s: string, path: string, parents: string): string {
  return `coalesce(
    (SELECT f.path FROM ${s}.files f WHERE f.path = ANY (${parents}::text[]) ORDER BY length(f.path) LIMIT 1),
    (SELECT ${path}::text FROM ${s}.files f WHERE f.path >= ${path} || '/' AND f.path < ${path} || '0' LIMIT 1))`;
}
