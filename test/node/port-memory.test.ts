import { describe, expect, it } from "vitest";
import { memoryStorage } from "../../adapters/memory/index.js";
import { describePortConformance, expectStorageError } from "../../src/testing/index.js";

describePortConformance("memory", async () => ({ port: memoryStorage() }));

describe("memoryStorage specifics", () => {
  it("drops an implicit directory with its last file", async () => {
    const port = memoryStorage();
    await port.append("d/e/f", new Uint8Array([1]));
    await port.remove("d/e/f");

    expect(await port.list("")).toEqual([]);
    await port.write("d", new Uint8Array([2])); // "d" is free to be a file again
    expect(await port.stat("d")).toMatchObject({ size: 1 });
  });

  it("appends in amortized O(1): 50,000 small appends stay fast", async () => {
    // Copying the whole file on each append would move ~125 GB here and take minutes.
    const port = memoryStorage();
    const line = new Uint8Array(100).fill(7);
    const started = performance.now();
    for (let i = 0; i < 50_000; i++) await port.append("big", line);

    expect(performance.now() - started).toBeLessThan(5_000);
    expect(await port.stat("big")).toMatchObject({ size: 5_000_000 });
  });

  it("rejects a truncate beyond the end of the file as invalid", async () => {
    const port = memoryStorage();
    await port.append("f", new Uint8Array(3));
    await expectStorageError(port.truncate("f", 4), "invalid");
  });
});
