/**
 * Two tabs of one browser (two pages of one persistent Chromium context) on the same session:
 * one writer at a time, a read-only view for the other, and a file that ends up valid JSONL
 * holding every entry either tab had acknowledged (flushed), in order.
 */
import { randomUUID } from "node:crypto";
import { expect, test } from "@playwright/test";
import { backends, launchProfile, openApp } from "./helpers.js";

for (const backend of backends) {
  // Closing the session alone must hand it over: tab 1's port (and OPFS worker) stays alive.
  test(`two tabs on ${backend}: the second gets "locked" or a read-only view, then writes after the first closes the session`, async ({ baseURL }) => {
    const { context, close } = await launchProfile(baseURL);
    try {
      const tab1 = await openApp(await context.newPage());
      const tab2 = await openApp(await context.newPage());
      const name = `two-tabs-${randomUUID()}`;

      const first = await tab1.evaluate(
        async ({ backend, name }) => {
          const sk = window.sessionkit;
          const sm = await sk.SessionManager.create(sk.openStorage(backend, name), "/work/app");
          sk.held.set("session", sm);
          const ids = [sm.appendMessage(sk.userMsg("tab 1 asks")), sm.appendMessage(sk.assistantMsg("tab 1 answers"))];
          await sm.flush();
          return { path: sm.getSessionFile()!, ids };
        },
        { backend, name },
      );

      const writableOpen = await tab2.evaluate(
        async ({ backend, name, path }) => {
          const sk = window.sessionkit;
          const storage = sk.openStorage(backend, name);
          sk.held.set("storage", storage);
          try {
            const sm = await sk.SessionManager.open(storage, path);
            await sm.close();
            return { opened: true };
          } catch (error) {
            return { opened: false, locked: sk.isStorageError(error, "locked"), message: String(error) };
          }
        },
        { backend, name, path: first.path },
      );
      expect(writableOpen).toMatchObject({ opened: false, locked: true });

      const view = await tab2.evaluate(async ({ path }) => {
        const sk = window.sessionkit;
        const storage = sk.held.get("storage") as ReturnType<typeof sk.openStorage>;
        const sm = await sk.SessionManager.open(storage, path, { readOnly: true });
        let appendError = "";
        try {
          sm.appendMessage(sk.userMsg("must not be written"));
        } catch (error) {
          appendError = (error as { code?: string }).code ?? String(error);
        }
        const result = { readOnly: sm.isReadOnly(), ids: sm.getEntries().map((entry) => entry.id), appendError };
        await sm.close();
        return result;
      }, first);
      expect(view).toEqual({ readOnly: true, ids: first.ids, appendError: "read-only" });

      // Tab 1 still owns the session: the read-only view took nothing from it.
      const tab1More = await tab1.evaluate(async () => {
        const sk = window.sessionkit;
        const sm = sk.held.get("session") as Awaited<ReturnType<typeof sk.SessionManager.create>>;
        const ids = [sm.appendMessage(sk.userMsg("tab 1 again")), sm.appendMessage(sk.assistantMsg("tab 1 again, answered"))];
        await sm.flush();
        await sm.close();
        return ids;
      });

      const second = await tab2.evaluate(async ({ path }) => {
        const sk = window.sessionkit;
        const storage = sk.held.get("storage") as ReturnType<typeof sk.openStorage>;
        const sm = await sk.SessionManager.open(storage, path);
        const seen = sm.getEntries().map((entry) => entry.id);
        const ids = [sm.appendMessage(sk.userMsg("tab 2 asks")), sm.appendMessage(sk.assistantMsg("tab 2 answers"))];
        await sm.flush();
        await sm.close();
        const file = new TextDecoder().decode((await storage.read(path)) ?? new Uint8Array());
        await storage.close?.();
        return { seen, ids, file };
      }, first);

      const acknowledged = [...first.ids, ...tab1More, ...second.ids];
      expect(second.seen).toEqual([...first.ids, ...tab1More]);
      expect(second.file.endsWith("\n")).toBe(true);
      const records = second.file
        .slice(0, -1)
        .split("\n")
        .map((line) => JSON.parse(line) as { type: string; id: string; parentId?: string | null });
      expect(records.filter((record) => record.type === "session")).toHaveLength(1);
      expect(records[0]!.type).toBe("session");
      const entries = records.slice(1);
      expect(entries.map((entry) => entry.id)).toEqual(acknowledged);
      // One unbroken chain: tab 2 continued from tab 1's last entry.
      expect(entries.map((entry) => entry.parentId)).toEqual([null, ...acknowledged.slice(0, -1)]);
    } finally {
      await close();
    }
  });
}
