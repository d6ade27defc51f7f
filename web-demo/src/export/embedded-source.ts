/**
 * The exported page's data: the session's gzip pieces and the blobs the export put in as data
 * blocks (embed.ts), decoded and inflated piece by piece (yielding between pieces) into an
 * in-memory store.
 */
import { memoryStorage } from "../../../adapters/memory/index.js";
import { base64ToBytes } from "../../../src/index.js";
import { yieldToEventLoop } from "../model/filters.js";
import { PortStoreSource } from "../data/source.js";
import { collect, EMBEDDED_SESSION_PATH } from "./embed.js";

const HEX64 = /^[0-9a-f]{64}$/;

export async function embeddedSource(doc: Document = document): Promise<{ source: PortStoreSource; path: string } | null> {
  const pieces = doc.querySelectorAll<HTMLScriptElement>('script[type="application/json"][data-sessionkit="session"]');
  if (pieces.length === 0) return null;
  const storage = memoryStorage();
  const gunzip = new DecompressionStream("gzip");
  const writer = gunzip.writable.getWriter();
  const inflated = collect(gunzip.readable);
  for (const piece of pieces) {
    const bytes = base64ToBytes(JSON.parse(piece.textContent ?? '""') as string);
    if (!bytes) throw new Error("this page's session data is damaged (a piece is not base64)");
    piece.remove(); // decoded: no second copy in the DOM
    await writer.write(bytes as Uint8Array<ArrayBuffer>);
    await yieldToEventLoop();
  }
  await writer.close();
  await storage.write(EMBEDDED_SESSION_PATH, await inflated);
  for (const block of doc.querySelectorAll<HTMLScriptElement>('script[type="application/json"][data-sessionkit="blob"]')) {
    const hash = block.dataset.hash ?? "";
    const bytes = HEX64.test(hash) ? base64ToBytes(JSON.parse(block.textContent ?? '""') as string) : null;
    if (bytes) await storage.write(`blobs/${hash}`, bytes);
    block.remove();
  }
  return { source: new PortStoreSource("embedded", [{ id: "file", label: "this file", storage, writable: false }], false), path: EMBEDDED_SESSION_PATH };
}
