import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { mkdir, mkdtemp, open, readFile, readdir, readlink, rm, utimes, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { nodeFsStorage, type NodeFsStorage } from "../../adapters/node-fs/index.js";
import { describePortConformance, expectStorageError, pseudoRandomBytes } from "../../src/testing/index.js";

const encoder = new TextEncoder();
const ADAPTER_URL = pathToFileURL(path.resolve(import.meta.dirname, "../../adapters/node-fs/index.ts")).href;

async function makeTempDir(): Promise<string> {
  return mkdtemp(path.join(os.tmpdir(), "sessionkit-node-fs-"));
}

for (const watchMode of ["auto", "poll"] as const) {
  describePortConformance(
    `node-fs (watch: ${watchMode === "auto" ? "fs.watch" : "polling every 50 ms"})`,
    async () => {
      const root = await makeTempDir();
      const port = nodeFsStorage({ root, watchMode, pollIntervalMs: 50 });
      return {
        port,
        // Another process's port, as far as the watch can tell: no change of its reaches ours in process.
        openSecond: async () => nodeFsStorage({ root, watchMode, pollIntervalMs: 50 }),
        cleanup: async () => {
          await port.close();
          await rm(root, { recursive: true, force: true });
        },
      };
    },
    { sync: true, locks: true, watch: true, secondPort: true },
  );
}

describe("nodeFsStorage with real files", () => {
  let root: string;
  let port: NodeFsStorage;

  beforeEach(async () => {
    root = await makeTempDir();
    port = nodeFsStorage({ root });
  });

  afterEach(async () => {
    await port.close();
    await rm(root, { recursive: true, force: true });
  });

  it("a write is durable with every directory it made; a sync after it has nothing left to do, one after an append fsyncs", async () => {
    // Every fsync goes through FileHandle.sync: count what each call fsyncs, by path.
    const probe = await open(root, "r");
    const prototype = Object.getPrototypeOf(probe) as { sync: () => Promise<void> };
    await probe.close();
    const synced: string[] = [];
    const real = prototype.sync;
    const spy = vi.spyOn(prototype, "sync").mockImplementation(async function (this: { fd: number }) {
      synced.push(path.relative(root, await readlink(`/proc/self/fd/${this.fd}`)) || ".");
      return real.call(this);
    });
    try {
      await port.write("sessions/--work--/s.jsonl", encoder.encode('{"a":1}\n'));
      // The file (as its temp name), its directory, and the directories made for it in their parents.
      expect(new Set(synced.filter((p) => !p.includes(".tmp")))).toEqual(new Set(["sessions/--work--", "sessions", "."]));
      expect(synced.filter((p) => p.includes(".tmp"))).toHaveLength(1);
      synced.length = 0;
      await port.sync!("sessions/--work--/s.jsonl");
      expect(synced).toEqual([]);
      await port.append("sessions/--work--/s.jsonl", encoder.encode('{"b":2}\n'));
      await port.sync!("sessions/--work--/s.jsonl");
      expect(synced).toEqual(["sessions/--work--/s.jsonl"]);
      synced.length = 0;
      // Into a directory that exists: the file and its directory only.
      await port.write("sessions/--work--/t.jsonl", encoder.encode('{"c":3}\n'));
      expect(synced.filter((p) => !p.includes(".tmp"))).toEqual(["sessions/--work--"]);
    } finally {
      spy.mockRestore();
    }
  });

  it("stores each path as a plain file below root, both ways", async () => {
    await port.append("sessions/--work--/s.jsonl", encoder.encode('{"a":1}\n'));
    await port.write("blobs/abc", encoder.encode("blob"));
    await writeFile(path.join(root, "sessions", "--work--", "outside.txt"), "from fs");

    expect(await readFile(path.join(root, "sessions", "--work--", "s.jsonl"), "utf8")).toBe('{"a":1}\n');
    expect(await readFile(path.join(root, "blobs", "abc"), "utf8")).toBe("blob");
    expect(new TextDecoder().decode((await port.read("sessions/--work--/outside.txt"))!)).toBe("from fs");
  });

  it("write leaves no temp file behind", async () => {
    for (let i = 0; i < 5; i++) await port.write("dir/file.json", encoder.encode(`{"version":${i}}`));

    expect(await readdir(path.join(root, "dir"))).toEqual(["file.json"]);
  });

  it("a failed write removes its temp file and names the path", async () => {
    await mkdir(path.join(root, "dir", "occupied"), { recursive: true }); // rename onto a directory fails

    const error = await expectStorageError(port.write("dir/occupied", encoder.encode("x")), "collision");

    expect(error.message).toBe('cannot write "dir/occupied": it is a directory');
    expect(error.cause).toBeInstanceOf(Error);
    expect(await readdir(path.join(root, "dir"))).toEqual(["occupied"]);
  });

  it("a failed writeFiles removes the failed file's temp file, names its path, and leaves the others whole", async () => {
    await mkdir(path.join(root, "dir", "occupied"), { recursive: true });
    const names = ["a", "b", "occupied", "c", "d"];
    const files = names.map((name) => ({ path: `dir/${name}`, bytes: async () => encoder.encode(`bytes of ${name}`) }));

    const error = await expectStorageError(port.writeFiles(files), "collision");

    expect(error.path).toBe("dir/occupied");
    const left = await readdir(path.join(root, "dir"));
    expect(left.filter((name) => name.endsWith(".tmp"))).toEqual([]);
    for (const name of left.filter((name) => name !== "occupied")) expect(await readFile(path.join(root, "dir", name), "utf8")).toBe(`bytes of ${name}`);
  });

  it("list hides its own temp files", async () => {
    await port.write("dir/real.txt", encoder.encode("x"));
    await writeFile(path.join(root, "dir", ".real.txt.0123456789ab.tmp"), "leftover of a crash");

    expect((await port.list("dir")).map((entry) => entry.name)).toEqual(["real.txt"]);
  });

  it("keeps appends right across more files than it keeps handles open", async () => {
    const files = Array.from({ length: 40 }, (_, i) => `many/f${i}`);
    for (let round = 0; round < 3; round++) {
      await Promise.all(files.map((file) => port.append(file, encoder.encode(`${round};`))));
    }

    for (const file of files) expect(await readFile(path.join(root, file), "utf8")).toBe("0;1;2;");
  });

  it("appends again after close", async () => {
    await port.append("reopen", encoder.encode("a"));
    await port.close();
    await port.append("reopen", encoder.encode("b"));

    expect(await readFile(path.join(root, "reopen"), "utf8")).toBe("ab");
  });

  it("reads a range of a large file without returning more than the range", async () => {
    const bytes = pseudoRandomBytes(8 * 1024 * 1024, 7);
    await writeFile(path.join(root, "large"), bytes);

    const range = (await port.read("large", { offset: 4 * 1024 * 1024 + 3, length: 16 }))!;

    expect(range.length).toBe(16);
    expect(Array.from(range)).toEqual(Array.from(bytes.subarray(4 * 1024 * 1024 + 3, 4 * 1024 * 1024 + 19)));
  });

  it("maps a missing file to not-found and a file in the way to collision, naming storage paths only", async () => {
    const missing = await expectStorageError(port.truncate("nowhere/file", 0), "not-found");
    expect(missing.message).toContain("nowhere/file");
    expect(missing.path).toBe("nowhere/file");

    await port.append("plain", encoder.encode("x"));
    const belowFile = await expectStorageError(port.append("plain/child", encoder.encode("y")), "collision");
    expect(belowFile.message).toBe('cannot append to "plain/child": "plain" is a file');
    expect(belowFile.path).toBe("plain/child");
    expect(belowFile.cause).toMatchObject({ code: "ENOTDIR" });
  });

  it("a lock below a file, or whose lock file is a directory, fails with collision", async () => {
    await port.append("plain", encoder.encode("x"));
    const belowFile = await expectStorageError(port.acquireLock("plain/writer"), "collision");
    expect(belowFile.message).toBe('cannot lock "plain/writer": "plain" is a file');

    await mkdir(path.join(root, "held.lock"));
    const lockFileIsDirectory = await expectStorageError(port.acquireLock("held"), "collision");
    expect(lockFileIsDirectory.message).toBe('cannot lock "held": "held.lock" is a directory');
    expect(lockFileIsDirectory.path).toBe("held");
  });

  it('expands a "~/" root to the home directory', async () => {
    const saved = { HOME: process.env.HOME, USERPROFILE: process.env.USERPROFILE };
    process.env.HOME = process.env.USERPROFILE = root; // os.homedir() reads these first
    try {
      const home = nodeFsStorage({ root: "~/.pi/agent" });
      await home.write("settings.json", encoder.encode("{}"));
      await home.close();

      expect(home.root).toBe(path.join(root, ".pi", "agent"));
      expect(await readFile(path.join(root, ".pi", "agent", "settings.json"), "utf8")).toBe("{}");
    } finally {
      restoreEnv(saved);
    }
  });

  describe("lock files", () => {
    const lockFile = () => path.join(root, "sessions", "writer.lock");

    async function plantLock(contents: string): Promise<void> {
      await mkdir(path.dirname(lockFile()), { recursive: true });
      await writeFile(lockFile(), contents);
    }

    it("records its owner and deletes the lock file on release", async () => {
      const lock = await port.acquireLock("sessions/writer");
      expect(JSON.parse(await readFile(lockFile(), "utf8"))).toMatchObject({
        pid: process.pid,
        hostname: os.hostname(),
        acquiredAt: expect.any(String),
      });

      await lock.release();
      await expect(readFile(lockFile())).rejects.toMatchObject({ code: "ENOENT" });
    });

    it("takes over the lock of a process that has exited", async () => {
      const exited = spawn(process.execPath, ["-e", ""]);
      await once(exited, "exit");
      await plantLock(JSON.stringify({ pid: exited.pid, hostname: os.hostname(), acquiredAt: new Date().toISOString() }));

      const lock = await port.acquireLock("sessions/writer");

      expect(JSON.parse(await readFile(lockFile(), "utf8"))).toMatchObject({ pid: process.pid });
      await lock.release();
    });

    it("refuses a lock held by a live process, and takes it over once that process is killed", async () => {
      const holder = await spawnLockHolder(root, "sessions/writer");
      try {
        const error = await expectStorageError(port.acquireLock("sessions/writer"), "locked");
        expect(error.message).toBe(`sessions/writer is locked by pid ${holder.pid} on host ${os.hostname()}`);
      } finally {
        holder.kill("SIGKILL");
        await once(holder, "exit");
      }

      const lock = await port.acquireLock("sessions/writer");
      expect(JSON.parse(await readFile(lockFile(), "utf8"))).toMatchObject({ pid: process.pid });
      await lock.release();
    });

    it("records its start time and boot on Linux, and refuses the lock while that process lives", async () => {
      const lock = await port.acquireLock("sessions/writer");
      const owner = JSON.parse(await readFile(lockFile(), "utf8")) as { startTime: number; bootId: string };
      expect(owner.startTime).toBe(await startTimeOf(process.pid));
      expect(owner.bootId).toBe((await readFile("/proc/sys/kernel/random/boot_id", "utf8")).trim());
      await expectStorageError(port.acquireLock("sessions/writer"), "locked");
      await lock.release();
    });

    it("takes over a lock whose pid was reused: a live process with another start time", async () => {
      // This test process is alive; the lock says its owner started one tick earlier than it did.
      const bootId = (await readFile("/proc/sys/kernel/random/boot_id", "utf8")).trim();
      const startTime = await startTimeOf(process.pid);
      await plantLock(JSON.stringify({ pid: process.pid, hostname: os.hostname(), acquiredAt: "", startTime: startTime - 1, bootId }));

      const lock = await port.acquireLock("sessions/writer");

      expect(JSON.parse(await readFile(lockFile(), "utf8"))).toMatchObject({ pid: process.pid, startTime });
      await lock.release();
    });

    it("takes over a lock taken before the host last booted, even if its pid is alive now", async () => {
      const startTime = await startTimeOf(process.pid);
      await plantLock(JSON.stringify({ pid: process.pid, hostname: os.hostname(), acquiredAt: "", startTime, bootId: "an-earlier-boot" }));

      const lock = await port.acquireLock("sessions/writer");
      await lock.release();
    });

    it("keeps judging a lock file without a start time (older ones) by its pid alone", async () => {
      const holder = await spawnLockHolder(root, "sessions/other");
      try {
        await plantLock(JSON.stringify({ pid: holder.pid, hostname: os.hostname(), acquiredAt: "" }));
        await expectStorageError(port.acquireLock("sessions/writer"), "locked");
      } finally {
        holder.kill("SIGKILL");
        await once(holder, "exit");
      }
    });

    it("reads the start time after the last parenthesis of a command name with spaces and parentheses", async () => {
      // A process named "a) b (c" : /proc/<pid>/stat holds "(a) b (c)".
      const named = spawn(process.execPath, ["-e", "process.title = 'a) b (c'; setInterval(() => {}, 1 << 30)"], { stdio: "ignore" });
      try {
        await expect.poll(async () => (await readFile(`/proc/${named.pid}/stat`, "utf8")).includes("(a) b (c)")).toBe(true);
        const bootId = (await readFile("/proc/sys/kernel/random/boot_id", "utf8")).trim();
        const startTime = await startTimeOf(named.pid!);
        await plantLock(JSON.stringify({ pid: named.pid, hostname: os.hostname(), acquiredAt: "", startTime, bootId }));
        await expectStorageError(port.acquireLock("sessions/writer"), "locked");
        await plantLock(JSON.stringify({ pid: named.pid, hostname: os.hostname(), acquiredAt: "", startTime: startTime + 1, bootId }));
        const lock = await port.acquireLock("sessions/writer");
        await lock.release();
      } finally {
        named.kill("SIGKILL");
        await once(named, "exit");
      }
    });

    it("never takes over a lock owned on another host", async () => {
      await plantLock(JSON.stringify({ pid: 999_999_999, hostname: `not-${os.hostname()}`, acquiredAt: "" }));

      await expectStorageError(port.acquireLock("sessions/writer"), "locked");
    });

    it("takes over an unreadable lock file only once it is older than 10 s", async () => {
      await plantLock("{half-written");
      await expectStorageError(port.acquireLock("sessions/writer"), "locked");

      const past = new Date(Date.now() - 11_000);
      await utimes(lockFile(), past, past);
      const lock = await port.acquireLock("sessions/writer");
      await lock.release();
    });
  });
});

/** Field 22 of /proc/<pid>/stat, read here independently of the adapter (ps prints it in other units). */
async function startTimeOf(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, "utf8");
  const afterName = stat.slice(stat.lastIndexOf(")") + 1).trim().split(/\s+/);
  return Number(afterName[19]);
}

/** Starts a node process that takes `key` through the adapter and holds it until killed. */
async function spawnLockHolder(root: string, key: string): Promise<ChildProcess & { pid: number }> {
  const script = `
    const { nodeFsStorage } = await import(process.env.ADAPTER_URL);
    await nodeFsStorage({ root: process.env.LOCK_ROOT }).acquireLock(process.env.LOCK_KEY);
    process.stdout.write("locked\\n");
    setInterval(() => {}, 1 << 30);
  `;
  const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
    env: { ...process.env, ADAPTER_URL, LOCK_ROOT: root, LOCK_KEY: key },
    stdio: ["ignore", "pipe", "inherit"],
  });
  let output = "";
  for await (const chunk of child.stdout!) {
    output += String(chunk);
    if (output.includes("locked\n")) return child as ChildProcess & { pid: number };
  }
  throw new Error(`lock holder exited without taking the lock (exit code ${child.exitCode})`);
}

function restoreEnv(saved: Record<string, string | undefined>): void {
  for (const [name, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
}
