/** A directory's files as bytes (base64; "dir" for a directory), by relative path: compare before and after to see that nothing was written. */
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";

export async function dirSnapshot(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const name of (await readdir(dir, { recursive: true })).sort()) out[name] = await readFile(join(dir, name), "base64").catch(() => "dir");
  return out;
}
