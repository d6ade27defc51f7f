/**
 * A session file built to attack the viewer: script tags, event handlers, javascript: and
 * data:text/html links, SVG, CSS, a text/html "image", markdown links and images, HTML in tool
 * output, in every field a session carries (message text, thinking, tool names, arguments and
 * output, labels, custom types, model ids, file paths, image MIME types, URLs, names, summaries,
 * commands, error messages, the header's cwd). Every payload that ran would set window.__pwned or
 * open a dialog; every payload that loaded something would ask evil.example. At the leaf, text
 * built to break or freeze a renderer (HOSTILE_TEXT): 5,000 `>` (marked overflowed its stack),
 * emphasis nested 2,000 deep, one character 200,000 times; then an ordinary answer.
 */
const EVIL = "http://evil.example";

const PAYLOADS = [
  "<script>window.__pwned='script';alert(1)</script>",
  "<img src=x onerror=\"window.__pwned='img';alert(2)\">",
  "<svg onload=\"window.__pwned='svg';alert(3)\"><script>alert(4)</script></svg>",
  `<iframe src="javascript:alert(5)"></iframe><iframe srcdoc="<script>parent.__pwned='srcdoc'</script>"></iframe>`,
  `<a href="javascript:window.__pwned='href';alert(6)">click</a>`,
  `<style>body{display:none !important}</style><link rel="stylesheet" href="${EVIL}/x.css">`,
  `<div style="position:fixed;inset:0;background:red" class="app-bar">cover</div>`,
  `[md link](javascript:alert(7)) [data link](data:text/html,<script>alert(8)</script>) ![md image](${EVIL}/pixel.png) ![data svg](data:image/svg+xml,<svg onload=alert(9)>)`,
  `<object data="${EVIL}/x.swf"></object><embed src="${EVIL}/x"><video src="${EVIL}/v.mp4" autoplay></video><audio src="${EVIL}/a.mp3" autoplay></audio>`,
  `<form action="${EVIL}"><input name=q autofocus onfocus="alert(10)"></form><meta http-equiv="refresh" content="0;url=${EVIL}">`,
  "</script><script>alert(11)</script><!--",
  "{{constructor.constructor('alert(12)')()}} ${alert(13)} `alert(14)`",
  `<base href="${EVIL}/"><math><mtext><table><mglyph><style><img src=x onerror=alert(15)>`,
];

const all = PAYLOADS.join("\n\n");

/** Texts that broke or froze a view, and the answer after them that must still render. */
export const HOSTILE_TEXT = {
  quotes: ">".repeat(5000),
  emphasis: `${"*a ".repeat(2000)}x${" a*".repeat(2000)}`,
  longLine: "x".repeat(200_000),
  after: "After the hostile text: **this answer renders**.",
};
let n = 0;
const nextId = () => `id${(++n).toString(16).padStart(6, "0")}`;

