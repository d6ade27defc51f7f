/**
 * Sessions with secrets planted: every kind below in every place a session holds text (user and
 * assistant text, thinking, tool-call arguments deep down, tool results, `!command` output, custom
 * messages and data, branch and compaction summaries, labels, the session's name). Each secret is
 * new (seeded PRNG), so a test or the bench can look for each one in what an export wrote. Shared
 * by test/node/secrets*.test.ts and bench/secrets.ts.
 */
import type { StoragePort } from "../../src/port.js";
import { SessionManager } from "../../src/session/session-manager.js";
import type { Rng } from "./prng.js";

const UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
const LOWER = "abcdefghijklmnopqrstuvwxyz";
const DIGITS = "0123456789";
const ALNUM = UPPER + LOWER + DIGITS;

function draw(rng: Rng, alphabet: string, length: number): string {
  let out = "";
  for (let i = 0; i < length; i++) out += alphabet[rng.int(alphabet.length)];
  return out;
}

/** One planted secret in its context; `secret` is what must be found and must not leave. */
interface Plant {
  text: string;
  secret: string;
}

export interface SecretKind {
  /** A name for reports (one kind of finding may be planted several ways: url-password per scheme). */
  name: string;
  /** The finding's kind: the rule that must find it. */
  kind: string;
  make(rng: Rng): Plant;
}

const plain = (secret: string, before = "use", after = "now"): Plant => ({ text: `${before} ${secret} ${after}`, secret });

const urlPassword = (scheme: string, host: string): SecretKind => ({
  name: `url-password (${scheme})`,
  kind: "url-password",
  make: (rng) => {
    const secret = draw(rng, ALNUM, 14);
    return { text: `connect to ${scheme}://app_user:${secret}@${host}/main and go`, secret };
  },
});

/** The kinds planted: those the issue names (gitleaks' rules) and sessionkit's own. */
export const SECRET_KINDS: readonly SecretKind[] = [
  { name: "anthropic-api-key", kind: "anthropic-api-key", make: (rng) => plain(`sk-ant-api03-${draw(rng, `${ALNUM}_-`, 93)}AA`) },
  { name: "openai-api-key", kind: "openai-api-key", make: (rng) => plain(`sk-proj-${draw(rng, ALNUM, 74)}T3BlbkFJ${draw(rng, ALNUM, 74)}`) },
  { name: "aws-access-token", kind: "aws-access-token", make: (rng) => plain(`AKIA${draw(rng, `${UPPER}234567`, 16)}`) },
  { name: "github-pat", kind: "github-pat", make: (rng) => plain(`ghp_${draw(rng, ALNUM, 36)}`) },
  { name: "github-fine-grained-pat", kind: "github-fine-grained-pat", make: (rng) => plain(`github_pat_${draw(rng, `${ALNUM}_`, 82)}`) },
  { name: "gitlab-pat", kind: "gitlab-pat", make: (rng) => plain(`glpat-${draw(rng, ALNUM, 20)}`) },
  { name: "slack-bot-token", kind: "slack-bot-token", make: (rng) => plain(`xoxb-${draw(rng, DIGITS, 12)}-${draw(rng, DIGITS, 12)}-${draw(rng, ALNUM, 24)}`) },
  { name: "stripe-access-token", kind: "stripe-access-token", make: (rng) => plain(`sk_live_${draw(rng, ALNUM, 24)}`) },
  { name: "npm-access-token", kind: "npm-access-token", make: (rng) => plain(`npm_${draw(rng, LOWER + DIGITS, 36)}`) },
  { name: "gcp-api-key", kind: "gcp-api-key", make: (rng) => plain(`AIza${draw(rng, `${ALNUM}_-`, 35)}`) },
  { name: "huggingface-access-token", kind: "huggingface-access-token", make: (rng) => plain(`hf_${draw(rng, UPPER + LOWER, 34)}`) },
  {
    name: "private-key",
    kind: "private-key",
    make: (rng) => {
      const body = Array.from({ length: 4 }, () => draw(rng, `${ALNUM}+/`, 64)).join("\n");
      return { text: `the key:\n-----BEGIN RSA PRIVATE KEY-----\n${body}\n-----END RSA PRIVATE KEY-----\nkeep it`, secret: body };
    },
  },
  {
    name: "jwt",
    kind: "jwt",
    make: (rng) => plain(`eyJhbGciOiJIUzI1NiJ9.eyJ${draw(rng, ALNUM, 40)}.${draw(rng, `${ALNUM}_-`, 43)}`, "cookie"),
  },
  {
    name: "env-assignment",
    kind: "env-assignment",
    make: (rng) => {
      const secret = draw(rng, ALNUM, 20);
      return { text: `cat .env\nDATABASE_PASSWORD=${secret}\nPORT=8080`, secret };
    },
  },
  {
    name: "env-assignment (quoted, export)",
    kind: "env-assignment",
    make: (rng) => {
      const secret = draw(rng, ALNUM, 32);
      return { text: `export STRIPE_WEBHOOK_SECRET="${secret}"`, secret };
    },
  },
  {
    name: "authorization-bearer",
    kind: "authorization-bearer",
    make: (rng) => {
      const secret = draw(rng, ALNUM, 40);
      return { text: `await fetch(url, { headers: { Authorization: "Bearer ${secret}" } });`, secret };
    },
  },
  {
    name: "authorization-basic",
    kind: "authorization-basic",
    make: (rng) => {
      const secret = `${draw(rng, ALNUM, 28)}==`;
      return { text: `GET / HTTP/1.1\nAuthorization: Basic ${secret}\nAccept: */*`, secret };
    },
  },
  urlPassword("postgres", "db.internal:5432"),
  urlPassword("mysql", "mysql.internal:3306"),
  urlPassword("mongodb+srv", "cluster0.ab1cd.mongodb.net"),
  urlPassword("redis", "cache.internal:6379"),
  urlPassword("amqp", "mq.internal:5672"),
  urlPassword("https", "git.example.org"),
];

