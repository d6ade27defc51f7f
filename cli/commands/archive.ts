/** `export` and `import`: their flags. */
import type { ConflictPolicy } from "../../src/archive/import.js";
import { defineCommand } from "../command.js";
import { UsageError } from "../errors.js";

export interface ExportArgs {
  /** The first session argument; `targets`: all of them. */
  target: string;
  targets: string[];
  /** -o FILE. */
  output: string;
  /** --leaf: only the branch to this entry (one session). */
  leaf: string | undefined;
  /** False with --no-blobs. */
  blobs: boolean;
  /** --force: replace an existing output file. */
  force: boolean;
  /** --html: a self-contained HTML file instead of an archive. */
  html: boolean;
  /** --jsonl: one session file instead of an archive. */
  jsonl: boolean;
  /** --redact (true) or --no-redact (false); undefined: the format's default. */
  redact: boolean | undefined;
}

export interface ImportArgs {
  /** The archive, session file or directory. */
  target: string;
  onConflict: ConflictPolicy;
  dryRun: boolean;
}

const CONFLICT_POLICIES: readonly ConflictPolicy[] = ["auto", "skip", "replace", "fork"];

export const exportSpec = defineCommand({
  options: {
    output: { type: "string", short: "o" },
    leaf: { type: "string" },
    "no-blobs": { type: "boolean" },
    force: { type: "boolean" },
    html: { type: "boolean" },
    jsonl: { type: "boolean" },
    redact: { type: "boolean" },
    "no-redact": { type: "boolean" },
  },
  operands: { max: Infinity, what: "a session file or id prefix" },
  parse(values, { target, targets }): ExportArgs {
    const sessions = targets.length;
    if (values.output === undefined) throw new UsageError("export needs -o FILE (the archive to write)");
    if (values.leaf !== undefined && sessions > 1) throw new UsageError(`--leaf applies to a single session, got ${sessions}`);
    if (values.html && sessions > 1) throw new UsageError(`--html exports a single session, got ${sessions}`);
    if (values.html && values["no-blobs"]) throw new UsageError("--html always includes the images (--no-blobs is for archives)");
    if (values.html && values.jsonl) throw new UsageError("export takes --html or --jsonl, not both");
    if (values.jsonl && sessions > 1) throw new UsageError(`--jsonl exports a single session, got ${sessions}`);
    if (values.jsonl && values["no-blobs"]) throw new UsageError("--jsonl always includes the images (--no-blobs is for archives)");
    if (values.redact && values["no-redact"]) throw new UsageError("export takes --redact or --no-redact, not both");
    return {
      target,
      targets,
      output: values.output,
      leaf: values.leaf,
      blobs: !(values["no-blobs"] ?? false),
      force: values.force ?? false,
      html: values.html ?? false,
      jsonl: values.jsonl ?? false,
      redact: values.redact ? true : values["no-redact"] ? false : undefined,
    };
  },
});

export const importSpec = defineCommand({
  options: { "on-conflict": { type: "string" }, "dry-run": { type: "boolean" } },
  operands: { max: 1, what: "an archive, a session file or a directory" },
  parse(values, { target }): ImportArgs {
    const onConflict = values["on-conflict"] ?? "auto";
    if (!(CONFLICT_POLICIES as readonly string[]).includes(onConflict)) {
      throw new UsageError(`--on-conflict must be ${CONFLICT_POLICIES.slice(0, -1).join(", ")} or ${CONFLICT_POLICIES.at(-1)} (got "${onConflict}")`);
    }
    return { target, onConflict: onConflict as ConflictPolicy, dryRun: values["dry-run"] ?? false };
  },
});
