/**
 * PgBouncer in transaction pooling mode in front of the run's cluster, for a test: its own config,
 * a free loopback port, one server connection per database (so that every client's transactions
 * share it, and no session state outlives a transaction). Under root it runs as the `postgres`
 * user, as the cluster does (PgBouncer refuses root). Needs Debian's pgbouncer package.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import { createConnection, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface Bouncer {
  /** postgres://… through PgBouncer, to the database of the cluster URL it was started with. */
  url: string;
  stop(): Promise<void>;
}

const BINARY = ["/usr/sbin/pgbouncer", "/usr/bin/pgbouncer"].find((path) => existsSync(path));

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => server.once("error", reject).listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export async function startBouncer(clusterUrl: string): Promise<Bouncer> {
  if (!BINARY) throw new Error("pgbouncer not found in /usr/sbin or /usr/bin: install Debian's pgbouncer package (.ci/run does)");
  const target = new URL(clusterUrl);
  const database = target.pathname.slice(1);
  const dir = await mkdtemp(join(tmpdir(), "sessionkit-pgbouncer-"));
  await chmod(dir, 0o777); // the `postgres` user writes its log and pid file here
  const port = await freePort();
  const ini = join(dir, "pgbouncer.ini");
  await writeFile(join(dir, "users.txt"), `"${target.username}" ""\n`);
  await writeFile(
    ini,
    [
      "[databases]",
      `${database} = host=${target.hostname} port=${target.port} dbname=${database} user=${target.username}`,
      "[pgbouncer]",
      "listen_addr = 127.0.0.1",
      `listen_port = ${port}`,
      "unix_socket_dir =",
      "auth_type = trust",
      `auth_file = ${join(dir, "users.txt")}`,
      "pool_mode = transaction",
      "default_pool_size = 1",
      "max_client_conn = 100",
      `logfile = ${join(dir, "log")}`,
      "",
    ].join("\n"),
  );
  const asRoot = process.getuid?.() === 0;
  const child: ChildProcess = asRoot ? spawn("runuser", ["-u", "postgres", "--", BINARY, ini], { stdio: "ignore" }) : spawn(BINARY, [ini], { stdio: "ignore" });
  const exited = new Promise((resolve) => child.once("exit", resolve));
  // Ready once it accepts connections.
  for (let waited = 0; ; waited += 50) {
    const up = await new Promise<boolean>((resolve) => {
      const socket = createConnection(port, "127.0.0.1", () => {
        socket.destroy();
        resolve(true);
      }).once("error", () => resolve(false));
    });
    if (up) break;
    if (child.exitCode !== null || waited > 10_000) {
      child.kill("SIGKILL");
      await rm(dir, { recursive: true, force: true });
      throw new Error(`pgbouncer did not start on port ${port} (exit ${child.exitCode})`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const url = new URL(clusterUrl);
  url.port = String(port);
  return {
    url: url.toString(),
    stop: async () => {
      child.kill("SIGTERM");
      await exited;
      await rm(dir, { recursive: true, force: true });
    },
  };
}
