/**
 * Screenshots of secrets in the viewer (docs/screenshots/), in serve mode as `npm start` runs it:
 * a session in which a user pastes a .env and the agent runs curl with a token (the keys are made
 * up), its header with the findings open, and the Export HTML dialog with its counts.
 *
 *   npx vite build web-demo && npx tsx scripts/secrets-screenshots.ts
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium, type Page } from "playwright";
import { nodeFsStorage } from "../adapters/node-fs/index.js";
import { startServe } from "../cli/serve/server.js";
import { SessionManager } from "../src/index.js";
import { chromiumArgs, chromiumExecutable } from "../chromium.config.js";

const project = fileURLToPath(new URL("..", import.meta.url));
const out = join(project, "docs", "screenshots");
const temp = await mkdtemp(join(tmpdir(), "sessionkit-secrets-shots-"));
const root = join(temp, "pi-agent");

const usage = { input: 812, output: 240, cacheRead: 0, cacheWrite: 0, totalTokens: 1052, cost: { input: 0.002, output: 0.004, cacheRead: 0, cacheWrite: 0, total: 0.006 } };
const assistant = (content: unknown[]) => ({ role: "assistant", content, api: "anthropic-messages", provider: "anthropic", model: "claude-sonnet-4-5", usage, stopReason: "toolUse", timestamp: Date.now() });
// Made-up keys of the right shapes.
const ANTHROPIC = `sk-ant-api03-${"Q7mZp2Lx9Vb4Nc8Rt1Yw6Hk3Jd5Fg0Sa".repeat(3).slice(0, 93)}AA`;
const GITHUB = "ghp_R8tY2uI5oP9aS3dF6gH1jK4lZ7xC0vB2nM5q";

const storage = nodeFsStorage({ root });
const sm = await SessionManager.create(storage, "/home/dev/shop-api");
sm.appendMessage({ role: "user", content: "The deploy fails with 401. Here is my .env:\n\nANTHROPIC_API_KEY=" + ANTHROPIC + "\nDATABASE_URL=postgres://shop:Wint3rSun!42@db.internal:5432/shop\nPORT=8080", timestamp: Date.now() });
sm.appendMessage(assistant([{ type: "text", text: "Let me check the token the deploy job uses against the GitHub API." }, { type: "toolCall", id: "call_1", name: "bash", arguments: { command: `curl -s -H "Authorization: Bearer ${GITHUB}" https://api.github.com/user` } }]));
sm.appendMessage({ role: "toolResult", toolCallId: "call_1", toolName: "bash", content: [{ type: "text", text: '{\n  "message": "Bad credentials",\n  "status": "401"\n}' }], isError: false, timestamp: Date.now() });
sm.appendMessage(assistant([{ type: "text", text: "GitHub refuses that token: it was revoked. Create a new one and put it in the job's secrets, not in the repository." }]));
sm.appendSessionInfo("Deploy fails with 401");
await sm.close();
const path = sm.getSessionFile()!;
await storage.close();

const server = await startServe({ stores: [{ root, label: "pi ~/.pi/agent", agent: "pi", cacheDir: join(temp, "cache") }], port: 0, viewerDir: join(project, "web-demo", "dist") });
const browser = await chromium.launch({ executablePath: chromiumExecutable, args: chromiumArgs, headless: true });

async function ready(page: Page): Promise<void> {
  await page.waitForFunction(() => document.body.dataset.status === "ready" && document.querySelector("#secrets-badge"), null, { timeout: 120_000 });
  await page.waitForTimeout(400);
}

try {
  const page = await browser.newPage({ viewport: { width: 1440, height: 900 }, colorScheme: "light" });
  await page.goto(`${server.url}#store=${server.stores[0]!.id}&session=${encodeURIComponent(path)}`);
  await ready(page);
  await page.click("#secrets-notice summary");
  await page.waitForTimeout(300);
  await page.screenshot({ path: join(out, "secrets-header-light.png") });
  await page.click("#action-export-html");
  await page.waitForSelector("#redact-dialog");
  await page.waitForTimeout(300);
  await page.screenshot({ path: join(out, "secrets-export-dialog-light.png") });
  await page.close();
} finally {
  await browser.close();
  await server.close();
  await rm(temp, { recursive: true, force: true });
}
process.stdout.write(`screenshots in ${out}\n`);
