/**
 * Real message content for the sessions of users' shape: the messages of the real pi sessions in
 * test/fixtures/corpus, cut into what an agent run is made of (user prompts, tool rounds, final
 * answers). The generator re-sequences them, so the bytes a reader meets (code in tool output,
 * escapes, nested `details`, thinking signatures, the odd image) are those users' files hold,
 * not a generator's idea of them.
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

type Message = Record<string, unknown> & { role: string };

export interface CorpusTurns {
  users: Message[];
  /** An assistant message with tool calls, then the tool results that answer it. */
  rounds: Message[][];
  /** Assistant messages without a tool call: a turn's last answer. */
  answers: Message[];
}

const CORPUS_DIR = join(dirname(fileURLToPath(import.meta.url)), "../../test/fixtures/corpus");

const hasToolCall = (message: Message) => Array.isArray(message.content) && (message.content as { type?: unknown }[]).some((block) => block?.type === "toolCall");

/**
 * The corpus's messages by part. Rounds larger than `maxRoundBytes` serialized are left out: the
 * shape is many small tool turns (the corpus's few subagent rounds of 100–640 KB are another shape).
 * Damaged lines (the corpus keeps two glued ones) are skipped.
 */
export function corpusTurns(maxRoundBytes: number): CorpusTurns {
  const turns: CorpusTurns = { users: [], rounds: [], answers: [] };
  for (const dir of readdirSync(CORPUS_DIR, { withFileTypes: true }).filter((entry) => entry.isDirectory()).map((entry) => entry.name).sort()) {
    for (const name of readdirSync(join(CORPUS_DIR, dir)).filter((file) => file.endsWith(".jsonl")).sort()) {
      const messages: Message[] = [];
      for (const line of readFileSync(join(CORPUS_DIR, dir, name), "utf8").split("\n")) {
        let record: { type?: unknown; message?: Message };
        try {
          record = JSON.parse(line) as typeof record;
        } catch {
          continue;
        }
        if (record.type === "message" && typeof record.message?.role === "string") messages.push(record.message);
      }
      for (let i = 0; i < messages.length; i++) {
        const message = messages[i]!;
        if (message.role === "user") turns.users.push(message);
        else if (message.role === "assistant" && !hasToolCall(message)) turns.answers.push(message);
        else if (message.role === "assistant") {
          let end = i + 1;
          while (messages[end]?.role === "toolResult") end++;
          const round = messages.slice(i, end);
          if (end > i + 1 && round.reduce((bytes, m) => bytes + JSON.stringify(m).length, 0) <= maxRoundBytes) turns.rounds.push(round);
          i = end - 1;
        }
      }
    }
  }
  return turns;
}
