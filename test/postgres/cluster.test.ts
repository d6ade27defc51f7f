/** The test cluster's own checks: it finds the server, and a missing server is a clear failure, never a skip. */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, it } from "vitest";
import { findServerBinaries } from "./cluster.js";
import { sql } from "./helpers.js";

it("the run's cluster is a server this run started, on loopback, with synchronous_commit on", async () => {
  const [row] = await sql<{ address: string; data: string; sync: string }>(
    "SELECT inet_server_addr()::text AS address, current_setting('data_directory') AS data, current_setting('synchronous_commit') AS sync",
  );
  expect(row).toMatchObject({ address: "127.0.0.1/32", sync: "on" });
  expect(row!.data.startsWith(join(tmpdir(), "sessionkit-pg-"))).toBe(true);
});

it("a missing server binary is an error that says what to install", async () => {
  const empty = await mkdtemp(join(tmpdir(), "sessionkit-no-pg-"));
  try {
    await expect(findServerBinaries({ PATH: empty }, join(empty, "no-such-dir"))).rejects.toThrow(/initdb, pg_ctl\) not found.*apt-get install postgresql/);
  } finally {
    await rm(empty, { recursive: true, force: true });
  }
});
