/**
 * readOnlyStorage and scopedStorage over a memory port: the conformance suite on what each lets
 * through (every path writable, every path shown), then what each refuses, with the codes and
 * messages the rpc server and `sessionkit serve` give their clients.
 */
import { describe, expect, it } from "vitest";
import { memoryStorage } from "../../adapters/memory/index.js";
import { readOnlyStorage } from "../../adapters/read-only.js";
import { scopedStorage } from "../../adapters/scoped.js";
import { describePortConformance, expectStorageError } from "../../src/testing/index.js";

const text = (value: string) => new TextEncoder().encode(value);

describePortConformance("readOnlyStorage (memory, every path excepted)", async () => ({ port: readOnlyStorage(memoryStorage(), { except: [""] }) }));
describePortConformance("scopedStorage (memory, every path shown)", async () => ({ port: scopedStorage(memoryStorage(), { paths: [""] }) }));

describe("readOnlyStorage", () => {
  it("refuses every change outside `except` with read-only, naming the op and the path; reads, listings and syncs go through", async () => {
    const base = memoryStorage();
    await base.write("sessions/a.jsonl", text("line\n"));
    const port = readOnlyStorage(base, { except: [".sessionkit"] });
    for (const [op, attempt] of [
      ["append", () => port.append("sessions/a.jsonl", text("more\n"))],
      ["write", () => port.write("sessions/b.jsonl", text("x"))],
      ["truncate", () => port.truncate("sessions/a.jsonl", 0)],
      ["remove", () => port.remove("sessions/a.jsonl")],
      ["acquireLock", () => port.acquireLock!("sessions/a.jsonl")],
      // ".sessionkit-old" is beside the excepted directory, not below it.
      ["write", () => port.write(".sessionkit-old/x", text("x"))],
    ] as const) {
      const error = await expectStorageError(attempt(), "read-only", op);
      expect(error.message).toBe(`${op} refused: the store is served read-only`);
    }
    expect(await base.read("sessions/a.jsonl")).toEqual(text("line\n"));
    expect(await base.stat("sessions/b.jsonl")).toBeNull();
    expect(await port.read("sessions/a.jsonl")).toEqual(text("line\n"));
    expect((await port.list("sessions")).map((entry) => entry.name)).toEqual(["a.jsonl"]);
    await port.sync!("sessions/a.jsonl");
  });

  it("lets changes below `except` through to the port", async () => {
    const base = memoryStorage();
    const port = readOnlyStorage(base, { except: [".sessionkit"] });
    await port.write(".sessionkit/catalog/x.json", text("cached"));
    await port.append(".sessionkit/catalog/x.json", text("!"));
    const lock = await port.acquireLock!(".sessionkit/lock");
    await lock.release();
    expect(await base.read(".sessionkit/catalog/x.json")).toEqual(text("cached!"));
  });
});

describe("scopedStorage", () => {
  const served = async () => {
    const base = memoryStorage();
    await base.write("auth.json", text("secret"));
    await base.write("sessions/--a--/s.jsonl", text("line\n"));
    await base.write("blobs/ab/cd", text("blob"));
    await base.write("deep/served/x", text("x"));
    await base.write("deep/other/y", text("y"));
    return { base, port: scopedStorage(base, { paths: ["sessions", "blobs", "deep/served"] }) };
  };

  it("refuses paths outside the served directories with forbidden, and malformed ones with invalid", async () => {
    const { base, port } = await served();
    const forbidden = await expectStorageError(port.read("auth.json"), "forbidden");
    expect(forbidden.message).toBe('"auth.json" is outside the served paths (sessions, blobs, deep/served)');
    await expectStorageError(port.stat("deep/other/y"), "forbidden");
    await expectStorageError(port.write("auth.json", text("stolen")), "forbidden");
    await expectStorageError(port.remove("auth.json"), "forbidden");
    await expectStorageError(port.acquireLock!("auth.json"), "forbidden");
    await expectStorageError(port.list("deep/other"), "forbidden");
    await expectStorageError(port.watch!("deep/other", () => {}), "forbidden");
    // A name that starts like a served directory is not inside it.
    await expectStorageError(port.read("sessions-old/x"), "forbidden");
    await expectStorageError(port.read("../auth.json"), "invalid");
    expect(await base.read("auth.json")).toEqual(text("secret"));
    expect(await port.read("sessions/--a--/s.jsonl")).toEqual(text("line\n"));
  });

  it("lists only the served directories and what leads to them; a watch reports only their changes", async () => {
    const { port, base } = await served();
    expect((await port.list("")).map((entry) => entry.name)).toEqual(["blobs", "deep", "sessions"]);
    expect((await port.list("deep")).map((entry) => entry.name)).toEqual(["served"]);
    const seen: string[] = [];
    const watch = await port.watch!("", (path) => seen.push(path));
    await base.write("auth.json", text("changed"));
    await base.write("deep/other/z", text("z"));
    await port.append("sessions/--a--/s.jsonl", text("more\n"));
    await expect.poll(() => seen).toEqual(["sessions/--a--/s.jsonl"]);
    await watch.close();
  });
});
