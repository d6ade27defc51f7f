/**
 * A read-only `sessionkit serve` over a PostgreSQL store lists and searches its sessions itself
 * (GET …/sessions, …/search): the same answers as the core over the database, its catalog and
 * search index kept in the database's own `.sessionkit/` (the server's cache keeper), the
 * sessions untouched.
 */
import { afterAll, describe, expect, it } from "vitest";
import { readOnlyStorage } from "../../adapters/read-only.js";
import { startServe } from "../../cli/serve/server.js";
import { listAllSessions, SessionManager } from "../../src/index.js";
import { searchSessions } from "../../src/search/search.js";
import { listServedSessions, searchServedSessions } from "../../web-demo/src/data/serve-source.js";
import type { StoreSearchOptions } from "../../web-demo/src/data/source.js";
import { assistantMsg, userMsg } from "../shared/messages.js";
import { dropSchema, freshSchema, openStorage, pgUrl, sql } from "./helpers.js";

const schema = freshSchema("servesearch");

afterAll(async () => {
  await dropSchema(schema);
});

describe("sessionkit serve --store postgres://… (read-only)", () => {
  it("lists and searches the sessions as the core does over the database; the caches go to its .sessionkit/, the sessions are unchanged", async () => {
    const writer = openStorage(schema);
    for (let i = 0; i < 3; i++) {
      const session = await SessionManager.create(writer, `/work/pg-${i}`);
      session.appendMessage(userMsg(`question ${i} about the okapi`));
      session.appendMessage(assistantMsg(i === 1 ? "Okapis are giraffes' kin." : "No idea."));
      await session.close();
    }
    await writer.close();
    const sessionRows = () => sql<{ path: string; size: string }>(`SELECT path, size::text FROM ${schema}.files WHERE path LIKE 'sessions/%' ORDER BY path`);
    const before = await sessionRows();

    const server = await startServe({ stores: [{ storage: openStorage(schema), root: `${pgUrl()}?schema=${schema}` }], port: 0, viewerDir: null });
    // The core's answers, read through a port that writes nothing (its search index stays in memory).
    const reader = openStorage(schema);
    try {
      const store = server.stores[0]!.id;
      const options: StoreSearchOptions = { sources: ["user", "assistant"], limit: 50 };
      const listed = await listServedSessions(server.origin, store, server.token);
      const hits = await searchServedSessions(server.origin, store, server.token, "okapi", options);
      // The server's index is in the database before the core's own search below.
      const kit = await sql<{ path: string }>(`SELECT path FROM ${schema}.files WHERE path LIKE '.sessionkit/search/%' ORDER BY path`);
      expect(kit.map((row) => row.path)).toEqual([".sessionkit/search/text.sqlite"]);
      expect(listed).toEqual(await listAllSessions(readOnlyStorage(reader), { catalog: false }));
      expect(hits.map((hit) => hit.role).sort()).toEqual(["assistant", "user", "user", "user"]);
      expect(hits).toEqual(await searchSessions(readOnlyStorage(reader), "okapi", options));
      expect(await sessionRows()).toEqual(before);
    } finally {
      await reader.close();
      await server.close();
    }
  });
});
