/** A session, or one branch of it, as a zip archive in memory, ready to download. */
import { exportArchive, type ExportSessionSpec, type ExportSummary, type StoragePort } from "../../src/index.js";

export async function exportToBlob(storage: StoragePort, spec: ExportSessionSpec): Promise<{ blob: Blob; summary: ExportSummary }> {
  const chunks: Uint8Array<ArrayBuffer>[] = [];
  const sink = new WritableStream<Uint8Array>({
    // Copied: the writer owns the chunk it hands over and may reuse its buffer.
    write: (chunk) => void chunks.push(chunk.slice()),
  });
  const summary = await exportArchive(storage, [spec], sink, { generator: "sessionkit viewer" });
  return { blob: new Blob(chunks, { type: "application/zip" }), summary };
}

/** A file name for the download: the session id, and the leaf for a branch. */
export function archiveFileName(sessionId: string, leafId?: string): string {
  const safe = (s: string) => s.replace(/[^A-Za-z0-9_-]/g, "_");
  return leafId === undefined ? `session-${safe(sessionId)}.zip` : `session-${safe(sessionId)}-branch-${safe(leafId)}.zip`;
}

/** Starts the browser's download of `blob`. */
export function downloadBlob(blob: Blob, fileName: string): void {
  const url = URL.createObjectURL(blob);
  const link = document.createElement("a");
  link.href = url;
  link.download = fileName;
  link.hidden = true;
  document.body.append(link);
  link.click();
  link.remove();
  // The download has its own reference once started; revoke later, not at once (Firefox).
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}
