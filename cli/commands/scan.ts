/** `scan`: its flags. */
import { defineCommand } from "../command.js";
import { UsageError } from "../errors.js";
import { checkScope } from "./shared.js";

export interface ScanArgs {
  /** The sessions given (none: those of --cwd or --all). */
  targets: string[];
  all: boolean;
  cwd: string | undefined;
}

export const scan = defineCommand({
  options: { all: { type: "boolean" }, cwd: { type: "string" } },
  operands: { max: Infinity, what: "a session file or id prefix", optional: true },
  parse(values, { targets }): ScanArgs {
    checkScope("scan", values);
    if (targets.length > 0 && (values.all || values.cwd !== undefined)) throw new UsageError(`scan takes sessions or --${values.all ? "all" : "cwd"}, not both`);
    return { targets, all: values.all ?? false, cwd: values.cwd };
  },
});
