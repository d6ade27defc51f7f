/**
 * A StoragePort over a Map of whole files, private to the archive code: it lets `readSessionFile`
 * parse bytes that are not in any store yet, and holds the blobs of plain files until an import
 * commits. (The core may not import adapters/memory.)
 */
import { StorageError, checkStoragePath, type DirEntry, type StoragePort } from "../port.js";
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
      if (!range) return file;
      const start = Math.min(range.offset, file.length);
      return file.subarray(start, range.length === undefined ? file.length : Math.min(file.length, start + range.length));
    },
    async stat(path) {
      const file = files.get(checkStoragePath(path));
      return file ? { size: file.length, mtimeMs } : null;
    },
    async list(dir) {
      checkStoragePath(dir, { allowRoot: true });
      const out = new Map<string, DirEntry>();
      for (const [path, bytes] of files) {
        if (dir !== "" && !path.startsWith(dir + "/")) continue;
        const rest = dir === "" ? path : path.slice(dir.length + 1);
        const slash = rest.indexOf("/");
        const name = slash < 0 ? rest : rest.slice(0, slash);
        out.set(name, slash < 0 ? { name, kind: "file", size: bytes.length, mtimeMs } : { name, kind: "dir", size: 0, mtimeMs });
      }
      return [...out.values()];
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
