/**
 * Secrets in the viewer (static mode over `vite preview`): a session holding some shows a badge
 * and each finding, masked, as a link to its entry; "Export HTML" asks first with the counts,
 * redaction on, and writes a page without them; "Export .zip" asks with redaction off.
 */
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, test } from "@playwright/test";
import { sessionOfPage } from "../test/shared/exported-text.js";
import { entries, openViewer, readZip, sessionJsonl, settled } from "./viewer-helpers.js";

const ANTHROPIC_KEY = `sk-ant-api03-${"Zq8xW3vB7nM2kL5pRt6yUi9oPa1sDf4gHj0kLz2xCv5bNm8qWe3rTy6uIo9pAs2dFg5hJk8lZx1cVb4nMq7wEr0tYu3iOp6aS9dF".slice(0, 93)}AA`;
const DB_PASSWORD = "S3cr3tPassw0rd42";
let tempDir: string;

test.beforeAll(async () => {
  tempDir = await mkdtemp(join(tmpdir(), "sessionkit-secrets-e2e-"));
});

test.afterAll(async () => {
  await rm(tempDir, { recursive: true, force: true });
});

async function openSessionWithSecrets(page: import("@playwright/test").Page): Promise<void> {
  await openViewer(page);
  const file = join(tempDir, "secrets.jsonl");
  await writeFile(
    file,
    sessionJsonl("e2e-secrets-session", [
      ["Why does the deploy fail?", `The key in .env is ${ANTHROPIC_KEY} and it looks fine.`],
      ["And the database?", `It connects to postgres://app:${DB_PASSWORD}@db.internal:5432/main, which refuses it.`],
    ]),
  );
  await page.setInputFiles("#import-input", file);
  await settled(page);
  await expect(entries(page).last()).toContainText("which refuses it");
}

test("a session's secrets: a badge in the header, each finding masked and a link to its entry", async ({ page }) => {
  await openSessionWithSecrets(page);
  await expect(page.locator("#secrets-badge")).toHaveText("⚠ 2");
  const notice = page.locator("#secrets-notice");
  await expect(notice.locator("summary")).toContainText("2 possible secrets: 1 anthropic-api-key, 1 url-password");
  await notice.locator("summary").click();
  await expect(notice.locator(".secret-preview")).toHaveText([`sk-ant-…${ANTHROPIC_KEY.slice(-4)}`, "…42"]);
  await expect(notice).not.toContainText(DB_PASSWORD);
  await notice.locator('a[data-entry="a0"]').click();
  await expect(page).toHaveURL(/target=a0/);
  await expect(page.locator("#messages .entry.target")).toContainText("The key in .env is");
});

test("Export HTML asks first (the counts, redaction on) and writes a page without the secrets; Cancel writes nothing", async ({ page }) => {
  await openSessionWithSecrets(page);
  await page.click("#action-export-html");
  const dialog = page.locator("#redact-dialog");
  await expect(dialog.locator("h2")).toHaveText("This session holds 2 possible secrets: 1 anthropic-api-key, 1 url-password");
  await expect(dialog.locator("#redact-secrets")).toBeChecked();
  await page.click("#redact-cancel");
  await expect(dialog).toHaveCount(0);

  await page.click("#action-export-html");
  const [download] = await Promise.all([page.waitForEvent("download"), page.click("#redact-export")]);
  const out = join(tempDir, "redacted.html");
  await download.saveAs(out);
  const html = await readFile(out, "utf8");
  const session = sessionOfPage(html);
  for (const text of [html, session]) {
    expect(text).not.toContain(ANTHROPIC_KEY);
    expect(text).not.toContain(DB_PASSWORD);
  }
  expect(session).toContain("[REDACTED:anthropic-api-key]");
  expect(session).toContain("postgres://app:[REDACTED:url-password]@db.internal");
  await expect(page.locator("#redacted-notice")).toHaveText("Exported with 2 secrets: 1 anthropic-api-key, 1 url-password redacted.");
});

test("Export .zip asks with redaction off (an archive is a backup); ticked, the manifest records the counts", async ({ page }) => {
  await openSessionWithSecrets(page);
  await page.click("#action-export-zip");
  await expect(page.locator("#redact-secrets")).not.toBeChecked();
  const [plain] = await Promise.all([page.waitForEvent("download"), page.click("#redact-export")]);
  await plain.saveAs(join(tempDir, "plain.zip"));
  const plainMembers = await readZip(join(tempDir, "plain.zip"));
  expect([...plainMembers.values()].join("\n")).toContain(DB_PASSWORD);

  await page.click("#action-export-zip");
  await page.check("#redact-secrets");
  const [redacted] = await Promise.all([page.waitForEvent("download"), page.click("#redact-export")]);
  await redacted.saveAs(join(tempDir, "redacted.zip"));
  const members = await readZip(join(tempDir, "redacted.zip"));
  expect([...members.values()].join("\n")).not.toContain(DB_PASSWORD);
  expect(JSON.parse(members.get("manifest.json")!)).toMatchObject({ version: "1.1", redacted: { "anthropic-api-key": 1, "url-password": 1 } });
});