/** One secret as planted: where it went and what must find it. */
export interface PlantedSecret {
  /** Storage path of the session. */
  path: string;
  entryId: string;
  /** The JSON pointer a finding must name. */
  field: string;
  kind: string;
  /** SecretKind.name. */
  name: string;
  secret: string;
}

const usage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
const assistant = (content: unknown[]) => ({ role: "assistant", content, api: "anthropic-messages", provider: "anthropic", model: "claude", usage, stopReason: "stop", timestamp: Date.now() });

/** A 1×1 PNG: an image the redacted copy must keep. */
export const PLANTED_IMAGE = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

/** The places a session holds text: writes `text` there, returns the entry and the pointer. */
const FIELDS: readonly { name: string; plant(sm: SessionManager, text: string, anchor: string): { entryId: string; field: string } }[] = [
  { name: "user text", plant: (sm, text) => ({ entryId: sm.appendMessage({ role: "user", content: [{ type: "text", text }, { type: "image", data: PLANTED_IMAGE, mimeType: "image/png" }], timestamp: Date.now() }), field: "/message/content/0/text" }) },
  { name: "user text (string)", plant: (sm, text) => ({ entryId: sm.appendMessage({ role: "user", content: text, timestamp: Date.now() }), field: "/message/content" }) },
  { name: "assistant text", plant: (sm, text) => ({ entryId: sm.appendMessage(assistant([{ type: "text", text }])), field: "/message/content/0/text" }) },
  { name: "thinking", plant: (sm, text) => ({ entryId: sm.appendMessage(assistant([{ type: "thinking", thinking: text, thinkingSignature: "sig" }, { type: "text", text: "done" }])), field: "/message/content/0/thinking" }) },
  {
    name: "tool-call arguments",
    plant: (sm, text) => ({
      entryId: sm.appendMessage(assistant([{ type: "toolCall", id: "call_1", name: "bash", arguments: { command: "env", options: { env: [{ name: "X", value: text }] } } }])),
      field: "/message/content/0/arguments/options/env/0/value",
    }),
  },
  {
    name: "tool result",
    plant: (sm, text) => ({ entryId: sm.appendMessage({ role: "toolResult", toolCallId: "call_1", toolName: "bash", content: [{ type: "text", text }], isError: false, timestamp: Date.now() }), field: "/message/content/0/text" }),
  },
  {
    name: "!command output",
    plant: (sm, text) => ({ entryId: sm.appendMessage({ role: "bashExecution", command: "cat notes.txt", output: text, exitCode: 0, cancelled: false, truncated: false, timestamp: Date.now() }), field: "/message/output" }),
  },
  { name: "custom message", plant: (sm, text) => ({ entryId: sm.appendCustomMessageEntry("note", text, true), field: "/content" }) },
  { name: "custom entry data", plant: (sm, text) => ({ entryId: sm.appendCustomEntry("ext-state", { saved: { lines: ["first", text] } }), field: "/data/saved/lines/1" }) },
  { name: "compaction summary", plant: (sm, text, anchor) => ({ entryId: sm.appendCompaction(text, anchor, 1234), field: "/summary" }) },
  { name: "label", plant: (sm, text, anchor) => ({ entryId: sm.appendLabelChange(anchor, text), field: "/label" }) },
  { name: "session name", plant: (sm, text) => ({ entryId: sm.appendSessionInfo(text), field: "/name" }) },
  { name: "branch summary", plant: (sm, text, anchor) => ({ entryId: sm.branchWithSummary(anchor, text), field: "/summary" }) },
];

/** Names of the places planted, in order. */
export const PLANTED_FIELDS: readonly string[] = FIELDS.map((field) => field.name);

/**
 * One session per kind (in `cwd`), each with a new secret of that kind in every field. Returns
 * every secret planted.
 */
export async function writePlantedSessions(storage: StoragePort, cwd: string, rng: Rng, kinds: readonly SecretKind[] = SECRET_KINDS): Promise<PlantedSecret[]> {
  const planted: PlantedSecret[] = [];
  for (const kind of kinds) {
    const sm = await SessionManager.create(storage, cwd);
    const anchor = sm.appendMessage({ role: "user", content: "start here", timestamp: Date.now() });
    for (const field of FIELDS) {
      const { text, secret } = kind.make(rng);
      const at = field.plant(sm, text, anchor);
      planted.push({ path: sm.getSessionFile()!, entryId: at.entryId, field: at.field, kind: kind.kind, name: kind.name, secret });
    }
    await sm.close();
  }
  return planted;
}
