/**
 * A full disk: a database whose tablespace is a small tmpfs this test mounts. An append that
 * does not fit is StorageError "quota" naming the file, and nothing stored before is lost.
 * (Mounting needs root, as the cluster does under CI; the test fails, never skips, without it.)
 */
import { execFile } from "node:child_process";
import { chown, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, expect, it } from "vitest";
import { postgresStorage, type PostgresStorage } from "../../adapters/postgres/index.js";
import { expectStorageError, pseudoRandomBytes } from "../../src/testing/index.js";
import { freshSchema, pgUrl, sql } from "./helpers.js";

const run = promisify(execFile);
const name = freshSchema("full");
let mountPoint: string;
let storage: PostgresStorage;

beforeAll(async () => {
  mountPoint = await mkdtemp(join(tmpdir(), "sessionkit-pg-full-"));
  await run("mount", ["-t", "tmpfs", "-o", "size=24m", "tmpfs", mountPoint]).catch((error: unknown) => {
    throw new Error(`cannot mount a 24 MiB tmpfs for the full-disk test (needs root): ${(error as Error).message}`);
  });
  const [uid, gid] = await Promise.all([run("id", ["-u", "postgres"]), run("id", ["-g", "postgres"])]);
  await chown(mountPoint, Number(uid.stdout.trim()), Number(gid.stdout.trim()));
  await sql(`CREATE TABLESPACE ${name} LOCATION '${mountPoint}'`);
  await sql(`CREATE DATABASE ${name} TABLESPACE ${name}`);
  const url = new URL(pgUrl());
  url.pathname = `/${name}`;
  storage = postgresStorage({ connection: url.toString() });
});

afterAll(async () => {
  await storage?.close();
  await sql(`DROP DATABASE IF EXISTS ${name}`);
  await sql(`DROP TABLESPACE IF EXISTS ${name}`);
  await run("umount", [mountPoint]).catch(() => {});
  await rm(mountPoint, { recursive: true, force: true });
});

it("an append that does not fit is 'quota', naming the file; what was stored stays", async () => {
  const kept = pseudoRandomBytes(100_000, 1);
  await storage.write("kept/file", kept);
  let error: unknown;
  let appended = 0;
  for (let i = 0; i < 64 && error === undefined; i++) {
    await storage.append("big/file", pseudoRandomBytes(1 << 20, 100 + i)).then(
      () => appended++,
      (failure: unknown) => (error = failure),
    );
  }
  expect(appended).toBeGreaterThan(0);
  const quota = await expectStorageError(Promise.reject(error), "quota");
  expect(quota.message).toContain("big/file");
  expect(await storage.read("kept/file")).toEqual(kept);
  expect((await storage.stat("big/file"))!.size).toBe(appended << 20);
});
