/**
 * A private PostgreSQL cluster for a test or bench run: initdb in a temp dir, started on a free
 * loopback port with trust auth, stopped and deleted at the end. Never the system's own cluster.
 * Under root (initdb refuses root) the server runs as the `postgres` user Debian's package makes.
 */
import { execFile } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { chown, mkdtemp, readFile, rm } from "node:fs/promises";
import { createServer } from "node:net";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

export interface PgCluster {
  /** postgres://postgres@127.0.0.1:<port>/postgres */
  url: string;
  port: number;
  /** The temp dir holding data/, the log and the socket. */
  dir: string;
  stop(): Promise<void>;
}

/** The directory holding initdb and pg_ctl: $SESSIONKIT_PG_BIN, the newest /usr/lib/postgresql/<v>/bin, or PATH. */
export async function findServerBinaries(env: NodeJS.ProcessEnv = process.env, debian = "/usr/lib/postgresql"): Promise<string> {
  const candidates: string[] = [];
  if (env.SESSIONKIT_PG_BIN) candidates.push(env.SESSIONKIT_PG_BIN);
  if (existsSync(debian)) {
    const versions = readdirSync(debian).filter((v) => /^\d+$/.test(v)).sort((a, b) => Number(b) - Number(a));
    candidates.push(...versions.map((v) => path.join(debian, v, "bin")));
  }
  candidates.push(...(env.PATH ?? "").split(path.delimiter).filter(Boolean));
  const found = candidates.find((dir) => existsSync(path.join(dir, "initdb")) && existsSync(path.join(dir, "pg_ctl")));
  if (found) return found;
  throw new Error(
    "PostgreSQL server binaries (initdb, pg_ctl) not found in $SESSIONKIT_PG_BIN, /usr/lib/postgresql/<version>/bin or PATH. " +
      "Install them (Debian: apt-get install postgresql; .ci/run does) or set SESSIONKIT_PG_BIN to their directory.",
  );
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => server.once("error", reject).listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export async function startCluster(options?: { maxConnections?: number }): Promise<PgCluster> {
  const bin = await findServerBinaries();
  const dir = await mkdtemp(path.join(os.tmpdir(), "sessionkit-pg-"));
  const asRoot = process.getuid?.() === 0;
  // initdb refuses root: the server's files belong to the `postgres` user.
  const as = (command: string, args: string[]) => (asRoot ? run("runuser", ["-u", "postgres", "--", path.join(bin, command), ...args]) : run(path.join(bin, command), args));
  const data = path.join(dir, "data");
  const log = path.join(dir, "log");
  try {
    if (asRoot) {
      const { stdout } = await run("id", ["-u", "postgres"]).catch(() => {
        throw new Error("running as root, but there is no `postgres` user to run the server as (Debian's postgresql package makes it)");
      });
      const { stdout: gid } = await run("id", ["-g", "postgres"]);
      await chown(dir, Number(stdout.trim()), Number(gid.trim()));
    }
    await as("initdb", ["-D", data, "-A", "trust", "-U", "postgres", "--no-sync"]);
    for (let attempt = 1; ; attempt++) {
      const port = await freePort();
      const settings = `-k ${dir} -p ${port} -c listen_addresses=127.0.0.1 -c max_connections=${options?.maxConnections ?? 200}`;
      try {
        await as("pg_ctl", ["-D", data, "-l", log, "-o", settings, "-w", "-t", "60", "start"]);
      } catch (error) {
        // Another process may have taken the port between our probe and the server's bind.
        if (attempt < 3) continue;
        const tail = await readFile(log, "utf8").catch(() => "");
        throw new Error(`pg_ctl start failed: ${(error as Error).message}\n${tail.slice(-2000)}`);
      }
      return {
        url: `postgres://postgres@127.0.0.1:${port}/postgres`,
        port,
        dir,
        stop: async () => {
          await as("pg_ctl", ["-D", data, "-m", "fast", "-w", "stop"]).catch(() => as("pg_ctl", ["-D", data, "-m", "immediate", "-w", "stop"]));
          await rm(dir, { recursive: true, force: true });
        },
      };
    }
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
}
