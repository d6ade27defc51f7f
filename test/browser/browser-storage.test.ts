import { describe, expect, it } from "vitest";
import { requestPersistence, storageEstimate } from "../../adapters/browser-storage.js";

describe("browser storage helpers", () => {
  it("storageEstimate reports usage within quota and the persistence state", async () => {
    const estimate = await storageEstimate();
    expect(estimate).not.toBeNull();
    expect(estimate!.quotaBytes).toBeGreaterThan(0);
    expect(estimate!.usageBytes).toBeGreaterThanOrEqual(0);
    expect(estimate!.usageBytes).toBeLessThanOrEqual(estimate!.quotaBytes);
    expect(estimate!.persisted).toBe(await navigator.storage.persisted());
  });

  it("requestPersistence answers with the browser's decision", async () => {
    const granted = await requestPersistence();
    expect(typeof granted).toBe("boolean");
    expect(granted).toBe(await navigator.storage.persisted());
    expect((await storageEstimate())!.persisted).toBe(granted);
  });
});
