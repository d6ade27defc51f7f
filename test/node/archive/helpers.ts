/** Shared by the Node archive tests: temp stores on disk, listings with hashes, sinks. */
import { createHash } from "node:crypto";
import { mkdir, mkdtemp, readdir, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { nodeFsStorage, type NodeFsStorage } from "../../../adapters/node-fs/index.js";
import { exportArchive } from "../../../src/archive/index.js";
import type { ExportOptions, ExportSessionSpec, ExportSummary } from "../../../src/index.js";
import type { StoragePort } from "../../../src/port.js";

/**
 * What makes a temp store sessionkit's own (large images in blobs/): the store these tests move
 * blobs through. A node-fs root is otherwise an agent's (pi's), whose images stay inline.
 */
export const OWN_STORE = { owner: "sessionkit" } as const;

export interface TempStore {
  /** A directory holding only the store, to catch anything written beside it. */
  parent: string;
  root: string;
  storage: NodeFsStorage;
  cleanup(): Promise<void>;
}

export async function tempStore(prefix = "sessionkit-archive-"): Promise<TempStore> {
  const parent = await mkdtemp(join(tmpdir(), prefix));
  const root = join(parent, "store");
  await mkdir(root);
  const storage = nodeFsStorage({ root });
  return {
    parent,
    root,
    storage,
    async cleanup() {
      await storage.close();
      await rm(parent, { recursive: true, force: true });
    },
  };
}

export interface ListedFile {
  path: string;
  size: number;
  sha256: string;
}

/** Every file below `dir` with its size and hash, sorted. */
export async function listing(dir: string): Promise<ListedFile[]> {
  const out: ListedFile[] = [];
  async function walk(current: string): Promise<void> {
    for (const entry of await readdir(current, { withFileTypes: true })) {
      const path = join(current, entry.name);
      if (entry.isDirectory()) await walk(path);
      else {
        const bytes = await readFile(path);
        out.push({ path: relative(dir, path), size: (await stat(path)).size, sha256: createHash("sha256").update(bytes).digest("hex") });
      }
    }
  }
  await walk(dir);
  return out.sort((a, b) => a.path.localeCompare(b.path));
}

/** A WritableStream that keeps what it is given. */
export function memorySink(): { sink: WritableStream<Uint8Array>; bytes(): Uint8Array; closed(): boolean; aborted(): unknown } {
  const chunks: Uint8Array[] = [];
  let closed = false;
  let abortReason: unknown;
  const sink = new WritableStream<Uint8Array>({
    write(chunk) {
      chunks.push(chunk.slice());
    },
    close() {
      closed = true;
    },
    abort(reason) {
      abortReason = reason ?? "aborted";
    },
  });
  return { sink, bytes: () => new Uint8Array(Buffer.concat(chunks)), closed: () => closed, aborted: () => abortReason };
}

export async function exportToBytes(storage: StoragePort, sessions: readonly ExportSessionSpec[], options?: ExportOptions): Promise<{ bytes: Uint8Array; summary: ExportSummary }> {
  const { sink, bytes } = memorySink();
  const summary = await exportArchive(storage, sessions, sink, options);
  return { bytes: bytes(), summary };
}

export const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

// --- messages -----------------------------------------------------------------

export function user(text: string, image?: Uint8Array): { role: "user"; content: unknown[]; timestamp: number } {
  const content: unknown[] = [{ type: "text", text }];
  if (image) content.push({ type: "image", data: Buffer.from(image).toString("base64"), mimeType: "image/png" });
  return { role: "user", content, timestamp: Date.now() };
}

export function assistant(text: string): Record<string, unknown> & { role: "assistant" } {
  return {
    role: "assistant",
    content: [{ type: "text", text }],
    provider: "anthropic",
    model: "claude-test",
    usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2 },
    stopReason: "stop",
    timestamp: Date.now(),
  };
}

/** Bytes that do not compress, as an image's would not. */
export function noise(length: number, seed = 1): Uint8Array {
  const out = new Uint8Array(length);
  let x = seed >>> 0 || 1;
  for (let i = 0; i < length; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out[i] = x & 0xff;
  }
  return out;
}
