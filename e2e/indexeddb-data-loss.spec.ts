/**
 * Chromium deletes an IndexedDB database it finds corrupt and opens an empty one in its place
 * (google/leveldb#1287: a torn record left at the end of LevelDB's log by a crash, appended after
 * at the next launch, fails its checksum at the launch after). indexedDbStorage's `onDataLoss`
 * tells the app. The torn record is written here by hand between launches of one real profile:
 * the bytes a kill mid-append leaves (scripts/soak/leveldb-log.ts).
 */
import { appendFile, readdir } from "node:fs/promises";
import { join } from "node:path";
import { expect, test, type BrowserContext } from "@playwright/test";
import { launchProfile, openApp } from "./helpers.js";
import { VIEWER_URL, openViewer, settled } from "./viewer-helpers.js";

/** A log record's 7-byte header (checksum, length 64, type FULL) and 3 of its 64 payload bytes. */
const TORN_RECORD = Buffer.from([0x12, 0x34, 0x56, 0x78, 0x40, 0x00, 0x01, 0x61, 0x62, 0x63]);

/** Appends TORN_RECORD to every LevelDB log of the profile's IndexedDB (one LevelDB per origin); returns how many. */
async function tearLogs(profileDirectory: string): Promise<number> {
  const leveldbs = join(profileDirectory, "Default", "IndexedDB");
  const logs = (await readdir(leveldbs, { recursive: true })).filter((path) => path.endsWith(".log"));
  for (const log of logs) await appendFile(join(leveldbs, log), TORN_RECORD);
  return logs.length;
}

/** In a new page of `context`: appends `line` to s.jsonl in database `dbName`, then reads what it holds and what onDataLoss said. */
async function appendAndRead(context: BrowserContext, dbName: string, line: string): Promise<{ text: string; losses: { dbName: string; message: string }[] }> {
  const page = await openApp(await context.newPage());
  const result = await page.evaluate(
    async ({ dbName, line }) => {
      const losses: { dbName: string; message: string }[] = [];
      const port = window.sessionkit.indexedDbStorage({ dbName, durability: "strict", onDataLoss: (loss) => losses.push(loss) });
      await port.append("s.jsonl", new TextEncoder().encode(line));
      await port.sync("s.jsonl");
      const text = new TextDecoder().decode((await port.read("s.jsonl")) ?? new Uint8Array());
      await port.close();
      return { text, losses };
    },
    { dbName, line },
  );
  await page.close();
  return result;
}

test("onDataLoss reports the database Chromium found corrupt and replaced with an empty one", async ({ baseURL }) => {
  const profile = await launchProfile(baseURL);
  let context = profile.context;
  try {
    const dbName = "sessionkit-data-loss";
    expect(await appendAndRead(context, dbName, "first\n")).toEqual({ text: "first\n", losses: [] });
    await context.close();

    expect(await tearLogs(profile.directory)).toBeGreaterThan(0);

    // LevelDB reuses the log and appends after the torn record: this launch still reads everything.
    context = await profile.relaunch();
    expect(await appendAndRead(context, dbName, "second\n")).toEqual({ text: "first\nsecond\n", losses: [] });
    await context.close();

    // At this launch the torn record fails its checksum: Chromium deletes the database.
    context = await profile.relaunch();
    const { text, losses } = await appendAndRead(context, dbName, "third\n");
    expect(text).toBe("third\n");
    expect(losses).toEqual([{ dbName, message: expect.stringMatching(/corrupt/) }]);
  } finally {
    await profile.close();
  }
});

test("the viewer tells its user when the browser deleted its stored sessions", async () => {
  const profile = await launchProfile(undefined);
  let context = profile.context;
  try {
    const page = await context.newPage();
    await openViewer(page); // the first run imports the sample into IndexedDB
    await expect(page.locator("#notices")).not.toContainText("corrupt");
    await context.close();

    expect(await tearLogs(profile.directory)).toBeGreaterThan(0);
    // A write anywhere in the origin's IndexedDB (one LevelDB) lands after the torn record.
    context = await profile.relaunch();
    const writer = await context.newPage();
    await writer.goto(VIEWER_URL);
    await writer.evaluate(
      () =>
        new Promise<void>((resolve, reject) => {
          const request = indexedDB.open("another-database");
          request.onupgradeneeded = () => request.result.createObjectStore("records");
          request.onsuccess = () => {
            const tx = request.result.transaction("records", "readwrite", { durability: "strict" });
            tx.objectStore("records").put("value", "key");
            tx.oncomplete = () => resolve();
            tx.onerror = () => reject(tx.error);
          };
          request.onerror = () => reject(request.error);
        }),
    );
    await context.close();

    context = await profile.relaunch();
    const reopened = await context.newPage();
    await reopened.goto(VIEWER_URL);
    await settled(reopened);
    await expect(reopened.locator("#notices [role=alert]")).toContainText("The browser found its stored sessions corrupt and deleted them");
  } finally {
    await profile.close();
  }
});
