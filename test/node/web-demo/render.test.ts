// @vitest-environment happy-dom
/**
 * The viewer's renderers in a DOM (happy-dom): markdown made safe, every tool's renderer (bash,
 * read, write, edit as a diff, ls, find, grep, any other), "N more lines" and expanding, thinking
 * shown or folded, compactions, branch summaries, custom messages, images; the tree's one-line
 * texts; the HTML export's data blocks.
 */
import { describe, expect, it } from "vitest";
import { memoryStorage } from "../../../adapters/memory/index.js";
import type { SessionEntry, SessionHeader } from "../../../src/index.js";
import { buildExportHtml, DATA_MARKER } from "../../../web-demo/src/export/embed.js";
import { embeddedSource } from "../../../web-demo/src/export/embedded-source.js";
import { SessionModel } from "../../../web-demo/src/model/session-model.js";
import { el, formatCount, markedText } from "../../../web-demo/src/render/dom.js";
import { renderEntry, type EntryView } from "../../../web-demo/src/render/entry.js";
import { languageOfPath } from "../../../web-demo/src/render/highlight.js";
import { renderMarkdown } from "../../../web-demo/src/render/markdown.js";
import { entryRowText, formatToolCall } from "../../../web-demo/src/render/tree-row.js";

const header: SessionHeader = { type: "session", version: 3, id: "s1", timestamp: "2026-01-01T00:00:00.000Z", cwd: "/home/me/app" };
let clock = 0;
const at = () => new Date(Date.UTC(2026, 0, 1) + ++clock * 1000).toISOString();

function message(id: string, parentId: string | null, body: Record<string, unknown>): SessionEntry {
  return { type: "message", id, parentId, timestamp: at(), message: { timestamp: clock, ...body } as SessionEntry["message" & keyof SessionEntry] } as SessionEntry;
}

/** An assistant entry calling `name` with `args`, and its result. */
function toolPair(name: string, args: Record<string, unknown>, output: string, extra: Record<string, unknown> = {}): SessionEntry[] {
  const id = `call-${name}-${clock}`;
  return [
    message(`a-${id}`, null, { role: "assistant", content: [{ type: "toolCall", id, name, arguments: args }], stopReason: "toolUse" }),
    message(`r-${id}`, `a-${id}`, { role: "toolResult", toolCallId: id, toolName: name, content: [{ type: "text", text: output }], isError: false, ...extra }),
  ];
}

function view(entries: SessionEntry[], over: Partial<EntryView> = {}): EntryView {
  return { model: new SessionModel(header, entries), thinkingVisible: true, outputsExpanded: false, expanded: new Map(), imageSource: (b) => `data:${b.mimeType};base64,${b.data}`, targetId: null, ...over };
}

const lines = (n: number, prefix = "line") => Array.from({ length: n }, (_, i) => `${prefix} ${i + 1}`).join("\n");

describe("formatCount", () => {
  it("writes numbers as toLocaleString(\"en-US\") does", () => {
    const values = [0, 7, -7, 999, 1000, -1000, 12_345, 999_999, 1_000_000, -1_234_567, Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER, 1.5, 1e30, Number.NaN, Infinity];
    for (let digits = 1; digits <= 16; digits++) values.push(Number("9".repeat(digits)), Number(`1${"0".repeat(digits - 1)}`));
    for (const value of values) expect(formatCount(value)).toBe(value.toLocaleString("en-US"));
  });
});

