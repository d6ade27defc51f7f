/**
 * What an export wrote, as text to look for secrets in: a zip's members (inflated), an HTML page
 * with its session data blocks decoded (base64 pieces of one gzip stream), a JSONL file. And the
 * CLI's package layout for `export --html` without building the viewer: the CLI needs only the
 * template's data marker. Shared by test/node/secrets-export.test.ts and bench/secrets.ts.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { BlobReader, Uint8ArrayWriter, ZipReader } from "@zip.js/zip.js";
import { DATA_MARKER, EXPORT_TEMPLATE_FILE } from "../../web-demo/src/export/embed.js";

/** Each member of a zip, inflated. */
export async function zipMembers(bytes: Uint8Array): Promise<Map<string, Uint8Array>> {
  const reader = new ZipReader(new BlobReader(new Blob([bytes as Uint8Array<ArrayBuffer>])));
  const members = new Map<string, Uint8Array>();
  for (const entry of await reader.getEntries()) {
    if (entry.directory) continue;
    members.set(entry.filename, await entry.getData(new Uint8ArrayWriter()));
  }
  await reader.close();
  return members;
}

/** The session file an exported page carries: its data blocks decoded and inflated. */
export function sessionOfPage(html: string): string {
  const pieces = [...html.matchAll(/<script type="application\/json" data-sessionkit="session"[^>]*>([\s\S]*?)<\/script>/g)].map((match) => Buffer.from(JSON.parse(match[1]!) as string, "base64"));
  return gunzipSync(Buffer.concat(pieces)).toString("utf8");
}

/**
 * Lays out `pkgDir` as the package is for the CLI's `export --html`: `web-demo/dist/` with a page
 * that is only the data marker in a document (the viewer is not what these check).
 */
export async function writeBareExportTemplate(pkgDir: string): Promise<void> {
  await mkdir(join(pkgDir, "web-demo", "dist"), { recursive: true });
  await writeFile(join(pkgDir, "web-demo", "dist", EXPORT_TEMPLATE_FILE), `<!doctype html><html><head><title>x</title></head><body>${DATA_MARKER}</body></html>\n`);
}
