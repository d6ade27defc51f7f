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
 * all its pages as by the tabs of one browser window). `relaunch` starts the browser again on the
 * same profile (the last context must be closed first); `close` ends it and removes the profile.
 */
export async function launchProfile(baseURL: string | undefined): Promise<{
  context: BrowserContext;
  directory: string;
  relaunch: () => Promise<BrowserContext>;
  close: () => Promise<void>;
}> {
  const directory = await mkdtemp(join(tmpdir(), "sessionkit-e2e-profile-"));
  const launch = () =>
    chromium.launchPersistentContext(directory, {
      executablePath: chromiumExecutable,
      args: chromiumArgs,
      headless: true,
      ...(baseURL === undefined ? {} : { baseURL }),
    });
  let context = await launch();
  return {
    context,
    directory,
    relaunch: async () => (context = await launch()),
    close: async () => {
      await context.close();
      await rm(directory, { recursive: true, force: true });
    },
  };
}
