/**
 * The self-contained HTML export: the viewer's export build (web-demo/dist/export-template.html:
 * its script and style inline, allowed by hash in its Content Security Policy) with one session
 * and its blobs put in as data blocks before the marker. Data blocks are
 * `<script type="application/json">` holding one base64 string each, which a browser never runs
 * and no session text can end (base64 has no "<"). The session file goes gzip-compressed (a
 * fifth of its size here, so the page has less to parse) in pieces of about 1 MiB, which the page
 * decodes and inflates piece by piece (DecompressionStream). Runs in Node (the CLI) and in the
 * browser (the viewer's button): it only produces parts to concatenate.
 */
import { BLOB_REF_PREFIX, parseBlobRef } from "../../../src/blobs/blob-store.js";
import { bytesToBase64 } from "../../../src/blobs/base64.js";
import { collectBlobRefs } from "../../../src/blobs/images.js";
import type { SessionEntry } from "../../../src/format/types.js";
import type { StoragePort } from "../../../src/port.js";

export const DATA_MARKER = "<!--sessionkit:data-->";
export const EXPORT_TEMPLATE_FILE = "export-template.html";
/** The path of the session inside the exported page's in-memory store. */
export const EMBEDDED_SESSION_PATH = "sessions/--exported--/session.jsonl";

/** Raw bytes per data block: a multiple of 3, so each block's base64 decodes on its own. */
const PIECE_BYTES = 3 << 18;
const READ_BYTES = 1 << 20;

const attribute = (value: string) => value.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;");

export type HtmlPart = string | Uint8Array;

export interface ExportSource {
  storage: StoragePort;
  /** The session file's storage path. */
  path: string;
  /** Only the root → leaf branch, with this leaf. */
  branch?: { header: Record<string, unknown>; entries: readonly SessionEntry[] };
  title: string;
}

/**
 * The parts of the exported page: template up to the marker, the data blocks, the rest. The
 * session file is copied as stored (or the branch re-serialized); blobs it references are read
 * from the storage and embedded as base64; a missing blob is reported in `missingBlobs`.
 */
export async function buildExportHtml(template: string, source: ExportSource): Promise<{ parts: HtmlPart[]; missingBlobs: string[] }> {
  const at = template.indexOf(DATA_MARKER);
  if (at < 0) throw new Error(`${EXPORT_TEMPLATE_FILE} has no ${DATA_MARKER} marker: not the viewer's export template`);
  // A replacer function: a replacement string would read "$&", "$`" and the like in the title as patterns.
  const parts: HtmlPart[] = [template.slice(0, at).replace(/<title>[^<]*<\/title>/, () => `<title>${attribute(source.title)} · sessionkit</title>`)];
  const refs = new Set<string>();
  const gzip = new CompressionStream("gzip");
  const writer = gzip.writable.getWriter();
  const compressed = collect(gzip.readable);
  if (source.branch) {
    const encoder = new TextEncoder();
    for (const record of [source.branch.header, ...source.branch.entries]) await writer.write(encoder.encode(JSON.stringify(record) + "\n") as Uint8Array<ArrayBuffer>);
    for (const entry of source.branch.entries) for (const ref of collectBlobRefs(entry)) refs.add(ref);
  } else {
    const decoder = new TextDecoder();
    const span = BLOB_REF_PREFIX.length + 64;
    let carry = "";
    let offset = 0;
    for (;;) {
      const chunk = await source.storage.read(source.path, { offset, length: READ_BYTES });
      if (chunk === null) throw new Error(`${source.path}: no such session file`);
      if (chunk.length === 0) break;
      offset += chunk.length;
      await writer.write(chunk as Uint8Array<ArrayBuffer>);
      // A ref can straddle two reads: the end of the previous text is searched again.
      const text = carry + decoder.decode(chunk, { stream: true });
      for (let i = text.indexOf(BLOB_REF_PREFIX); i >= 0; i = text.indexOf(BLOB_REF_PREFIX, i + 1)) noteRef(refs, text.slice(i, i + span));
      carry = text.slice(-span);
    }
  }
  await writer.close();
  const bytes = await compressed;
  for (let start = 0; start < bytes.length; start += PIECE_BYTES) {
    parts.push('<script type="application/json" data-sessionkit="session">"', bytesToBase64(bytes.subarray(start, start + PIECE_BYTES)), '"</script>\n');
  }
  const missingBlobs: string[] = [];
  for (const ref of refs) {
    const hash = parseBlobRef(ref)!;
    const blob = await source.storage.read(`blobs/${hash}`);
    if (!blob) {
      missingBlobs.push(ref);
      continue;
    }
    parts.push(`<script type="application/json" data-sessionkit="blob" data-hash="${hash}">"`, bytesToBase64(blob), '"</script>\n');
  }
  parts.push(template.slice(at + DATA_MARKER.length));
  return { parts, missingBlobs };
}

function noteRef(refs: Set<string>, candidate: string): void {
  if (parseBlobRef(candidate)) refs.add(candidate);
}

/** A stream's bytes, joined. */
async function collect(stream: ReadableStream<Uint8Array>): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  let length = 0;
  const reader = stream.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    length += value.length;
  }
  const out = new Uint8Array(length);
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.length;
  }
  return out;
}
