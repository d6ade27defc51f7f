/** What the postgres tests share: the run's cluster, a fresh schema per store, SQL to look inside. */
import { randomBytes } from "node:crypto";
import pg from "pg";
import { inject } from "vitest";
import { postgresStorage, type PostgresStorage } from "../../adapters/postgres/index.js";

/** The URL of the run's private cluster (global-setup.ts). */
export function pgUrl(): string {
  return inject("pgUrl");
}

/** A schema name no other test uses: each store starts empty. */
export function freshSchema(prefix = "t"): string {
  return `${prefix}_${randomBytes(6).toString("hex")}`;
}

export function openStorage(schema: string, options?: { maxConnections?: number }): PostgresStorage {
  return postgresStorage({ connection: pgUrl(), schema, ...options });
}

/** Runs SQL on the cluster outside any port (to look at rows, kill backends, drop schemas). */
export async function sql<Row extends pg.QueryResultRow = pg.QueryResultRow>(text: string, params: unknown[] = []): Promise<Row[]> {
  const client = new pg.Client(pgUrl());
  await client.connect();
  try {
    return (await client.query<Row>(text, params)).rows;
  } finally {
    await client.end();
  }
}

export async function dropSchema(schema: string): Promise<void> {
  await sql(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
}

/** Polls `check` until it returns a value other than undefined, or fails after `timeoutMs`. */
export async function waitFor<T>(what: string, check: () => Promise<T | undefined> | T | undefined, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