describe("markdown", () => {
  it("renders GFM (tables, lists, line breaks, code with its language) with no class, id or style from the text", () => {
    const root = document.createElement("div");
    root.append(renderMarkdown("**bold** and *it*\nnext line\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n- [x] done\n\n```ts\nconst x = 1;\n```"));
    expect(root.querySelector("strong")!.textContent).toBe("bold");
    expect(root.querySelector("br")).not.toBeNull();
    expect(root.querySelectorAll("td")).toHaveLength(2);
    expect(root.querySelector("code[data-lang='ts']")!.textContent).toBe("const x = 1;");
    expect(root.querySelector("input")!.getAttribute("type")).toBe("checkbox");
    expect(root.querySelectorAll("[class], [id], [style]")).toHaveLength(0);
  });

  it("shows raw HTML as text, drops javascript: and data: links, turns images into links (nothing loads)", () => {
    const root = document.createElement("div");
    root.append(
      renderMarkdown(
        '<img src=x onerror=alert(1)> <script>alert(2)</script> <b style="color:red">b</b>\n\n[click](javascript:alert(3)) [data](data:text/html,<script>alert(4)</script>) [ok](https://example.com/a)\n\n![pic](https://evil.example/x.png) ![inline](data:image/png;base64,AAAA)',
      ),
    );
    expect(root.querySelectorAll("img, script, b, style, iframe")).toHaveLength(0);
    expect(root.textContent).toContain("<img src=x onerror=alert(1)>");
    expect(root.textContent).toContain("<script>alert(2)</script>");
    const links = [...root.querySelectorAll("a")].map((a) => [a.textContent, a.getAttribute("href"), a.getAttribute("rel")]);
    // Unsafe links are left as their text.
    expect(root.textContent).toContain("click data ok");
    expect(links).toEqual([
      ["ok", "https://example.com/a", "noopener noreferrer nofollow"],
      ["image: pic", "https://evil.example/x.png", "noopener noreferrer nofollow"],
    ]);
    expect(root.textContent).toContain("image: inline");
  });
});

