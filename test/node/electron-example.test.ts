/**
 * examples/electron/main.ts itself, bundled with a stand-in `electron` module (the package cannot
 * be installed here): its window's settings, and what its `allow` and paths let pages do, driven
 * through electronStorage ports whose `invoke` calls the handler the example registered.
 */
import { EventEmitter } from "node:events";
import { mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { build } from "esbuild";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { electronStorage } from "../../adapters/electron/renderer.js";
import type { IpcMainInvokeEventLike, WebContentsLike, WebFrameMainLike } from "../../adapters/electron/types.js";
import { SessionManager } from "../../src/index.js";
import { expectStorageError } from "../../src/testing/index.js";
import { REPO } from "../shared/cli-runner.js";
import { assistantMsg, userMsg } from "../shared/messages.js";

type Handler = (event: IpcMainInvokeEventLike, envelope: unknown) => Promise<unknown>;
interface Stub {
  userData: string;
  handlers: Map<string, Handler>;
  windows: { webPreferences: Record<string, unknown> }[];
  loaded: string[];
}

/** The parts of `electron` the example uses; they report to the test through a global. */
const ELECTRON_STAND_IN = `
const stub = globalThis.__sessionkitElectronStub;
export const ipcMain = { handle: (channel, listener) => void stub.handlers.set(channel, listener), removeHandler: (channel) => void stub.handlers.delete(channel) };
export const app = { whenReady: async () => {}, getPath: () => stub.userData, on: () => {}, quit: () => {} };
export class BrowserWindow {
  constructor(options) { stub.windows.push(options); }
  async loadFile(file) { stub.loaded.push(file); }
}`;

let stub: Stub;

beforeAll(async () => {
  const userData = await mkdtemp(join(tmpdir(), "sessionkit-electron-example-"));
  stub = { userData, handlers: new Map(), windows: [], loaded: [] };
  (globalThis as { __sessionkitElectronStub?: Stub }).__sessionkitElectronStub = stub;
  // The store holds pi's credentials and settings besides the sessions, as an agent folder does.
  await mkdir(join(userData, "sessions-store"));
  await writeFile(join(userData, "sessions-store/auth.json"), '{"apiKey":"sk-secret"}');
  await writeFile(join(userData, "sessions-store/settings.json"), "{}");
  const out = join(userData, "main.mjs");
  await build({
    entryPoints: [join(REPO, "examples/electron/main.ts")],
    outfile: out,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    logLevel: "silent",
    plugins: [
      {
        name: "electron-stand-in",
        setup(esbuild) {
          esbuild.onResolve({ filter: /^electron$/ }, () => ({ path: "electron", namespace: "stand-in" }));
          esbuild.onLoad({ filter: /.*/, namespace: "stand-in" }, () => ({ contents: ELECTRON_STAND_IN, loader: "js" }));
        },
      },
    ],
  });
  await import(pathToFileURL(out).href);
});

afterAll(async () => {
  await rm(stub.userData, { recursive: true, force: true });
});

/** A port of a page whose requests come from a frame at `url` (inside `parent`, if given). */
function pagePort(url: string, parent: WebFrameMainLike | null = null) {
  const handler = stub.handlers.get("sessionkit-storage")!;
  const webContents: WebContentsLike = Object.assign(new EventEmitter(), { id: 1, send: () => {}, isDestroyed: () => false });
  const senderFrame: WebFrameMainLike = { url, origin: new URL(url).origin, parent };
  return electronStorage({
    // Structured clones both ways, as Electron's ipc makes them.
    bridge: { invoke: async (envelope) => structuredClone(await handler({ sender: webContents, senderFrame }, structuredClone(envelope))), onPush: () => () => {} },
  });
}

describe("examples/electron/main.ts under a stand-in electron module", () => {
  it("opens its page in a window with context isolation and the sandbox, and no Node", () => {
    expect(stub.loaded).toEqual([join(stub.userData, "index.html")]);
    expect(stub.windows[0]!.webPreferences).toMatchObject({ contextIsolation: true, sandbox: true, nodeIntegration: false });
  });

  it("its page writes sessions under sessions/, and nowhere else; auth.json and settings stay hidden", async () => {
    const page = pagePort(`${pathToFileURL(stub.loaded[0]!).href}#/chat`);
    const sm = await SessionManager.create(page, "/work/app");
    sm.appendMessage(userMsg("hello"));
    sm.appendMessage(assistantMsg("stored by main"));
    await sm.close();
    expect(sm.getSessionFile()).toMatch(/^sessions\//);
    expect(await page.stat(sm.getSessionFile()!)).toMatchObject({ size: expect.any(Number) });

    await expectStorageError(page.read("auth.json"), "forbidden");
    await expectStorageError(page.read("settings.json"), "forbidden");
    await expectStorageError(page.write("auth.json", new TextEncoder().encode("{}")), "read-only");
    await expectStorageError(page.write("blobs/abc", new Uint8Array(1)), "read-only");
    expect((await readdir(join(stub.userData, "sessions-store"))).sort()).toEqual(["auth.json", "sessions", "settings.json"]);
    await page.close();
  });

  it("refuses its page inside an iframe, another site, another local file, and its page's path on another host or scheme", async () => {
    const own = pathToFileURL(stub.loaded[0]!);
    await expectStorageError(pagePort(own.href, { url: "https://evil.example/", parent: null }).stat("sessions/x"), "forbidden");
    await expectStorageError(pagePort("https://evil.example/").stat("sessions/x"), "forbidden");
    await expectStorageError(pagePort(pathToFileURL(join(stub.userData, "download.html")).href).stat("sessions/x"), "forbidden");
    await expectStorageError(pagePort(`file://evil.example${own.pathname}`).stat("sessions/x"), "forbidden");
    await expectStorageError(pagePort(`https://evil.example${own.pathname}`).stat("sessions/x"), "forbidden");
  });
});