/** The hostile session as JSONL. */
export function hostileSessionJsonl(sessionId: string): string {
  const t = (i: number) => new Date(Date.UTC(2026, 1, 1, 12, 0, i)).toISOString();
  const records: Record<string, unknown>[] = [
    { type: "session", version: 3, id: sessionId, timestamp: t(0), cwd: `/home/x/${PAYLOADS[1]}` },
  ];
  let parent: string | null = null;
  let i = 1;
  const add = (record: Record<string, unknown>) => {
    const id = nextId();
    records.push({ id, parentId: parent, timestamp: t(i++), ...record });
    parent = id;
    return id;
  };
  const badImage = (mimeType: string, data: string) => ({ type: "image", mimeType, data });
  add({ type: "model_change", provider: PAYLOADS[0], modelId: PAYLOADS[2] });
  add({ type: "thinking_level_change", thinkingLevel: PAYLOADS[1] });
  const user = add({
    type: "message",
    message: {
      role: "user",
      content: [
        { type: "text", text: all },
        badImage("text/html", btoa("<script>alert(16)</script>")),
        badImage("image/svg+xml", btoa('<svg xmlns="http://www.w3.org/2000/svg" onload="alert(17)"/>')),
        badImage("image/png\" onerror=\"alert(18)", "AAAA"),
        badImage("image/png", `javascript:alert(19)`),
        badImage("image/png", "iVBORw0KGgo=\" onerror=\"alert(20)"),
      ],
      timestamp: 1,
    },
  });
  add({ type: "label", targetId: user, label: PAYLOADS[1] });
  add({ type: "session_info", name: PAYLOADS[0] });
  const tools: [string, Record<string, unknown>][] = [
    ["bash", { command: all }],
    ["read", { path: `${PAYLOADS[1]}.html`, offset: PAYLOADS[0] }],
    ["write", { path: `${PAYLOADS[2]}.js`, content: all }],
    ["edit", { path: PAYLOADS[4], oldText: all, newText: all }],
    ["ls", { path: PAYLOADS[5] }],
    ["find", { pattern: PAYLOADS[6], path: PAYLOADS[7] }],
    ["grep", { pattern: PAYLOADS[0], path: PAYLOADS[8], glob: PAYLOADS[3] }],
    [PAYLOADS[1]!, { url: `javascript:alert(21)`, html: all }],
  ];
  for (const [name, args] of tools) {
    const callId = `call-${nextId()}`;
    add({
      type: "message",
      message: {
        role: "assistant",
        content: [
          { type: "thinking", thinking: all },
          { type: "text", text: all },
          { type: "toolCall", id: callId, name, arguments: args },
        ],
        provider: PAYLOADS[0],
        model: PAYLOADS[1],
        api: "anthropic-messages",
        stopReason: "toolUse",
        usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
        timestamp: 2,
      },
    });
    add({
      type: "message",
      message: {
        role: "toolResult",
        toolCallId: callId,
        toolName: name,
        content: [{ type: "text", text: `${all}\n${"more\n".repeat(30)}` }, badImage("text/html", btoa("<script>alert(22)</script>"))],
        details: { diff: `+${PAYLOADS[0]}\n-${PAYLOADS[1]}\n ${PAYLOADS[2]}` },
        isError: name === "ls",
        timestamp: 3,
      },
    });
  }
  add({ type: "message", message: { role: "bashExecution", command: all, output: all, exitCode: 1, cancelled: false, truncated: false, timestamp: 4 } });
  add({ type: "message", message: { role: PAYLOADS[1], content: all, timestamp: 5 } });
  add({ type: "custom_message", customType: PAYLOADS[0], content: all, display: true });
  add({ type: "custom", customType: PAYLOADS[2], data: { html: all } });
  const branchPoint = parent;
  add({ type: "compaction", summary: all, firstKeptEntryId: user, tokensBefore: 1234 });
  add({ type: "message", message: { role: "assistant", content: [{ type: "text", text: all }], provider: "p", model: "m", stopReason: "error", errorMessage: all, timestamp: 6 } });
  parent = branchPoint;
  add({ type: "branch_summary", fromId: branchPoint, summary: all });
  add({ type: PAYLOADS[0], data: all });
  add({ type: "message", message: { role: "assistant", content: [{ type: "text", text: all }], provider: "p", model: "m", stopReason: "aborted", timestamp: 7 } });
  const assistant = (text: string) => ({ role: "assistant", content: [{ type: "text", text }], provider: "p", model: "m", stopReason: "stop", timestamp: 8 });
  add({ type: "message", message: { role: "user", content: HOSTILE_TEXT.quotes, timestamp: 8 } });
  add({ type: "message", message: assistant(HOSTILE_TEXT.emphasis) });
  add({ type: "message", message: assistant(HOSTILE_TEXT.longLine) });
  add({ type: "message", message: assistant(HOSTILE_TEXT.after) });
  return records.map((r) => JSON.stringify(r)).join("\n") + "\n";
}
