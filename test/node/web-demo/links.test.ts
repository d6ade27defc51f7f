/**
 * The viewer's links to a state: the page's address with the state's fragment, never with the
 * served page's token, which the address keeps until the first paint (serve-source.ts).
 */
import { describe, expect, it } from "vitest";
import { linkUrl } from "../../../web-demo/src/app/links.js";

const state = { store: "store-1", path: "sessions/--x--/a.jsonl", leafId: null, targetId: "e7", filter: "default" as const, query: "" };

describe("linkUrl", () => {
  it("is the page with the state's fragment in place of its own", () => {
    expect(linkUrl(state, "http://127.0.0.1:4173/#store=old&session=b.jsonl")).toBe("http://127.0.0.1:4173/#store=store-1&session=sessions%2F--x--%2Fa.jsonl&target=e7");
  });

  it("leaves the served page's token out, and keeps any other query", () => {
    expect(linkUrl(state, "http://127.0.0.1:4173/?token=s3cr3t#store=old")).toBe("http://127.0.0.1:4173/#store=store-1&session=sessions%2F--x--%2Fa.jsonl&target=e7");
    expect(linkUrl(state, "http://127.0.0.1:4173/viewer/?lang=en&token=s3cr3t")).toBe("http://127.0.0.1:4173/viewer/?lang=en#store=store-1&session=sessions%2F--x--%2Fa.jsonl&target=e7");
  });

  it("works from a file:// export", () => {
    expect(linkUrl({ ...state, store: null }, "file:///home/me/session.html")).toBe("file:///home/me/session.html#session=sessions%2F--x--%2Fa.jsonl&target=e7");
  });
});
