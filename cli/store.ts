/**
 * Where the CLI's bytes come from: the stores it reads (every agent's, --root, or a database with
 * --store). The storage that holds a file argument: session-argument.ts.
 */
import { stat } from "node:fs/promises";
import type { Stats } from "node:fs";
import nodePath from "node:path";
import { expandHome } from "../adapters/node-fs/index.js";
import type { AgentStore } from "./agent-stores.js";
import type { ClosableStorage, DatabaseStore } from "./database-store.js";
import { CliError } from "./errors.js";
import { readingStorage } from "./store-cache.js";

/** The storage root: --root, else $PI_CODING_AGENT_DIR (as pi reads it), else ~/.pi/agent. */
export function resolveRoot(rootFlag: string | undefined, cwd: string, env: NodeJS.ProcessEnv): string {
  const raw = rootFlag ?? (env.PI_CODING_AGENT_DIR || "~/.pi/agent");
  return nodePath.resolve(cwd, expandHome(raw));
}

/** The file's stat, null when nothing is there; any other failure is an error naming the path. */
export async function statOrNull(path: string): Promise<Stats | null> {
  try {
    return await stat(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT" || code === "ENOTDIR") return null;
    throw new CliError("failed", `${path}: cannot read it (${code ?? (error as Error).message})`);
  }
}

export async function requireDirectory(dir: string): Promise<void> {
  const info = await statOrNull(dir);
  if (!info) throw new CliError("not-found", `${dir}: no such directory (the storage root; set it with --root)`);
  if (!info.isDirectory()) throw new CliError("invalid", `${dir} is not a directory (the storage root; set it with --root)`);
}

/**
 * The store of --store URL: postgres://user:password@host:port/db, optionally ?schema=NAME (the
 * schema holding the store; "sessionkit" by default), which is not passed on to the server.
 */
export function databaseStore(url: string): AgentStore & { database: DatabaseStore } {
  const { connection, schema, name } = parsePostgresStore(url);
  const opened: ClosableStorage[] = [];
  return {
    agent: "pi",
    root: name,
    label: name,
    layout: "pi",
    database: {
      open: async () => {
        // Loaded only for --store: other commands need no database client.
        const { postgresStorage } = await import("../adapters/postgres/index.js");
        const storage = postgresStorage({ connection, ...(schema === null ? {} : { schema }) });
        opened.push(storage);
        return storage;
      },
      closeAll: async () => {
        await Promise.all(opened.splice(0).map((storage) => storage.close()));
      },
    },
  };
}

function parsePostgresStore(store: string): { connection: string; schema: string | null; name: string } {
  let url: URL;
  try {
    url = new URL(store);
  } catch {
    throw new CliError("usage", `--store ${JSON.stringify(store)}: not a valid URL`);
  }
  const schema = url.searchParams.get("schema");
  url.searchParams.delete("schema");
  const connection = url.toString();
  if (url.password !== "") url.password = "***";
  if (schema !== null) url.searchParams.set("schema", schema);
  return { connection, schema, name: url.toString() };
}

/** The port a store is read through: a database's own, or the directory's through the cache (readingStorage). */
export async function storeStorage(store: AgentStore, env: NodeJS.ProcessEnv, home: string): Promise<ClosableStorage> {
  return store.database ? store.database.open() : readingStorage(store.root, env, home);
}

/** How messages name a storage path of a store: a file under a directory's root, or the path in a database. */
export function storeFileOf(store: AgentStore, path: string): string {
  return store.database ? path : nodePath.join(store.root, ...path.split("/"));
}
