/**
 * The message helpers of pi's and oh-my-pi's `test/utilities.ts`, field for field, so ported
 * tests build the same messages as upstream.
 */
import type { AgentMessage } from "../../src/index.js";

export interface TestUserMessage extends AgentMessage {
  role: "user";
  content: string;
  timestamp: number;
}

export interface TestAssistantMessage extends AgentMessage {
  role: "assistant";
  content: Array<{ type: "text"; text: string }>;
  api: string;
  provider: string;
  model: string;
  usage: {
    input: number;
    output: number;
    cacheRead: number;
    cacheWrite: number;
    totalTokens: number;
    cost: { input: number; output: number; cacheRead: number; cacheWrite: number; total: number };
  };
  stopReason: string;
  timestamp: number;
}

export function userMsg(text: string): TestUserMessage {
  return { role: "user", content: text, timestamp: Date.now() };
}

export function assistantMsg(text: string): TestAssistantMessage {
  return {
    role: "assistant",
    content: [{ type: "text", text }],
    api: "anthropic-messages",
    provider: "anthropic",
    model: "test",
    usage: {
      input: 1,
      output: 1,
      cacheRead: 0,
      cacheWrite: 0,
      totalTokens: 2,
      cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
    },
    stopReason: "stop",
    timestamp: Date.now(),
  };
}
