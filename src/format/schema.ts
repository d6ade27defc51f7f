/**
 * zod schemas for every canonical entry type (files of every dialect are checked after decoding;
 * the header is checked in header.ts). Objects are loose: fields this
 * kit does not name are kept, so entries round-trip unchanged.
 */
import * as z from "zod/mini";

// A refinement rather than z.minLength(): that brings zod's length checks into every app that
// opens a session (`npm run size`, SessionManager + indexedDbStorage).
/** The message is the one describeIssue gave z.minLength(1)'s issue. */
const nonEmpty = () => z.refine<string>((value) => value !== "", { error: "expected string of length >= 1" });

/**
 * Schemas are built on first use, each entry type's when an entry of that type is first checked:
 * a page pays only for the types it meets (the viewer proves message lines from their bytes, so a
 * small session's first paint checks a few entries of three types), and nothing when the module is
 * evaluated (served viewer, bench/browser/viewer-profile.ts --first: v8.evaluateModule 30 → 25 ms).
 */
function lazy<T>(build: () => T): () => T {
  let built: T | undefined;
  return () => (built ??= build());
}

const base = lazy(() => ({
  id: z.string().check(nonEmpty()),
  parentId: z.optional(z.nullable(z.string())),
  timestamp: z.string(),
}));

/** Each entry type's schema builder; checkEntry picks it by the entry's `type`, so none checks `type` again. */
const entrySchemas = {
  message: () => z.looseObject({
    ...base(),
    message: z.looseObject({ role: z.string(), timestamp: z.optional(z.number()) }),
  }),
  thinking_level_change: () => z.looseObject({
    ...base(),
    thinkingLevel: z.string(),
  }),
  model_change: () => z.union([
    z.looseObject({ ...base(), provider: z.string(), modelId: z.string() }),
    z.looseObject({ ...base(), model: z.string(), role: z.optional(z.string()) }),
  ]),
  compaction: () => z.looseObject({
    ...base(),
    summary: z.string(),
    firstKeptEntryId: z.string(),
    tokensBefore: z.number(),
    fromHook: z.optional(z.boolean()),
    shortSummary: z.optional(z.string()),
    fromExtension: z.optional(z.boolean()),
  }),
  branch_summary: () => z.looseObject({
    ...base(),
    fromId: z.string(),
    summary: z.string(),
    fromHook: z.optional(z.boolean()),
    fromExtension: z.optional(z.boolean()),
  }),
  custom: () => z.looseObject({ ...base(), customType: z.string() }),
  custom_message: () => z.looseObject({
    ...base(),
    customType: z.string(),
    content: z.union([z.string(), z.array(z.union([
      z.looseObject({ type: z.literal("text"), text: z.string() }),
      z.looseObject({ type: z.literal("image"), data: z.string(), mimeType: z.string() }),
    ]))]),
    display: z.boolean(),
  }),
  label: () => z.looseObject({
    ...base(),
    targetId: z.string(),
    label: z.optional(z.nullable(z.string())),
  }),
  session_info: () => z.looseObject({ ...base(), name: z.optional(z.string()) }),
  ttsr_injection: () => z.looseObject({
    ...base(),
    injectedRules: z.array(z.string()),
  }),
  session_init: () => z.looseObject({
    ...base(),
    systemPrompt: z.optional(z.string()),
    task: z.optional(z.string()),
    tools: z.optional(z.array(z.string())),
  }),
  mode_change: () => z.looseObject({ ...base(), mode: z.string() }),
  leaf: () => z.looseObject({ ...base(), targetId: z.string() }),
};

type EntrySchema = ReturnType<(typeof entrySchemas)[keyof typeof entrySchemas]>;
const builtSchemas = new Map<string, EntrySchema>();

/** Any entry: a known type must match its schema; an unknown type needs only the base fields. */
const unknownEntrySchema = lazy(() => z.looseObject({ ...base(), type: z.string() }));

/** The schema of entries of `type` (a known type's, else the unknown type's), built on its first use. */
function schemaOf(type: unknown): EntrySchema | ReturnType<typeof unknownEntrySchema> {
  if (typeof type !== "string" || !Object.hasOwn(entrySchemas, type)) return unknownEntrySchema();
  let schema = builtSchemas.get(type);
  if (schema === undefined) {
    schema = entrySchemas[type as keyof typeof entrySchemas]();
    builtSchemas.set(type, schema);
  }
  return schema;
}

export type EntryCheck = { ok: true } | { ok: false; problem: string };

/** Validates one non-header entry of a current-version (v2+) file. */
export function checkEntry(value: unknown): EntryCheck {
  const type = typeof value === "object" && value !== null ? (value as { type?: unknown }).type : undefined;
  const result = schemaOf(type).safeParse(value, { error: describeIssue });
  if (result.success) return { ok: true };
  const issue = result.error.issues[0];
  const where = issue?.path.length ? issue.path.join(".") : "entry";
  return { ok: false, problem: `${String(type ?? "entry")}: ${where}: ${issue?.message ?? "invalid"}` };
}

/**
 * English for the issues these schemas raise. zod/mini says "Invalid input" for every issue; its
 * English locale would add its size to every app that opens a session (`npm run size`, scenario
 * "`SessionManager` + `indexedDbStorage`", would show how much), for the few cases below.
 */
function describeIssue(issue: z.core.$ZodRawIssue): string {
  switch (issue.code) {
    case "invalid_type":
      return `expected ${issue.expected}, received ${issue.input === null ? "null" : Array.isArray(issue.input) ? "array" : typeof issue.input}`;
    case "invalid_union":
      return "matches none of its forms";
    default:
      return `invalid (${issue.code})`;
  }
}