describe("entries", () => {
  it("bash: the command, the first 5 lines of output and '... (N more lines)', all of it once expanded", () => {
    const entries = toolPair("bash", { command: "npm test" }, lines(12));
    const collapsed = renderEntry(entries[0]!, view(entries))!;
    expect(collapsed.querySelector(".tool-command")!.textContent).toBe("$ npm test");
    expect(collapsed.querySelector(".tool-output code")!.textContent).toBe(lines(5));
    expect(collapsed.querySelector(".expand-hint")!.textContent).toBe("... (7 more lines)");
    expect(collapsed.querySelector(".tool-execution")!.classList.contains("success")).toBe(true);
    const key = collapsed.querySelector<HTMLElement>(".expand-hint")!.dataset.key!;
    const expanded = renderEntry(entries[0]!, view(entries, { expanded: new Map([[key, true]]) }))!;
    expect(expanded.querySelector(".tool-output code")!.textContent).toBe(lines(12));
    const all = renderEntry(entries[0]!, view(entries, { outputsExpanded: true }))!;
    expect(all.querySelector(".tool-output code")!.textContent).toBe(lines(12));
    // The result is shown with its call, not on its own.
    expect(view(entries).model.listed(1)).toBe(false);
  });

  it("read: the path (home shortened) with its line range, 10 lines, highlighted by extension; images of the result", () => {
    const entries = toolPair("read", { path: "/home/me/app/src/x.ts", offset: 5, limit: 20 }, lines(15));
    (entries[1] as { message: { content: unknown } }).message.content = [{ type: "text", text: lines(15) }, { type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" }];
    const el = renderEntry(entries[0]!, view(entries))!;
    expect(el.querySelector(".tool-header")!.textContent).toBe("read ~/app/src/x.ts:5-24");
    expect(el.querySelector(".tool-output code")!.getAttribute("data-lang")).toBe("typescript");
    expect(el.querySelector(".expand-hint")!.textContent).toBe("... (5 more lines)");
    expect(el.querySelector(".tool-images img")!.getAttribute("src")).toBe("data:image/png;base64,iVBORw0KGgo=");
  });

  it("write: the path, '(N lines)' past 10, the content highlighted; edit: the diff of the result or of the arguments", () => {
    const write = toolPair("write", { path: "a.py", content: lines(14) }, "Wrote a.py");
    const w = renderEntry(write[0]!, view(write))!;
    expect(w.querySelector(".tool-header")!.textContent).toBe("write a.py (14 lines)");
    expect(w.querySelector("code")!.getAttribute("data-lang")).toBe("python");
    const edit = toolPair("edit", { path: "b.md", oldText: "old", newText: "new\nmore" }, "Replaced", { details: { diff: " ctx\n-old\n+new\n+more" } });
    const e = renderEntry(edit[0]!, view(edit))!;
    expect([...e.querySelectorAll(".tool-diff > div")].map((d) => [d.className, d.textContent])).toEqual([
      ["diff-context", " ctx"],
      ["diff-removed", "-old"],
      ["diff-added", "+new\n+more"],
    ]);
    const bare = toolPair("edit", { path: "b.md", oldText: "x", newText: "y" }, "Replaced");
    expect([...renderEntry(bare[0]!, view(bare))!.querySelectorAll(".tool-diff > div")].map((d) => d.textContent)).toEqual(["-x", "+y"]);
  });

  it("ls, find, grep and any other tool", () => {
    const ls = toolPair("ls", { path: "/home/me/app" }, lines(25, "f"));
    expect(renderEntry(ls[0]!, view(ls))!.querySelector(".expand-hint")!.textContent).toBe("... (5 more lines)");
    const find = toolPair("find", { pattern: "*.ts", path: "src" }, "a.ts");
    expect(renderEntry(find[0]!, view(find))!.querySelector(".tool-header")!.textContent).toBe("find *.ts in src");
    const grep = toolPair("grep", { pattern: "TODO", path: "." }, "a.ts:1: TODO");
    expect(renderEntry(grep[0]!, view(grep))!.querySelector(".tool-header")!.textContent).toBe("grep /TODO/ in .");
    const other = toolPair("web_fetch", { url: "https://x.example" }, "body");
    const o = renderEntry(other[0]!, view(other))!;
    expect(o.querySelector(".tool-header")!.textContent).toBe("web_fetch ");
    expect(o.querySelectorAll(".tool-output code")[0]!.textContent).toBe('{\n  "url": "https://x.example"\n}');
    expect(o.querySelectorAll(".tool-output code")[1]!.textContent).toBe("body");
  });

  it("a call without a result is pending; a failed result is marked", () => {
    const [call] = toolPair("bash", { command: "sleep 1" }, "");
    expect(renderEntry(call!, view([call!]))!.querySelector(".tool-execution")!.classList.contains("pending")).toBe(true);
    const failed = toolPair("bash", { command: "false" }, "boom", { isError: true });
    expect(renderEntry(failed[0]!, view(failed))!.querySelector(".tool-execution.error")).not.toBeNull();
  });

  it("assistant text as markdown, thinking shown or folded, aborted and error turns", () => {
    const entry = message("a1", null, { role: "assistant", content: [{ type: "thinking", thinking: "hmm <b>" }, { type: "text", text: "**done**" }], stopReason: "error", errorMessage: "overloaded" });
    const shown = renderEntry(entry, view([entry]))!;
    expect(shown.querySelector(".thinking")!.textContent).toBe("hmm <b>");
    expect(shown.querySelector(".assistant-text strong")!.textContent).toBe("done");
    expect(shown.querySelector(".error-text")!.textContent).toBe("Error: overloaded");
    expect(renderEntry(entry, view([entry], { thinkingVisible: false }))!.querySelector(".thinking")!.textContent).toBe("Thinking ...");
  });

  it("user images (zoomable), images of other types named not shown; compaction, branch summary, custom, model change", () => {
    const user = message("u1", null, { role: "user", content: [{ type: "text", text: "see" }, { type: "image", data: "AAAA", mimeType: "image/png" }, { type: "image", data: "PGh0bWw+", mimeType: "text/html" }] });
    const u = renderEntry(user, view([user]))!;
    expect(u.querySelectorAll("img")).toHaveLength(1);
    expect(u.querySelector("img")!.closest("button")!.getAttribute("data-action")).toBe("zoom-image");
    expect(u.querySelector(".missing-image")!.textContent).toBe('[image of type "text/html" not shown]');
    const compaction = { type: "compaction", id: "c1", parentId: null, timestamp: at(), summary: "## Goal", firstKeptEntryId: "u1", tokensBefore: 48213 } as SessionEntry;
    const c = renderEntry(compaction, view([compaction]))!;
    expect(c.textContent).toContain("Compacted from 48,213 tokens");
    expect(c.querySelector("h2")).toBeNull();
    expect(renderEntry(compaction, view([compaction], { outputsExpanded: true }))!.querySelector(".markdown")!.textContent!.trim()).toBe("Goal");
    const summary = { type: "branch_summary", id: "b1", parentId: null, timestamp: at(), fromId: "x", summary: "tried *this*" } as SessionEntry;
    expect(renderEntry(summary, view([summary]))!.querySelector("em")!.textContent).toBe("this");
    const custom = { type: "custom_message", id: "m1", parentId: null, timestamp: at(), customType: "todo", content: "open", display: true } as SessionEntry;
    expect(renderEntry(custom, view([custom]))!.textContent).toContain("[todo]");
    const hidden = { ...custom, display: false } as SessionEntry;
    expect(view([hidden]).model.listed(0)).toBe(false);
    expect(view([custom]).model.listed(0)).toBe(true);
    const model = { type: "model_change", id: "mc", parentId: null, timestamp: at(), provider: "openai", modelId: "gpt-5" } as SessionEntry;
    expect(renderEntry(model, view([model]))!.textContent).toContain("Switched to model: openai/gpt-5");
  });

  it("tree rows use pi's short forms", () => {
    expect(formatToolCall("read", { path: "/home/me/x.ts", offset: 10, limit: 5 })).toBe("[read: ~/x.ts:10-14]");
    expect(formatToolCall("bash", { command: "a\tb\n".repeat(20) })).toBe(`[bash: ${"a b ".repeat(20).trim().slice(0, 50)}...]`);
    expect(formatToolCall("grep", { pattern: "x" })).toBe("[grep: /x/ in .]");
    const entries = toolPair("edit", { path: "/Users/me/y.ts" }, "ok");
    const model = new SessionModel(header, entries);
    const row = document.createElement("div");
    row.append(...entryRowText(entries[1]!, model).filter((c): c is Node | string => typeof c === "string" || c instanceof Node));
    expect(row.textContent).toBe("[edit: ~/y.ts]");
    expect(languageOfPath("Dockerfile")).toBe("dockerfile");
  });
});

describe("HTML export data", () => {
  it("puts the session in gzip pieces of base64 (no '<' a session could use to end its block) and the referenced blobs", async () => {
    const storage = memoryStorage();
    const hash = "a".repeat(64);
    const line = (o: unknown) => JSON.stringify(o) + "\n";
    const file =
      line(header) +
      line({ type: "message", id: "u", parentId: null, timestamp: at(), message: { role: "user", content: [{ type: "text", text: "</script><script>alert(1)</script>" }, { type: "image", data: `blob:sha256:${hash}`, mimeType: "image/png" }] } });
    await storage.write("sessions/x/s.jsonl", new TextEncoder().encode(file));
    await storage.write(`blobs/${hash}`, new Uint8Array([1, 2, 3]));
    const template = `<html><head><title>t</title></head><body>${DATA_MARKER}</body></html>`;
    const { parts, missingBlobs } = await buildExportHtml(template, { storage, path: "sessions/x/s.jsonl", title: "<My> session" });
    const html = parts.map((p) => (typeof p === "string" ? p : new TextDecoder().decode(p))).join("");
    expect(missingBlobs).toEqual([]);
    expect(html.match(/<script/g)).toHaveLength(2); // one session piece, one blob
    expect(html).not.toContain("alert");
    expect(html).toContain(`data-hash="${hash}">"AQID"</script>`);
    expect(html).toContain("<title>&lt;My> session · sessionkit</title>");
    // The page's reader gets the file back.
    document.body.innerHTML = html.slice(html.indexOf("<body>") + 6, html.indexOf("</body>"));
    const embedded = await embeddedSource(document);
    const back = await embedded!.source.stores[0]!.storage.read(embedded!.path);
    expect(new TextDecoder().decode(back!)).toBe(file);
    expect(await embedded!.source.stores[0]!.storage.read(`blobs/${hash}`)).toEqual(new Uint8Array([1, 2, 3]));
  });
});

describe("markedText", () => {
  const html = (text: string, ranges: [number, number][]) => el("span", {}, ...markedText(text, ranges)).innerHTML;

  it("puts each range in a <mark>, the text between as text (never as HTML)", () => {
    expect(html("Zebras sleep <b>standing</b>", [[0, 6], [7, 12]])).toBe("<mark>Zebras</mark> <mark>sleep</mark> &lt;b&gt;standing&lt;/b&gt;");
    expect(html("no match", [])).toBe("no match");
  });

  it("skips ranges out of order, empty, inverted or past the end (a server's answer is not trusted)", () => {
    expect(html("abcdef", [[2, 4], [1, 3], [4, 4], [5, 3], [5, 99], [4, 6]])).toBe("ab<mark>cd</mark><mark>ef</mark>");
    expect(html("abc", [[-1, 2]])).toBe("abc");
  });
});
