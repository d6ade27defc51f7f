/**
 * Sessions for the viewer benchmark, written by pi's own SessionManager, by entry count (1k, 10k,
 * 100k): turns of user → (assistant tool call → tool result)* → answer, with branches, a branch
 * summary, compactions, labels, model and thinking changes and a name, as bench/lib/data.ts
 * writes them, but with smaller messages (~0.8 KB serialized on average) so 100,000 entries make
 * ~80 MB. Cached under bench/.data/viewer (git-ignored) while the file is complete.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { MessageFactory, type MessageSizes } from "./message-factory.js";
import { PiSessionManager } from "./pi-session-manager.js";

type PiMessage = Parameters<PiSessionManager["appendMessage"]>[0];

/** Below bench/lib/data.ts DATA_DIR, named by path: scripts/ reads this module too and may not import bench/. */
export const VIEWER_DATA_DIR = fileURLToPath(new URL("../../bench/.data/viewer", import.meta.url));
const GENERATOR_VERSION = 1;

const VIEWER_SIZES: MessageSizes = {
  userChars: [40, 600],
  thinkingChars: [80, 500],
  textChars: [40, 400],
  toolOutputChars: [150, 4000],
  imageChance: 0.002,
};

/** Writes (or reuses) a session of at least `entries` entries; returns its path and entry count. */
export function ensureViewerSession(entries: number): { path: string; entries: number; bytes: number } {
  const dir = join(VIEWER_DATA_DIR, `v${GENERATOR_VERSION}-${entries}`);
  const done = join(dir, "done.json");
  if (existsSync(done)) {
    const meta = JSON.parse(readFileSync(done, "utf8")) as { path: string; entries: number };
    if (existsSync(meta.path)) return { ...meta, bytes: statSync(meta.path).size };
  }
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const pi = PiSessionManager.create("/bench/viewer-project", dir);
  const factory = new MessageFactory(entries, VIEWER_SIZES);
  const random = factory.random;
  pi.appendModelChange("anthropic", "claude-sonnet-4-5");
  pi.appendThinkingLevelChange("medium");
  const turnStarts: string[] = [];
  const turnEnds: string[] = [];
  let count = 2;
  const add = (id: string) => {
    count++;
    return id;
  };
  for (let turn = 1; count < entries; turn++) {
    if (turn % 53 === 0 && turnEnds.length > 4) {
      const keep = turnEnds.length - 2;
      pi.branch(turnEnds[keep - 1]!);
      turnStarts.length = keep;
      turnEnds.length = keep;
    }
    if (turn % 97 === 0 && turnEnds.length > 3) {
      const keep = turnEnds.length - 1;
      add(pi.branchWithSummary(turnEnds[keep - 1]!, factory.summary()));
      turnStarts.length = keep;
      turnEnds.length = keep;
    }
    if (turn % 45 === 0) {
      const model = factory.switchModel();
      add(pi.appendModelChange(model.provider, model.model));
    }
    if (turn % 70 === 0) add(pi.appendThinkingLevelChange(["low", "medium", "high"][turn % 3]!));
    if (turn % 40 === 0 && turnStarts.length > 4) add(pi.appendCompaction(factory.summary(), turnStarts[turnStarts.length - 4]!, 100_000 + Math.floor(random() * 80_000)));
    turnStarts.push(add(pi.appendMessage(factory.user() as unknown as PiMessage)));
    const steps = 1 + Math.floor(random() * 4);
    for (let step = 0; step < steps; step++) {
      const { message, toolCall } = factory.assistant(false);
      add(pi.appendMessage(message as unknown as PiMessage));
      add(pi.appendMessage(factory.toolResult(toolCall!) as unknown as PiMessage));
    }
    turnEnds.push(add(pi.appendMessage(factory.assistant(true).message as unknown as PiMessage)));
    if (turn === 3) add(pi.appendSessionInfo(`bench: a ${entries.toLocaleString("en")}-entry session`));
    if (turn % 31 === 0) add(pi.appendLabelChange(turnStarts[turnStarts.length - 1]!, `checkpoint-${turn}`));
  }
  const file = pi.getSessionFile()!;
  const path = join(dir, "session.jsonl");
  renameSync(file, path);
  for (const name of readdirSync(dir)) if (name !== "session.jsonl") rmSync(join(dir, name), { recursive: true, force: true });
  writeFileSync(done, JSON.stringify({ path, entries: count }));
  return { path, entries: count, bytes: statSync(path).size };
}
