/**
 * The browser soak's cut-back of torn LevelDB log tails (scripts/soak/leveldb-log.ts), on a log
 * Chromium 156 wrote for IndexedDB (test/fixtures/leveldb/chromium-indexeddb.log: 16 records, one
 * of them a 36,000-byte value split over two blocks), cut and damaged the ways a kill and a reused
 * log leave it.
 */
import { copyFile, mkdir, mkdtemp, readFile, rm, truncate, appendFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { scanLog, trimTornLogTails } from "../../scripts/soak/leveldb-log.js";

const FIXTURE = join(import.meta.dirname, "..", "fixtures", "leveldb", "chromium-indexeddb.log");
const BLOCK_SIZE = 32_768;
/** A record header promising 1,000 bytes, and 3 of them: what a kill mid-append leaves. */
const TORN_RECORD = Buffer.from([1, 2, 3, 4, 0xe8, 0x03, 1, 9, 9, 9]);

describe("scanLog", () => {
  it("finds Chromium's log complete", async () => {
    const log = await readFile(FIXTURE);
    expect(scanLog(log)).toEqual({ completeEnd: log.length, corruptAt: null });
  });

  it("ends a log cut anywhere at the last record that is whole, which then scans complete", async () => {
    const log = await readFile(FIXTURE);
    const cuts = [...Array.from({ length: Math.ceil(log.length / 37) }, (_, i) => i * 37), ...Array.from({ length: 20 }, (_, i) => BLOCK_SIZE - 10 + i), log.length - 1];
    const ends = new Set<number>();
    let previous = 0;
    for (const cut of cuts.sort((a, b) => a - b)) {
      const { completeEnd, corruptAt } = scanLog(log.subarray(0, cut));
      expect(corruptAt).toBeNull();
      expect(completeEnd).toBeLessThanOrEqual(cut);
      expect(completeEnd).toBeGreaterThanOrEqual(previous);
      expect(scanLog(log.subarray(0, completeEnd))).toEqual({ completeEnd, corruptAt: null });
      previous = completeEnd;
      ends.add(completeEnd);
    }
    expect(ends.size).toBeGreaterThan(10);
  });

  it("ends a log cut inside a fragmented record before its first fragment", async () => {
    // The fixture's 36,000-byte value: a FIRST fragment from byte 2,068 to the end of the first
    // block, its LAST fragment from 32,768 to 38,227 (the headers, read by hand).
    const log = await readFile(FIXTURE);
    for (const cut of [2_068 + 7 + 1, BLOCK_SIZE - 1, BLOCK_SIZE, BLOCK_SIZE + 3, BLOCK_SIZE + 7 + 100, 38_226]) {
      expect(scanLog(log.subarray(0, cut))).toEqual({ completeEnd: 2_068, corruptAt: null });
    }
    expect(scanLog(log.subarray(0, 38_227)).completeEnd).toBe(38_227);
  });

  it("reports a torn record that more records were appended after (LevelDB's reuse_logs) as corrupt", async () => {
    const log = await readFile(FIXTURE);
    const reused = Buffer.concat([log, TORN_RECORD.subarray(0, 7), log.subarray(0, 2_000)]);
    expect(scanLog(reused)).toEqual({ completeEnd: log.length, corruptAt: log.length });
  });
});

/** A LevelDB directory at `dir`, its write-ahead log a copy of the fixture. */
async function levelDb(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true });
  await copyFile(FIXTURE, join(dir, "000003.log"));
  await writeFile(join(dir, "CURRENT"), "MANIFEST-000001\n");
}

describe("trimTornLogTails", () => {
  let profile: string;
  let indexedDbDir: string;
  let database: string;

  beforeEach(async () => {
    profile = await mkdtemp(join(tmpdir(), "sessionkit-leveldb-log-"));
    indexedDbDir = join(profile, "IndexedDB");
    database = join(indexedDbDir, "http_127.0.0.1_8000.indexeddb.leveldb");
    await levelDb(database);
  });

  afterEach(async () => {
    await rm(profile, { recursive: true, force: true });
  });

  it("leaves complete logs alone", async () => {
    await copyFile(FIXTURE, join(database, "MANIFEST-000001"));
    expect(await trimTornLogTails([indexedDbDir])).toEqual([]);
    expect(await readFile(join(database, "000003.log"))).toEqual(await readFile(FIXTURE));
  });

  it("cuts a torn record off a write-ahead log and a MANIFEST, back to the bytes Chromium wrote", async () => {
    const fixture = await readFile(FIXTURE);
    await appendFile(join(database, "000003.log"), TORN_RECORD);
    await copyFile(FIXTURE, join(database, "MANIFEST-000001"));
    await truncate(join(database, "MANIFEST-000001"), fixture.length - 5);
    const tails = await trimTornLogTails([indexedDbDir]);
    expect(tails).toEqual([
      { file: join(database, "000003.log"), size: fixture.length + TORN_RECORD.length, completeEnd: fixture.length, corruptAt: null, trimmed: true },
      { file: join(database, "MANIFEST-000001"), size: fixture.length - 5, completeEnd: expect.any(Number), corruptAt: null, trimmed: true },
    ]);
    expect(await readFile(join(database, "000003.log"))).toEqual(fixture);
    const manifest = await readFile(join(database, "MANIFEST-000001"));
    expect(manifest.length).toBe(tails[1]!.completeEnd);
    expect(manifest).toEqual(fixture.subarray(0, manifest.length));
    expect(await trimTornLogTails([indexedDbDir])).toEqual([]);
  });

  it("only reports a torn tail when asked not to trim, and never touches a corrupt log", async () => {
    await appendFile(join(database, "000003.log"), TORN_RECORD);
    const fixture = await readFile(FIXTURE);
    const corrupt = Buffer.from(fixture);
    corrupt[100] = corrupt[100]! ^ 0xff;
    await writeFile(join(database, "MANIFEST-000001"), corrupt);
    const tails = await trimTornLogTails([indexedDbDir], false);
    expect(tails.map(({ trimmed, corruptAt }) => ({ trimmed, corrupt: corruptAt !== null }))).toEqual([
      { trimmed: false, corrupt: false },
      { trimmed: false, corrupt: true },
    ]);
    expect((await readFile(join(database, "000003.log"))).length).toBe(fixture.length + TORN_RECORD.length);
    expect((await trimTornLogTails([indexedDbDir])).map(({ trimmed }) => trimmed)).toEqual([true, false]);
    expect(await readFile(join(database, "MANIFEST-000001"))).toEqual(corrupt);
  });

  it("finds the LevelDBs nested under each root (OPFS's directory databases under File System)", async () => {
    const fileSystem = join(profile, "File System");
    await levelDb(join(fileSystem, "Origins"));
    await levelDb(join(fileSystem, "000", "t", "Paths"));
    await appendFile(join(fileSystem, "000", "t", "Paths", "000003.log"), TORN_RECORD);
    await appendFile(join(database, "000003.log"), TORN_RECORD);
    const tails = await trimTornLogTails([indexedDbDir, fileSystem]);
    expect(tails.map(({ file, trimmed }) => ({ file, trimmed }))).toEqual([
      { file: join(database, "000003.log"), trimmed: true },
      { file: join(fileSystem, "000", "t", "Paths", "000003.log"), trimmed: true },
    ]);
  });

  it("finds nothing where the profile has no such folder yet", async () => {
    expect(await trimTornLogTails([join(profile, "missing")])).toEqual([]);
  });
});
