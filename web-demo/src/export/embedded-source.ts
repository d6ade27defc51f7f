/**
 * The exported page's data: the session's gzip pieces and the blobs the export put in as data
 * blocks (embed.ts), decoded and inflated piece by piece (yielding between pieces) into an
 * in-memory store. Inflated bytes are appended as they come (the memory store grows its buffer in
 * place): joining them first and storing a copy took one 160 ms task at 100,000 entries.
 */
import { memoryStorage } from "../../../adapters/memory/index.js";
import { base64ToBytes } from "../../../src/blobs/base64.js";
import type { StoragePort } from "../../../src/port.js";
import { yieldToEventLoop } from "../model/filters.js";
import type { ListedSession, StoreSource, ViewerStore } from "../data/source.js";
import { EMBEDDED_SESSION_PATH } from "./embed.js";

const HEX64 = /^[0-9a-f]{64}$/;

/**
 * The page's one store. It lists nothing: the page opens its session directly (export-main.ts),
 * so the listing code (SessionManager) is no part of the page's script.
 */
class EmbeddedSource implements StoreSource {
  readonly kind = "embedded";
  readonly live = false;
  readonly stores: readonly ViewerStore[];

  constructor(storage: StoragePort) {
    this.stores = [{ id: "file", label: "this file", storage, writable: false }];
  }

  async listSessions(): Promise<ListedSession[]> {
    return [];
  }

  async close(): Promise<void> {}
}

export async function embeddedSource(doc: Document = document): Promise<{ source: StoreSource; path: string } | null> {
  const pieces = doc.querySelectorAll<HTMLScriptElement>('script[type="application/json"][data-sessionkit="session"]');
  if (pieces.length === 0) return null;
  const storage = memoryStorage();
  const gunzip = new DecompressionStream("gzip");
  const writer = gunzip.writable.getWriter();
  await storage.write(EMBEDDED_SESSION_PATH, new Uint8Array(0));
  const stored = appendEach(gunzip.readable, storage, EMBEDDED_SESSION_PATH);
  for (const piece of pieces) {
    const bytes = base64ToBytes(JSON.parse(piece.textContent ?? '""') as string);
    if (!bytes) throw new Error("this page's session data is damaged (a piece is not base64)");
    piece.remove(); // decoded: no second copy in the DOM
    await writer.write(bytes as Uint8Array<ArrayBuffer>);
    await yieldToEventLoop();
  }
  await writer.close();
  await stored;
  for (const block of doc.querySelectorAll<HTMLScriptElement>('script[type="application/json"][data-sessionkit="blob"]')) {
    const hash = block.dataset.hash ?? "";
    const bytes = HEX64.test(hash) ? base64ToBytes(JSON.parse(block.textContent ?? '""') as string) : null;
    if (bytes) await storage.write(`blobs/${hash}`, bytes);
    block.remove();
  }
  return { source: new EmbeddedSource(storage), path: EMBEDDED_SESSION_PATH };
}

async function appendEach(stream: ReadableStream<Uint8Array>, storage: ReturnType<typeof memoryStorage>, path: string): Promise<void> {
  const reader = stream.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return;
    await storage.append(path, value);
  }
}
