/**
 * What one model call used, read from an assistant message's `usage` as pi writes it in every
 * dialect (seed 003 keeps the message payload verbatim): `input`, `output`, `cacheRead` and
 * `cacheWrite` tokens, and `cost` in dollars with the same four parts and their `total`. Fields
 * may be missing (clawdbot writes only input, output and totalTokens): a missing number counts 0.
 *
 * The viewer's header (web-demo SessionModel) and every insight add usage through here, in file
 * order, so their figures are the same floating-point numbers, not merely close ones.
 */

/** Token counts as pi's `usage` names them. */
export interface TokenCounts {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
}

/** Dollars, by the same parts, and their total. */
export interface CostCounts {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  total: number;
}

export interface Usage {
  tokens: TokenCounts;
  cost: CostCounts;
}

type Block = Record<string, unknown>;
const isObject = (value: unknown): value is Block => typeof value === "object" && value !== null;
const num = (value: unknown) => (typeof value === "number" && Number.isFinite(value) ? value : 0);
const isNum = (value: unknown) => typeof value === "number" && Number.isFinite(value);

export function emptyUsage(): Usage {
  return { tokens: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
}

/**
 * The cost's total: the sum of its parts, as pi computes it (pi-ai's calculateCost) and as pi's
 * HTML export totals it; a cost that gives no part counts its `total` (a bare number too).
 */
function costTotal(cost: unknown): number {
  if (isObject(cost)) {
    if (isNum(cost.input) || isNum(cost.output) || isNum(cost.cacheRead) || isNum(cost.cacheWrite)) {
      return num(cost.input) + num(cost.output) + num(cost.cacheRead) + num(cost.cacheWrite);
    }
    return num(cost.total);
  }
  return num(cost);
}

/** The usage of an assistant message; null for any other message and for one without `usage`. */
export function messageUsage(message: unknown): Usage | null {
  if (!isObject(message) || message.role !== "assistant" || !isObject(message.usage)) return null;
  const usage = message.usage;
  const cost = isObject(usage.cost) ? usage.cost : {};
  return {
    tokens: { input: num(usage.input), output: num(usage.output), cacheRead: num(usage.cacheRead), cacheWrite: num(usage.cacheWrite) },
    cost: { input: num(cost.input), output: num(cost.output), cacheRead: num(cost.cacheRead), cacheWrite: num(cost.cacheWrite), total: costTotal(usage.cost) },
  };
}

/** Adds `add` into `into`, part by part. */
export function addUsage(into: Usage, add: Usage): void {
  into.tokens.input += add.tokens.input;
  into.tokens.output += add.tokens.output;
  into.tokens.cacheRead += add.tokens.cacheRead;
  into.tokens.cacheWrite += add.tokens.cacheWrite;
  into.cost.input += add.cost.input;
  into.cost.output += add.cost.output;
  into.cost.cacheRead += add.cost.cacheRead;
  into.cost.cacheWrite += add.cost.cacheWrite;
  into.cost.total += add.cost.total;
}

/**
 * Tokens the model was sent in one call: input, read from cache and written to cache (pi's
 * providers count the cached part of a prompt apart from `input`). 0 when the call reported none.
 */
export function contextTokens(usage: Usage): number {
  return usage.tokens.input + usage.tokens.cacheRead + usage.tokens.cacheWrite;
}

/** Every token of a usage: input, output, cache read and cache write. */
export function totalTokens(usage: Usage): number {
  return contextTokens(usage) + usage.tokens.output;
}

/** The model of an assistant message as the viewer names it: `provider/model`, or the model alone. */
export function modelOf(message: unknown): string | undefined {
  if (!isObject(message) || typeof message.model !== "string") return undefined;
  return typeof message.provider === "string" ? `${message.provider}/${message.model}` : message.model;
}
