/**
 * A StoragePort over a Map of whole files, private to the archive code: it lets `readSessionFile`
 * parse bytes that are not in any store yet, and holds the blobs of plain files until an import
 * commits. (The core may not import adapters/memory.)
 */
import { StorageError, checkStoragePath, clampByteRange, listChildren, type StoragePort } from "../port.js";
import { concatAll } from "../format/bytes.js";

export interface BytesPort extends StoragePort {
  readonly files: Map<string, Uint8Array>;
}

export function bytesPort(initial: Iterable<[string, Uint8Array]> = []): BytesPort {
  const files = new Map<string, Uint8Array>(initial);
  const mtimeMs = Date.now();
  return {
    kind: "bytes",
    files,
    async read(path, range) {
      const file = files.get(checkStoragePath(path));
      if (!file) return null;
      const [start, end] = clampByteRange(range, file.length);
      return file.subarray(start, end);
    },
    async stat(path) {
      const file = files.get(checkStoragePath(path));
      return file ? { size: file.length, mtimeMs } : null;
    },
    async list(dir) {
      checkStoragePath(dir, { allowRoot: true });
      return listChildren(dir, Array.from(files, ([path, bytes]) => ({ path, size: bytes.length, mtimeMs })));
    },
    async append(path, data) {
      files.set(checkStoragePath(path), concatAll([files.get(path) ?? new Uint8Array(), data.slice()]));
    },
    async write(path, data) {
      files.set(checkStoragePath(path), data.slice());
    },
    async truncate(path, size) {
      const file = files.get(checkStoragePath(path));
      if (!file) throw new StorageError("not-found", `no file ${path}`, { path });
      files.set(path, file.slice(0, size));
    },
    async remove(path) {
      files.delete(checkStoragePath(path));
    },
  };
}
