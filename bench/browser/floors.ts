/**
 * Floors: what the bare browser primitives cost per flush on this machine, under the same load as
 * the bench, so the bench can tell sessionkit's overhead from the platform's.
 */
import { floorPieces } from "./workload.js";

export interface IdbFloor {
  /** One relaxed readwrite transaction putting a chunk and a metadata record. */
  relaxedMs: number;
  /** The same after first getting the metadata in the transaction (one request round trip). */
  relaxedReadMetaMs: number;
  /** That, then a strict transaction re-putting the metadata: the shape of append + sync. */
  relaxedThenStrictMs: number;
  /** One strict transaction putting the chunk and the metadata: a sync folded into the append. */
  strictMs: number;
  /**
   * One relaxed transaction shaped like the adapter's append: get the metadata, get the last
   * chunk, put it back with the new bytes while it stays ≤ 64 KiB (else add a chunk), put the
   * metadata.
   */
  relaxedTopUpMs: number;
}

/** The record size the IndexedDB adapter used to top up in place (before it appended a record per append): the floor of that earlier design. */
const TOP_UP_BYTES = 64 << 10;

function result<T>(request: IDBRequest<T>): Promise<T> {
  return new Promise((resolve, reject) => {
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
  });
}

function done(tx: IDBTransaction): Promise<void> {
  return new Promise((resolve, reject) => {
    tx.oncomplete = () => resolve();
    tx.onabort = () => reject(tx.error);
    tx.onerror = () => reject(tx.error);
  });
}

/**
 * The appends' IndexedDB floor, one flush at a time (for a paired run, workload.ts
 * timePairedAppends): `step(n)` commits one strict readwrite transaction adding flush n's bytes as
 * a chunk record and putting a metadata record (raw IndexedDB, committed at once), what a durable
 * flush cannot do with less.
 */
export async function idbFloorSteps(dbName: string, pieces: readonly Uint8Array[]): Promise<{ step(flush: number): Promise<void>; close(): void }> {
  const db = await openFloorDatabase(dbName);
  let offset = 0;
  return {
    step(flush) {
      const piece = pieces[flush]!;
      const tx = db.transaction(["files", "chunks"], "readwrite", { durability: "strict" });
      tx.objectStore("chunks").add(piece, ["floor", offset]);
      offset += piece.length;
      tx.objectStore("files").put({ path: "floor", size: offset });
      tx.commit();
      return done(tx);
    },
    close: () => db.close(),
  };
}

function openFloorDatabase(dbName: string): Promise<IDBDatabase> {
  return new Promise<IDBDatabase>((resolve, reject) => {
    const request = indexedDB.open(dbName, 1);
    request.onupgradeneeded = () => {
      request.result.createObjectStore("files", { keyPath: "path" });
      request.result.createObjectStore("chunks");
    };
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
  });
}

/** Per-iteration times of raw IndexedDB transactions (no idb, no sessionkit), `iterations` each. */
export async function idbFloor(dbName: string, iterations: number, bytes: number): Promise<IdbFloor> {
  const db = await openFloorDatabase(dbName);
  const [chunk] = floorPieces(1, bytes) as [Uint8Array];
  let offset = 0;
  const put = (durability: "relaxed" | "strict", withChunk: boolean) => {
    const tx = db.transaction(["files", "chunks"], "readwrite", { durability });
    if (withChunk) tx.objectStore("chunks").add(chunk, ["floor", (offset += bytes)]);
    tx.objectStore("files").put({ path: "floor", size: offset });
    tx.commit();
    return done(tx);
  };
  const perIteration = async (step: () => Promise<void>) => {
    const start = performance.now();
    for (let i = 0; i < iterations; i++) await step();
    return (performance.now() - start) / iterations;
  };
  try {
    return {
      relaxedMs: await perIteration(() => put("relaxed", true)),
      relaxedReadMetaMs: await perIteration(async () => {
        const tx = db.transaction(["files", "chunks"], "readwrite", { durability: "relaxed" });
        const committed = done(tx);
        const meta = ((await result(tx.objectStore("files").get("read-meta"))) as { path: string; size: number } | undefined) ?? { path: "read-meta", size: 0 };
        tx.objectStore("chunks").add(chunk, ["read-meta", meta.size]);
        meta.size += bytes;
        tx.objectStore("files").put(meta);
        tx.commit();
        await committed;
      }),
      relaxedThenStrictMs: await perIteration(async () => {
        await put("relaxed", true);
        await put("strict", false);
      }),
      strictMs: await perIteration(() => put("strict", true)),
      relaxedTopUpMs: await perIteration(async () => {
        const tx = db.transaction(["files", "chunks"], "readwrite", { durability: "relaxed" });
        const files = tx.objectStore("files");
        const chunks = tx.objectStore("chunks");
        const committed = done(tx);
        const meta = ((await result(files.get("top-up"))) as { path: string; size: number; last: number } | undefined) ?? { path: "top-up", size: 0, last: 0 };
        if (meta.size > 0 && meta.size - meta.last + bytes <= TOP_UP_BYTES) {
          const last = (await result(chunks.get(["top-up", meta.last]))) as Uint8Array;
          const grown = new Uint8Array(last.length + bytes);
          grown.set(last);
          grown.set(chunk, last.length);
          chunks.put(grown, ["top-up", meta.last]);
        } else {
          chunks.add(chunk, ["top-up", meta.size]);
          meta.last = meta.size;
        }
        meta.size += bytes;
        files.put(meta);
        tx.commit();
        await committed;
      }),
    };
  } finally {
    db.close();
  }
}
