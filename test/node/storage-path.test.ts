import { describe, expect, it } from "vitest";
import { StorageError, checkStoragePath } from "../../src/port.js";

describe("checkStoragePath", () => {
  it("judges every path on its own, whatever was checked before it", () => {
    // It passes the path it last found valid at once: a path like it, or checked after it, is still judged.
    const valid = "sessions/--cwd--/a.jsonl";
    const invalid = [`${valid}/`, `${valid}/..`, `/${valid}`, `sessions//a.jsonl`, `sessions\\a.jsonl`, "C:/a", ""];
    for (const path of invalid) {
      expect(checkStoragePath(valid)).toBe(valid);
      expect(() => checkStoragePath(path)).toThrow(StorageError);
      expect(() => checkStoragePath(path)).toThrow(/invalid storage path/);
    }
    expect(checkStoragePath(valid)).toBe(valid);
    expect(checkStoragePath("", { allowRoot: true })).toBe("");
    expect(() => checkStoragePath("")).toThrow(StorageError);
  });
});
