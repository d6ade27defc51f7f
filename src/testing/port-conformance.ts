/**
 * The conformance suite every StoragePort passes, in Node and in a real browser alike: so it uses
 * only universal APIs (Uint8Array, TextEncoder), never node:* or Buffer.
 *
 * Each test works below its own unique directory, so `makePort` may hand out one shared port.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { StorageError, isStorageError, writeFilesThenSync, type FileToWrite, type StorageErrorCode, type StoragePort } from "../port.js";
import { waitFor } from "./wait.js";

/** What `makePort` hands {@link describePortConformance} for each test. */
export interface PortUnderTest {
  /** The port to test; it may be one port shared by every test (each works in its own directory). */
  port: StoragePort;
  /** Releases what makePort created (close the port, delete a temp dir); runs after each test. */
  cleanup?: () => Promise<void>;
  /**
   * A second live port over the same place, as another tab, process or connection holds one
   * (the suite closes it). Without it, the cases about changes made elsewhere do not run.
   */
  openSecond?: () => Promise<StoragePort>;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const KiB = 1024;
const MiB = 1024 * KiB;
const INVALID_PATHS = ["../x", "/abs", "a//b", "a\\b", "C:/x", ""];

let testDirCounter = 0;

/** Optional port methods the adapter under test has; their tests run only when declared. */
export interface PortCapabilities {
  /** The port has `sync`. */
  sync: boolean;
  /** The port has `acquireLock`. */
  locks: boolean;
  /** `watch` (change notifications); absent means false. */
  watch?: boolean;
  /** makePort gives `openSecond`: the cases about changes made elsewhere run. Absent means false. */
  secondPort?: boolean;
}

/** How long a watch case waits for a notification before it fails: notifications may be delayed, not lost. */
const WATCH_WAIT_MS = 10_000;

/**
 * Registers vitest tests (one `describe` block named after `name`) that check a StoragePort
 * behaves as sessionkit needs: reads, ranges, appends, atomic writes, listings, errors (path
 * collisions among them) and, when `capabilities` declares them, sync, locks, watches and changes
 * made through a second port.
 *
 * @param makePort called before each test; gives the port and how to clean up after it
 * @param capabilities the optional methods the port has; default sync, locks and watch
 */
export function describePortConformance(
  name: string,
  makePort: () => Promise<PortUnderTest>,
  capabilities: PortCapabilities = { sync: true, locks: true, watch: true },
): void {
  describe(`StoragePort conformance: ${name}`, () => {
    let port: StoragePort;
    let cleanup: (() => Promise<void>) | undefined;
    let openSecond: (() => Promise<StoragePort>) | undefined;
    /** This test's own top-level directory. */
    let dir: string;
    /** Watches and second ports a test opened, closed after it. */
    let opened: { close?(): Promise<void> }[] = [];

    beforeEach(async () => {
      ({ port, cleanup, openSecond } = await makePort());
      dir = `conformance-${++testDirCounter}-${Math.random().toString(36).slice(2, 10)}`;
    });

    afterEach(async () => {
      for (const item of opened.splice(0).reverse()) await item.close?.();
      await cleanup?.();
    });

    async function readText(path: string, range?: { offset: number; length?: number }): Promise<string | null> {
      const bytes = await port.read(path, range);
      return bytes === null ? null : decoder.decode(bytes);
    }

    it("reads and stats a missing file as null", async () => {
      expect(await port.read(`${dir}/missing.txt`)).toBeNull();
      expect(await port.read(`${dir}/missing.txt`, { offset: 0, length: 4 })).toBeNull();
      expect(await port.stat(`${dir}/missing.txt`)).toBeNull();
    });

    it("append creates the file and its parent directories", async () => {
      await port.append(`${dir}/a/b/c.txt`, encoder.encode("abc"));

      expect(await readText(`${dir}/a/b/c.txt`)).toBe("abc");
      expect(await port.list(`${dir}/a/b`)).toMatchObject([{ name: "c.txt", kind: "file", size: 3 }]);
      expect(await port.list(`${dir}/a`)).toMatchObject([{ name: "b", kind: "dir", size: 0 }]);
      expect(await port.list(dir)).toMatchObject([{ name: "a", kind: "dir" }]);
      expect((await port.list("")).find((entry) => entry.name === dir)).toMatchObject({ name: dir, kind: "dir" });
    });

    it("an empty append creates an empty file", async () => {
      await port.append(`${dir}/empty`, new Uint8Array(0));

      expect(await port.stat(`${dir}/empty`)).toMatchObject({ size: 0 });
      expect(await port.read(`${dir}/empty`)).toEqual(new Uint8Array(0));
    });

    it("several appends read back as their concatenation", async () => {
      for (const part of ["one\n", "two\n", "", "three\n"]) await port.append(`${dir}/log`, encoder.encode(part));

      const bytes = await port.read(`${dir}/log`);
      expect(bytes).toBeInstanceOf(Uint8Array);
      expect(decoder.decode(bytes!)).toBe("one\ntwo\nthree\n");
    });

    it("reads byte ranges, clamped to the end of the file", async () => {
      const path = `${dir}/range`;
      await port.append(path, encoder.encode("hello "));
      await port.append(path, encoder.encode("world!"));

      expect(await readText(path, { offset: 6 })).toBe("world!");
      expect(await readText(path, { offset: 1, length: 3 })).toBe("ell");
      expect(await readText(path, { offset: 4, length: 4 })).toBe("o wo"); // spans both appends
      expect(await readText(path, { offset: 8, length: 100 })).toBe("rld!");
      expect(await readText(path, { offset: 12 })).toBe("");
      expect(await readText(path, { offset: 100, length: 5 })).toBe("");
      expect(await readText(path, { offset: 3, length: 0 })).toBe("");
    });

    it("stat reports size and an mtime that does not go back after an append", async () => {
      const path = `${dir}/stat`;
      await port.append(path, encoder.encode("12345"));
      const before = await port.stat(path);
      expect(before).toMatchObject({ size: 5 });
      expect(Number.isFinite(before!.mtimeMs)).toBe(true);

      await port.append(path, encoder.encode("678"));
      const after = await port.stat(path);

      expect(after!.size).toBe(8);
      expect(after!.mtimeMs).toBeGreaterThanOrEqual(before!.mtimeMs);
    });

    it("lists files and subdirectories with kinds and sizes, and [] for a missing directory", async () => {
      await port.append(`${dir}/list/a.txt`, encoder.encode("aaa"));
      await port.write(`${dir}/list/b.bin`, encoder.encode("bbbbb"));
      await port.append(`${dir}/list/sub/c.txt`, encoder.encode("c"));

      const entries = (await port.list(`${dir}/list`)).sort((x, y) => (x.name < y.name ? -1 : 1));

      expect(entries.map(({ name, kind, size }) => ({ name, kind, size }))).toEqual([
        { name: "a.txt", kind: "file", size: 3 },
        { name: "b.bin", kind: "file", size: 5 },
        { name: "sub", kind: "dir", size: 0 },
      ]);
      for (const entry of entries) expect(Number.isFinite(entry.mtimeMs)).toBe(true);
      expect(await port.list(`${dir}/no-such-dir`)).toEqual([]);
    });

    it("write replaces the content and creates parent directories", async () => {
      const path = `${dir}/w/x/y.txt`;
      await port.write(path, encoder.encode("a rather long first version"));
      await port.write(path, encoder.encode("second"));

      expect(await readText(path)).toBe("second");
      expect(await port.stat(path)).toMatchObject({ size: 6 });
      expect(await port.list(`${dir}/w/x`)).toMatchObject([{ name: "y.txt", kind: "file", size: 6 }]);
    });

    it("a read during a write sees the old bytes or the new ones, never a mix", async () => {
      const path = `${dir}/atomic`;
      const old = new Uint8Array(256 * KiB).fill(1);
      const next = new Uint8Array(384 * KiB).fill(2);
      await port.write(path, old);

      const writing = port.write(path, next);
      const seen = await Promise.all(Array.from({ length: 8 }, () => port.read(path)));
      await writing;

      for (const bytes of seen) {
        const expected = bytes!.length === old.length ? old : next;
        expect(bytes!.length).toBe(expected.length);
        expect(checksum(bytes!)).toBe(checksum(expected));
      }
      expect(checksum((await port.read(path))!)).toBe(checksum(next));
    });

    it("an append after a write continues after the written bytes", async () => {
      const path = `${dir}/write-append`;
      await port.append(path, encoder.encode("stale content that write replaces"));
      await port.write(path, encoder.encode("fresh"));
      await port.append(path, encoder.encode("+more"));

      expect(await readText(path)).toBe("fresh+more");
    });

    /** The port's `writeFiles`, or the fallback the core uses for a port without one. */
    function writeFiles(files: readonly FileToWrite[]): Promise<void> {
      return port.writeFiles ? port.writeFiles(files) : writeFilesThenSync(port, files);
    }

    /** Files whose `bytes()` count their calls and can be made to fail. */
    function filesToWrite(contents: Record<string, string | Error>): { files: FileToWrite[]; asked: Map<string, number> } {
      const asked = new Map<string, number>();
      const files = Object.entries(contents).map(([path, content]) => ({
        path,
        bytes: async () => {
          asked.set(path, (asked.get(path) ?? 0) + 1);
          if (content instanceof Error) throw content;
          return encoder.encode(content);
        },
      }));
      return { files, asked };
    }

    it("writeFiles writes each file as write does, asking for each one's bytes once", async () => {
      await port.append(`${dir}/many/replaced.txt`, encoder.encode("a longer old version, appended"));
      const contents: Record<string, string> = { [`${dir}/many/replaced.txt`]: "new", [`${dir}/many/deep/new.txt`]: "made with its directory" };
      for (let i = 0; i < 20; i++) contents[`${dir}/many/blobs/${String(i).padStart(2, "0")}`] = `blob ${i}`;
      const { files, asked } = filesToWrite(contents);

      await writeFiles(files);

      for (const [path, text] of Object.entries(contents)) expect(await readText(path), path).toBe(text);
      expect([...asked.values()]).toEqual(files.map(() => 1));
      expect((await port.list(`${dir}/many/blobs`)).map((entry) => entry.name)).toEqual(Object.keys(contents).slice(2).map((path) => path.slice(-2)));
      await port.append(`${dir}/many/replaced.txt`, encoder.encode("+appended"));
      expect(await readText(`${dir}/many/replaced.txt`)).toBe("new+appended");
      await writeFiles([]);
    });

    it("writeFiles checks every path before it writes anything", async () => {
      for (const invalid of INVALID_PATHS) {
        const { files, asked } = filesToWrite({ [`${dir}/valid.txt`]: "valid", [invalid]: "invalid" });
        await expectStorageError(writeFiles(files), "invalid", invalid);
        expect(asked.size, invalid).toBe(0);
      }
      expect(await port.stat(`${dir}/valid.txt`)).toBeNull();
    });

    it("writeFiles fails with a failing bytes() as it is, leaving no part of that file", async () => {
      const failure = new Error("the source of this file failed");
      const contents: Record<string, string | Error> = {};
      for (let i = 0; i < 12; i++) contents[`${dir}/partly/${String(i).padStart(2, "0")}`] = i === 5 ? failure : `file ${i}`;
      const { files } = filesToWrite(contents);

      await expect(writeFiles(files)).rejects.toBe(failure);

      // Not a transaction: files other than the failed one may be there, each whole.
      const listed = await port.list(`${dir}/partly`);
      expect(listed.map((entry) => entry.name)).not.toContain("05");
      for (const entry of listed) expect(await readText(`${dir}/partly/${entry.name}`)).toBe(contents[`${dir}/partly/${entry.name}`]);
      await writeFiles(filesToWrite({ [`${dir}/partly/05`]: "written after all" }).files);
      expect(await readText(`${dir}/partly/05`)).toBe("written after all");
    });

    it("truncate cuts a file, and later appends continue from the cut", async () => {
      const path = `${dir}/truncate`;
      await port.append(path, encoder.encode("hello world"));

      await port.truncate(path, 5);
      expect(await readText(path)).toBe("hello");
      expect(await port.stat(path)).toMatchObject({ size: 5 });

      await port.append(path, encoder.encode("!"));
      expect(await readText(path)).toBe("hello!");

      await port.truncate(path, 0);
      expect(await readText(path)).toBe("");
    });

    it("truncate of a missing file fails with not-found", async () => {
      await expectStorageError(port.truncate(`${dir}/missing`, 0), "not-found");
    });

    it("remove deletes the file and is idempotent", async () => {
      await port.append(`${dir}/rm/gone.txt`, encoder.encode("x"));
      await port.append(`${dir}/rm/kept.txt`, encoder.encode("y"));

      await port.remove(`${dir}/rm/gone.txt`);
      await port.remove(`${dir}/rm/gone.txt`);
      await port.remove(`${dir}/rm/never-existed.txt`);

      expect(await port.read(`${dir}/rm/gone.txt`)).toBeNull();
      expect(await port.stat(`${dir}/rm/gone.txt`)).toBeNull();
      expect((await port.list(`${dir}/rm`)).map((entry) => entry.name)).toEqual(["kept.txt"]);
    });

    it("rejects invalid paths with StorageError 'invalid'", async () => {
      const data = encoder.encode("x");
      for (const path of INVALID_PATHS) {
        await expectStorageError(port.read(path), "invalid", path);
        await expectStorageError(port.append(path, data), "invalid", path);
        await expectStorageError(port.write(path, data), "invalid", path);
        await expectStorageError(port.stat(path), "invalid", path);
        await expectStorageError(port.truncate(path, 0), "invalid", path);
        await expectStorageError(port.remove(path), "invalid", path);
      }
      await expectStorageError(port.list("../x"), "invalid", "../x");
    });

    /**
     * Makes `${dir}/file` a file and `${dir}/dir` a directory (it holds `inner`), and returns the
     * paths that collide with them: a directory at the path, a file at its parent or further up.
     * `inTheWay` matches the message's naming of what is in the way.
     */
    async function collisionStore(): Promise<{ path: string; inTheWay: RegExp }[]> {
      await port.write(`${dir}/file`, encoder.encode("file"));
      await port.write(`${dir}/dir/inner`, encoder.encode("inner"));
      const theFile = new RegExp(`${dir}/file(?!/)`);
      return [
        { path: `${dir}/dir`, inTheWay: /directory/ },
        { path: `${dir}/file/below`, inTheWay: theFile },
        { path: `${dir}/file/deeper/below`, inTheWay: theFile },
      ];
    }

    async function expectCollision(promise: Promise<unknown>, path: string, inTheWay: RegExp, what: string): Promise<void> {
      const error = await expectStorageError(promise, "collision", what);
      // A port over a directory of another (a subtree, a served store's sessions/) may name its inner path.
      expect(error.path === path || error.path?.endsWith(`/${path}`), `${what}: the error's path ${error.path}`).toBe(true);
      expect(error.message, what).toContain(path);
      expect(error.message, what).toMatch(inTheWay);
    }

    async function expectCollisionStoreUnchanged(): Promise<void> {
      expect(await readText(`${dir}/file`)).toBe("file");
      expect(await readText(`${dir}/dir/inner`)).toBe("inner");
      expect((await port.list(dir)).map(({ name, kind }) => [name, kind])).toEqual([
        ["dir", "dir"],
        ["file", "file"],
      ]);
      expect((await port.list(`${dir}/dir`)).map(({ name }) => name)).toEqual(["inner"]);
    }

    it("append and write where a directory is, or below a file, fail with 'collision' naming the path and what is in the way", async () => {
      for (const { path, inTheWay } of await collisionStore()) {
        await expectCollision(port.append(path, encoder.encode("x")), path, inTheWay, `append ${path}`);
        await expectCollision(port.write(path, encoder.encode("x")), path, inTheWay, `write ${path}`);
        await expectCollision(port.append(path, new Uint8Array(0)), path, inTheWay, `empty append ${path}`);
      }
      await expectCollisionStoreUnchanged();
    });

    it("truncate and remove where a directory is, or below a file, fail with 'collision'", async () => {
      for (const { path, inTheWay } of await collisionStore()) {
        await expectCollision(port.truncate(path, 0), path, inTheWay, `truncate ${path}`);
        await expectCollision(port.remove(path), path, inTheWay, `remove ${path}`);
      }
      await expectCollisionStoreUnchanged();
    });

    if (capabilities.sync) {
      it("sync where a directory is, or below a file, fails with 'collision' (on a port whose sync checks the file is there)", async () => {
        const collisions = await collisionStore();
        // A port whose sync is only a barrier for queued changes (postgres) resolves for any path.
        const syncChecksTheFile = await port.sync!(`${dir}/missing`).then(
          () => false,
          (error: unknown) => {
            if (isStorageError(error, "not-found")) return true;
            throw error;
          },
        );
        for (const { path, inTheWay } of collisions) {
          if (syncChecksTheFile) await expectCollision(port.sync!(path), path, inTheWay, `sync ${path}`);
          else await port.sync!(path);
        }
        await expectCollisionStoreUnchanged();
      });
    }

    it("read, stat and list of a directory or of a path below a file find no file there", async () => {
      for (const { path } of await collisionStore()) {
        expect(await port.read(path), path).toBeNull();
        expect(await port.read(path, { offset: 0, length: 1 }), path).toBeNull();
        expect(await port.stat(path), path).toBeNull();
      }
      expect(await port.list(`${dir}/file`)).toEqual([]);
      expect(await port.list(`${dir}/file/below`)).toEqual([]);
    });

    it("a collision fails only its own call: changes issued with it land", async () => {
      const [atDirectory, belowFile] = await collisionStore();
      const outcomes = await Promise.allSettled([
        port.append(`${dir}/ok`, encoder.encode("one;")),
        port.append(belowFile!.path, encoder.encode("x")),
        port.append(`${dir}/ok`, encoder.encode("two;")),
        port.write(atDirectory!.path, encoder.encode("x")),
        port.write(`${dir}/written`, encoder.encode("w")),
        port.append(`${dir}/ok`, encoder.encode("three;")),
      ]);
      expect(outcomes.map((outcome) => outcome.status)).toEqual(["fulfilled", "rejected", "fulfilled", "rejected", "fulfilled", "fulfilled"]);
      for (const i of [1, 3]) expect((outcomes[i] as PromiseRejectedResult).reason).toMatchObject({ code: "collision" });
      expect(await readText(`${dir}/ok`)).toBe("one;two;three;");
      expect(await readText(`${dir}/written`)).toBe("w");
      expect(await readText(`${dir}/file`)).toBe("file");
      expect((await port.list(`${dir}/dir`)).map(({ name }) => name)).toEqual(["inner"]);
    });

    it("round-trips all 256 byte values through append and write", async () => {
      const all = Uint8Array.from({ length: 256 }, (_, i) => i);
      await port.append(`${dir}/bytes-appended`, all);
      await port.write(`${dir}/bytes-written`, all);

      expect(await port.read(`${dir}/bytes-appended`)).toEqual(all);
      expect(await port.read(`${dir}/bytes-written`)).toEqual(all);
    });

    it("keeps its own copies: mutating a read result or a stored buffer changes nothing stored", async () => {
      const appended = encoder.encode("abc");
      const written = encoder.encode("xyz");
      await port.append(`${dir}/appended`, appended);
      await port.write(`${dir}/written`, written);
      appended.fill(0);
      written.fill(0);

      (await port.read(`${dir}/appended`))!.fill(0);
      (await port.read(`${dir}/written`))!.fill(0);

      expect(await readText(`${dir}/appended`)).toBe("abc");
      expect(await readText(`${dir}/written`)).toBe("xyz");
    });

    it("a 5 MiB file appended in 64 KiB chunks reads back equal, also as a range", async () => {
      const path = `${dir}/big`;
      const source = pseudoRandomBytes(5 * MiB, 42);
      for (let offset = 0; offset < source.length; offset += 64 * KiB) {
        await port.append(path, source.subarray(offset, offset + 64 * KiB));
      }

      const whole = (await port.read(path))!;
      expect(whole.length).toBe(source.length);
      expect(checksum(whole)).toBe(checksum(source));

      const offset = 40 * 64 * KiB - 512; // straddles two appended chunks
      const range = (await port.read(path, { offset, length: KiB }))!;
      expect(range.length).toBe(KiB);
      expect(checksum(range)).toBe(checksum(source.subarray(offset, offset + KiB)));
    });

    it("200 appends issued without awaiting land in call order", async () => {
      const path = `${dir}/ordered`;
      const lines = Array.from({ length: 200 }, (_, i) => `line ${i}\n`);

      await Promise.all(lines.map((line) => port.append(path, encoder.encode(line))));

      expect(await readText(path)).toBe(lines.join(""));
    });

    it("interleaved appends to two files stay separate", async () => {
      const pending: Promise<void>[] = [];
      for (let i = 0; i < 100; i++) {
        pending.push(port.append(`${dir}/left`, encoder.encode(`L${i};`)));
        pending.push(port.append(`${dir}/right`, encoder.encode(`R${i};`)));
      }
      await Promise.all(pending);

      const expected = (prefix: string) => Array.from({ length: 100 }, (_, i) => `${prefix}${i};`).join("");
      expect(await readText(`${dir}/left`)).toBe(expected("L"));
      expect(await readText(`${dir}/right`)).toBe(expected("R"));
    });

    if (capabilities.sync) {
      it("sync resolves and leaves the content unchanged", async () => {
        if (!port.sync) throw new Error(`${name} declares sync but has none`);
        const path = `${dir}/synced`;
        await port.append(path, encoder.encode("appended"));
        await port.sync(path);
        expect(await readText(path)).toBe("appended");

        await port.write(path, encoder.encode("written"));
        await port.sync(path);
        expect(await readText(path)).toBe("written");
      });
    }


    if (capabilities.watch) {
      /** Every path a watch reported, in order; `seen(path)` waits until `path` is among them. */
      async function record(on: StoragePort, watched: string) {
        if (!on.watch) throw new Error(`${name} declares watch but has none`);
        const paths: string[] = [];
        const watch = await on.watch(watched, (path) => paths.push(path));
        opened.push(watch);
        return {
          paths,
          watch,
          seen: (path: string) => waitFor(() => paths.includes(path), () => `a notification for ${path} (got ${JSON.stringify(paths)})`, WATCH_WAIT_MS),
        };
      }

      it("watch: an append, a write, a truncate and a remove below the directory are each reported with the file's path", async () => {
        const changes = await record(port, dir);
        // Each step waits for its own notification: coalesced notifications still name each file.
        await port.append(`${dir}/a.jsonl`, encoder.encode("one\n"));
        await changes.seen(`${dir}/a.jsonl`);
        await port.write(`${dir}/sub/b.json`, encoder.encode("{}"));
        await changes.seen(`${dir}/sub/b.json`);
        await port.append(`${dir}/deep/er/c.jsonl`, encoder.encode("x\n"));
        await changes.seen(`${dir}/deep/er/c.jsonl`);

        changes.paths.length = 0;
        await port.truncate(`${dir}/a.jsonl`, 2);
        await changes.seen(`${dir}/a.jsonl`);
        changes.paths.length = 0;
        await port.remove(`${dir}/sub/b.json`);
        await changes.seen(`${dir}/sub/b.json`);
      });

      it("watch: reports only paths at or below the watched directory (or the directory itself)", async () => {
        const changes = await record(port, `${dir}/watched`);
        await port.append(`${dir}/other/x`, encoder.encode("outside"));
        await port.append(`${dir}/watched-not/y`, encoder.encode("a sibling sharing the prefix"));
        await port.append(`${dir}/watched/z`, encoder.encode("inside"));
        await changes.seen(`${dir}/watched/z`);
        for (const path of changes.paths) expect(path === `${dir}/watched` || path.startsWith(`${dir}/watched/`), path).toBe(true);
      });

      it("watch: a directory that does not exist yet; files created below it later are reported", async () => {
        const changes = await record(port, `${dir}/not/yet`);
        await port.append(`${dir}/not/yet/there/s.jsonl`, encoder.encode("{}\n"));
        await changes.seen(`${dir}/not/yet/there/s.jsonl`);
      });

      it("watch: the root (\"\") sees everything; two watches of one directory each hear every change", async () => {
        const everything = await record(port, "");
        const first = await record(port, dir);
        const second = await record(port, dir);
        await port.append(`${dir}/s.jsonl`, encoder.encode("{}\n"));
        await Promise.all([everything.seen(`${dir}/s.jsonl`), first.seen(`${dir}/s.jsonl`), second.seen(`${dir}/s.jsonl`)]);
      });

      it("watch: after close() resolves nothing more is reported; close is idempotent", async () => {
        const closed = await record(port, dir);
        const open = await record(port, dir);
        await port.append(`${dir}/before`, encoder.encode("x"));
        await closed.seen(`${dir}/before`);
        await closed.watch.close();
        await closed.watch.close();
        closed.paths.length = 0;

        await port.append(`${dir}/after`, encoder.encode("x"));
        // The other watch of the same directory proves the change has been reported by now.
        await open.seen(`${dir}/after`);
        expect(closed.paths).toEqual([]);
      });

      if (capabilities.secondPort) it("watch: a change made through a second port over the same place is reported", async () => {
        if (!openSecond) throw new Error(`${name} declares secondPort but makePort gave no openSecond`);
        const second = await openSecond();
        opened.push(second);
        const changes = await record(port, dir);
        await second.append(`${dir}/from-elsewhere.jsonl`, encoder.encode("{}\n"));
        await changes.seen(`${dir}/from-elsewhere.jsonl`);
        await second.write(`${dir}/written-elsewhere`, encoder.encode("x"));
        await changes.seen(`${dir}/written-elsewhere`);
        // And the other way round.
        const theirs = await record(second, dir);
        await port.append(`${dir}/from-here.jsonl`, encoder.encode("{}\n"));
        await theirs.seen(`${dir}/from-here.jsonl`);
      });

      if (capabilities.secondPort) it("watch: a burst of changes through a second port: every changed file is reported", async () => {
        // Ports may coalesce what they tell other contexts; none of the burst may be left out.
        const second = await openSecond!();
        opened.push(second);
        const changes = await record(port, dir);
        const paths = Array.from({ length: 20 }, (_, i) => `${dir}/burst-${i % 7}/s-${i}.jsonl`);
        for (const path of paths) await second.append(path, encoder.encode("{}\n"));
        await Promise.all(paths.map((path) => changes.seen(path)));
      });

      it("watch: an invalid directory is refused with 'invalid'", async () => {
        await expectStorageError(port.watch!("../x", () => {}), "invalid");
      });
    }

    if (capabilities.locks) {
      it("acquireLock is exclusive per key until released", async () => {
        if (!port.acquireLock) throw new Error(`${name} declares locks but has no acquireLock`);
        const first = await port.acquireLock(`${dir}/writer`);
        const error = await expectStorageError(port.acquireLock(`${dir}/writer`), "locked");
        expect(error.message).toContain(`${dir}/writer`);

        const other = await port.acquireLock(`${dir}/other-writer`);

        await first.release();
        await first.release();
        const second = await port.acquireLock(`${dir}/writer`);
        await second.release();
        await other.release();
      });
    }
  });
}

/** Awaits a promise that must reject with a StorageError of `code`, and returns that error. */
export async function expectStorageError(
  promise: Promise<unknown>,
  code: StorageErrorCode,
  what = "",
): Promise<StorageError> {
  const outcome = await promise.then(
    (value: unknown) => ({ resolved: value }),
    (error: unknown) => ({ rejected: error }),
  );
  expect(outcome, `${what} should reject`).toHaveProperty("rejected");
  const error = (outcome as { rejected: unknown }).rejected;
  expect(error, what).toBeInstanceOf(StorageError);
  expect((error as StorageError).code, what).toBe(code);
  return error as StorageError;
}

/**
 * A 32-bit checksum of `bytes`, to compare large contents in test messages.
 * FNV-1a: cheap enough for megabytes, and a changed, missing or moved byte almost surely changes it.
 */
export function checksum(bytes: Uint8Array): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < bytes.length; i++) hash = Math.imul(hash ^ bytes[i]!, 0x01000193);
  return hash >>> 0;
}

/** Deterministic bytes (xorshift32) so a failure reproduces. */
export function pseudoRandomBytes(length: number, seed: number): Uint8Array {
  const bytes = new Uint8Array(length);
  let state = seed >>> 0 || 1;
  for (let i = 0; i < length; i++) {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    bytes[i] = state & 0xff;
  }
  return bytes;
}
