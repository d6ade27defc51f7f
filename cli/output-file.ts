/** Files the CLI writes for the user (exports): complete or not there at all. */
import { randomBytes } from "node:crypto";
import { open, rename, rm } from "node:fs/promises";
import nodePath from "node:path";

/**
 * Writes `parts` to `output` through a temp file beside it, synced and renamed when complete: a
 * failed export leaves no half file. Returns the bytes written.
 */
export async function writeOutputFile(output: string, parts: Iterable<string | Uint8Array>): Promise<number> {
  const temp = nodePath.join(nodePath.dirname(output), `.${nodePath.basename(output)}.${randomBytes(6).toString("hex")}.tmp`);
  let bytes = 0;
  const file = await open(temp, "wx");
  try {
    for (const part of parts) {
      const data = typeof part === "string" ? Buffer.from(part, "utf8") : part;
      await file.write(data);
      bytes += data.length;
    }
    await file.sync();
    await file.close();
    await rename(temp, output);
  } catch (error) {
    await file.close().catch(() => {});
    await rm(temp, { force: true });
    throw error;
  }
  return bytes;
}
