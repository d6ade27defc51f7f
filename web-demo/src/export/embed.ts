/**
 * The self-contained HTML export: the viewer's export build (web-demo/dist/export-template.html:
 * its script and style inline, allowed by hash in its Content Security Policy) with one session
 * and its blobs put in as data blocks before the marker. Data blocks are
 * `<script type="application/json">`, which a browser never runs; every "<" in them is written as
 * \u003c (a "<" can only occur inside JSON strings, where the escape means the same), so no
 * session text can close the block. The session goes in pieces of about 1 MiB cut at line ends,
 * so the page reads it piece by piece. Runs in Node (the CLI) and in the browser (the viewer's
 * button): it only produces parts to concatenate.
 */
import { BLOB_REF_PREFIX, bytesToBase64, collectBlobRefs, parseBlobRef, type SessionEntry, type StoragePort } from "../../../src/index.js";

export const DATA_MARKER = "<!--sessionkit:data-->";
export const EXPORT_TEMPLATE_FILE = "export-template.html";
/** The path of the session inside the exported page's in-memory store. */
export const EMBEDDED_SESSION_PATH = "sessions/--exported--/session.jsonl";

const PIECE_BYTES = 1 << 20;
const LT = 0x3c;
const NEWLINE = 0x0a;
const ESCAPED_LT = new TextEncoder().encode("\\u003c");

/** The bytes with every "<" replaced by \u003c ("<" is ASCII, never part of a multi-byte character). */
export function escapeLessThan(bytes: Uint8Array): Uint8Array {
  let count = 0;
  for (let i = 0; i < bytes.length; i++) if (bytes[i] === LT) count++;
  if (count === 0) return bytes;
  const out = new Uint8Array(bytes.length + count * (ESCAPED_LT.length - 1));
  let o = 0;
  let start = 0;
  for (let i = 0; i < bytes.length; i++) {
    if (bytes[i] !== LT) continue;
    out.set(bytes.subarray(start, i), o);
    o += i - start;
    out.set(ESCAPED_LT, o);
    o += ESCAPED_LT.length;
    start = i + 1;
  }
  out.set(bytes.subarray(start), o);
  return out;
}

const encoder = new TextEncoder();
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
  const parts: HtmlPart[] = [template.slice(0, at).replace(/<title>[^<]*<\/title>/, `<title>${attribute(source.title)} · sessionkit</title>`)];
  const refs = new Set<string>();
  const addPiece = (piece: Uint8Array) => {
    parts.push('<script type="application/json" data-sessionkit="session">', escapeLessThan(piece), "</script>\n");
  };
  const noteRefs = (bytes: Uint8Array) => {
    // Refs are ASCII inside JSON strings: found in the decoded text of whole lines.
    const text = new TextDecoder().decode(bytes);
    for (let i = text.indexOf(BLOB_REF_PREFIX); i >= 0; i = text.indexOf(BLOB_REF_PREFIX, i + 1)) {
      const ref = text.slice(i, i + BLOB_REF_PREFIX.length + 64);
      if (parseBlobRef(ref)) refs.add(ref);
    }
  };
  if (source.branch) {
    const lines = [source.branch.header, ...source.branch.entries].map((r) => JSON.stringify(r) + "\n");
    let piece = "";
    for (const line of lines) {
      piece += line;
      if (piece.length >= PIECE_BYTES) {
        addPiece(encoder.encode(piece));
        piece = "";
      }
    }
    if (piece) addPiece(encoder.encode(piece));
    for (const entry of source.branch.entries) for (const ref of collectBlobRefs(entry)) refs.add(ref);
  } else {
    let offset = 0;
    let carry = new Uint8Array(0);
    for (;;) {
      const chunk = await source.storage.read(source.path, { offset, length: PIECE_BYTES });
      if (chunk === null) throw new Error(`${source.path}: no such session file`);
      offset += chunk.length;
      const joined = carry.length === 0 ? chunk : concat(carry, chunk);
      const end = chunk.length === 0 ? joined.length : joined.lastIndexOf(NEWLINE) + 1;
      if (end > 0) {
        const piece = joined.subarray(0, end);
        noteRefs(piece);
        addPiece(piece);
      }
      carry = joined.slice(end);
      if (chunk.length === 0) break;
    }
  }
  const missingBlobs: string[] = [];
  for (const ref of refs) {
    const hash = parseBlobRef(ref)!;
    const bytes = await source.storage.read(`blobs/${hash}`);
    if (!bytes) {
      missingBlobs.push(ref);
      continue;
    }
    parts.push(`<script type="application/json" data-sessionkit="blob" data-hash="${hash}">"`, bytesToBase64(bytes), '"</script>\n');
  }
  parts.push(template.slice(at + DATA_MARKER.length));
  return { parts, missingBlobs };
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}
