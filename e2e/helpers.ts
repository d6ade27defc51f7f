import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, expect, type BrowserContext, type Page } from "@playwright/test";
import type { Backend } from "./app/main.js";
import { chromiumArgs, chromiumExecutable } from "../chromium.config.js";

export type { Backend };
export const backends: readonly Backend[] = ["indexeddb", "opfs"];

/** Loads the test page and waits until `window.sessionkit` is there. */
export async function openApp(page: Page): Promise<Page> {
  await page.goto("/");
  await expect(page.locator("#status")).toHaveText("ready");
  return page;
}

/**
 * A persistent Chromium context on a fresh profile directory (real on-disk storage, shared by
 * all its pages as by the tabs of one browser window). `close` ends it and removes the profile.
 */
export async function launchProfile(baseURL: string | undefined): Promise<{ context: BrowserContext; close: () => Promise<void> }> {
  const profile = await mkdtemp(join(tmpdir(), "sessionkit-e2e-profile-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: chromiumExecutable,
    args: chromiumArgs,
    headless: true,
    ...(baseURL === undefined ? {} : { baseURL }),
  });
  return {
    context,
    close: async () => {
      await context.close();
      await rm(profile, { recursive: true, force: true });
    },
  };
}
