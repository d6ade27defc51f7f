/** The port of an in-memory session: it holds no files and is never written (persist is off). */
import { StorageError, type StoragePort } from "../port.js";

export function detachedPort(): StoragePort {
  const refuse = async (path: string): Promise<never> => {
    throw new StorageError("unsupported", `an in-memory session stores nothing (tried to write ${path})`, { path });
  };
  return {
    kind: "detached",
    read: async () => null,
    stat: async () => null,
    list: async () => [],
    append: refuse,
    write: refuse,
    truncate: refuse,
    remove: async () => {},
  };
}
