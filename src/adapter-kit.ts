/**
 * `sessionkit/adapter-kit`: what writing a storage adapter takes. An adapter implements
 * StoragePort over its backend, checks every path it is given with `checkStoragePath` (and every
 * range with `checkByteRange`), and reports failures as StorageError with one of the
 * StorageErrorCode values, which the core acts on ("not-found", "locked", "quota", ...).
 * `sessionkit/testing`'s `describePortConformance` checks the result. A port with every optional
 * method is typed as a FullStoragePort, one with some of them as a StoragePortWith. A backend
 * with no cheaper way to make many files durable at once gives `writeFiles` as
 * `(files) => writeFilesThenSync(port, files)`.
 *
 * @module sessionkit/adapter-kit
 */
export {
  StorageError,
  isStorageError,
  checkStoragePath,
  parentDir,
  baseName,
  joinPath,
  checkByteRange,
  clampByteRange,
  listChildren,
  writeFilesThenSync,
  type StorageErrorCode,
  type StoragePort,
  type StoragePortWith,
  type FullStoragePort,
  type FileStat,
  type FileToWrite,
  type DirEntry,
  type ByteRange,
  type StorageLock,
  type StorageWatch,
} from "./port.js";
