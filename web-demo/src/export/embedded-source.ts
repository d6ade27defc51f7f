/**
 * The exported page's data: the session pieces and blobs the export put in as data blocks
 * (embed.ts), moved into an in-memory store piece by piece, yielding between pieces.
 */
import { memoryStorage } from "../../../adapters/memory/index.js";
import { base64ToBytes } from "../../../src/index.js";
import { yieldToEventLoop } from "../model/filters.js";
import { PortStoreSource } from "../data/source.js";
import { EMBEDDED_SESSION_PATH } from "./embed.js";

const HEX64 = /^[0-9a-f]{64}$/;

export async function embeddedSource(doc: Document = document): Promise<{ source: PortStoreSource; path: string } | null> {
  const pieces = doc.querySelectorAll<HTMLScriptElement>('script[type="application/json"][data-sessionkit="session"]');
  if (pieces.length === 0) return null;
  const storage = memoryStorage();
  const encoder = new TextEncoder();
  for (const piece of pieces) {
    await storage.append(EMBEDDED_SESSION_PATH, encoder.encode(piece.textContent ?? ""));
    piece.remove(); // the text now lives in the store: no second copy in the DOM
    await yieldToEventLoop();
  }
  for (const block of doc.querySelectorAll<HTMLScriptElement>('script[type="application/json"][data-sessionkit="blob"]')) {
    const hash = block.dataset.hash ?? "";
    const bytes = HEX64.test(hash) ? base64ToBytes(JSON.parse(block.textContent ?? '""') as string) : null;
    if (bytes) await storage.write(`blobs/${hash}`, bytes);
    block.remove();
  }
  return { source: new PortStoreSource("embedded", [{ id: "file", label: "this file", storage, writable: false }], false), path: EMBEDDED_SESSION_PATH };
}
