/**
 * Sessions written in a page outlive it: after a reload, and in a new page on the same origin,
 * SessionManager.list finds the same sessions and opening them gives the same contexts.
 */
import { randomUUID } from "node:crypto";
import { expect, test } from "@playwright/test";
import { backends, openApp, type Backend } from "./helpers.js";

interface Where {
  backend: Backend;
  name: string;
}

const cwds = ["/work/app", "/work/other"];

/** What a page can see of the stored sessions: every listing, and each session's context and entries. */
async function readBack({ backend, name, cwds }: Where & { cwds: string[] }) {
  const sk = window.sessionkit;
  const storage = sk.openStorage(backend, name);
  const listings: Record<string, unknown[]> = {};
  const sessions: Record<string, unknown> = {};
  for (const cwd of cwds) {
    const infos = await sk.SessionManager.list(storage, cwd);
    listings[cwd] = infos;
    for (const info of infos) {
      const sm = await sk.SessionManager.open(storage, info.path, { readOnly: true });
      sessions[info.path] = { context: sm.buildSessionContext(), entries: sm.getEntries(), name: sm.getSessionName() };
      await sm.close();
    }
  }
  await storage.close?.();
  return { listings, sessions };
}

for (const backend of backends) {
  test(`sessions on ${backend} survive a reload and are seen by a new page`, async ({ page, context }) => {
    const where: Where = { backend, name: `reload-${randomUUID()}` };
    await openApp(page);

    const written = await page.evaluate(
      async ({ backend, name, cwds }) => {
        const sk = window.sessionkit;
        const storage = sk.openStorage(backend, name);
        const contexts: Record<string, unknown> = {};
        for (const [i, cwd] of cwds.entries()) {
          for (let n = 0; n < 2; n++) {
            const sm = await sk.SessionManager.create(storage, cwd);
            sm.appendModelChange("anthropic", `model-${i}-${n}`);
            sm.appendThinkingLevelChange("high");
            const question = sm.appendMessage(sk.userMsg(`question ${i}.${n}`));
            sm.appendMessage(sk.assistantMsg(`answer ${i}.${n}`));
            // A second branch from the question: the context must follow the leaf, not file order.
            sm.branch(question);
            sm.appendMessage(sk.assistantMsg(`other answer ${i}.${n}`));
            sm.appendSessionInfo(`session ${i}.${n}`);
            await sm.flush();
            contexts[sm.getSessionFile()!] = sm.buildSessionContext();
            await sm.close();
          }
        }
        await storage.close?.();
        return contexts;
      },
      { ...where, cwds },
    );

    const before = await page.evaluate(readBack, { ...where, cwds });
    expect(Object.keys(before.sessions).sort()).toEqual(Object.keys(written).sort());
    for (const [path, session] of Object.entries(before.sessions)) {
      expect((session as { context: unknown }).context).toEqual(written[path]);
    }
    for (const cwd of cwds) expect(before.listings[cwd]).toHaveLength(2);

    await page.reload();
    await expect(page.locator("#status")).toHaveText("ready");
    expect(await page.evaluate(readBack, { ...where, cwds })).toEqual(before);

    await page.close();
    const fresh = await openApp(await context.newPage());
    expect(await fresh.evaluate(readBack, { ...where, cwds })).toEqual(before);
  });
}
