/**
 * The ports of a database store (--store), apart from agent-stores.ts (whose AgentStore holds one)
 * and store.ts (which opens them), so that neither imports the other.
 */
import type { StoragePort } from "../src/port.js";

/** A port the CLI closes when the command ends (a database pool would keep the process alive). */
export type ClosableStorage = StoragePort & { close(): Promise<void> };

/**
 * A PostgreSQL store (--store): read and written through ports of its own. Its AgentStore's
 * `root` and `label` are its name (the URL without its password).
 */
export interface DatabaseStore {
  /** A new port over the database; closeAll() closes every one. */
  open(): Promise<ClosableStorage>;
  closeAll(): Promise<void>;
}
