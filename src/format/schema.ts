/**
 * zod schemas for the canonical header and every canonical entry type (files of every dialect
 * are checked after decoding). Objects are loose: fields this
 * kit does not name are kept, so entries round-trip unchanged.
 */
import { z } from "zod";

export const sessionHeaderSchema = z.looseObject({
  type: z.literal("session"),
  id: z.string(),
  version: z.number().int().positive().optional(),
  timestamp: z.string().optional(),
  cwd: z.string().optional(),
  parentSession: z.string().optional(),
  title: z.string().optional(),
});

const base = {
  id: z.string().min(1),
  parentId: z.string().nullable().optional(),
  timestamp: z.string(),
};

const textContent = z.looseObject({ type: z.literal("text"), text: z.string() });
const imageContent = z.looseObject({ type: z.literal("image"), data: z.string(), mimeType: z.string() });

export const agentMessageSchema = z.looseObject({
  role: z.string(),
  timestamp: z.number().optional(),
});

const entrySchemas = {
  message: z.looseObject({ ...base, type: z.literal("message"), message: agentMessageSchema }),
  thinking_level_change: z.looseObject({
    ...base,
    type: z.literal("thinking_level_change"),
    thinkingLevel: z.string(),
  }),
  model_change: z.union([
    z.looseObject({ ...base, type: z.literal("model_change"), provider: z.string(), modelId: z.string() }),
    z.looseObject({ ...base, type: z.literal("model_change"), model: z.string(), role: z.string().optional() }),
  ]),
  compaction: z.looseObject({
    ...base,
    type: z.literal("compaction"),
    summary: z.string(),
    firstKeptEntryId: z.string(),
    tokensBefore: z.number(),
    fromHook: z.boolean().optional(),
    shortSummary: z.string().optional(),
    fromExtension: z.boolean().optional(),
  }),
  branch_summary: z.looseObject({
    ...base,
    type: z.literal("branch_summary"),
    fromId: z.string(),
    summary: z.string(),
    fromHook: z.boolean().optional(),
    fromExtension: z.boolean().optional(),
  }),
  custom: z.looseObject({ ...base, type: z.literal("custom"), customType: z.string() }),
  custom_message: z.looseObject({
    ...base,
    type: z.literal("custom_message"),
    customType: z.string(),
    content: z.union([z.string(), z.array(z.union([textContent, imageContent]))]),
    display: z.boolean(),
  }),
  label: z.looseObject({
    ...base,
    type: z.literal("label"),
    targetId: z.string(),
    label: z.string().nullable().optional(),
  }),
  session_info: z.looseObject({ ...base, type: z.literal("session_info"), name: z.string().optional() }),
  ttsr_injection: z.looseObject({
    ...base,
    type: z.literal("ttsr_injection"),
    injectedRules: z.array(z.string()),
  }),
  session_init: z.looseObject({
    ...base,
    type: z.literal("session_init"),
    systemPrompt: z.string().optional(),
    task: z.string().optional(),
    tools: z.array(z.string()).optional(),
  }),
  mode_change: z.looseObject({ ...base, type: z.literal("mode_change"), mode: z.string() }),
  leaf: z.looseObject({ ...base, type: z.literal("leaf"), targetId: z.string() }),
} as const;

/** Any entry: a known type must match its schema; an unknown type needs only the base fields. */
const unknownEntrySchema = z.looseObject({ ...base, type: z.string() });

export type EntryCheck = { ok: true } | { ok: false; problem: string };

/** Validates one non-header entry of a current-version (v2+) file. */
export function checkEntry(value: unknown): EntryCheck {
  const type = typeof value === "object" && value !== null ? (value as { type?: unknown }).type : undefined;
  const schema = typeof type === "string" && Object.hasOwn(entrySchemas, type)
    ? entrySchemas[type as keyof typeof entrySchemas]
    : unknownEntrySchema;
  const result = schema.safeParse(value);
  if (result.success) return { ok: true };
  const issue = result.error.issues[0];
  const where = issue?.path.length ? issue.path.join(".") : "entry";
  return { ok: false, problem: `${String(type ?? "entry")}: ${where}: ${issue?.message ?? "invalid"}` };
}
