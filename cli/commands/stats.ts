/** `stats`: its flags. */
import { defineCommand, STATS_TABLES, type StatsTable } from "../command.js";
import { UsageError } from "../errors.js";
import { checkScope } from "./shared.js";

export interface StatsArgs {
  /** A query or a session ("" for none). */
  target: string;
  all: boolean;
  cwd: string | undefined;
  /** --by: one table instead of all. */
  by: StatsTable | undefined;
}

export const stats = defineCommand({
  options: { all: { type: "boolean" }, cwd: { type: "string" }, by: { type: "string" } },
  operands: { max: Infinity, what: "a query or a session", optional: true, query: true },
  parse(values, { target }): StatsArgs {
    checkScope("stats", values);
    if (values.by !== undefined && !(STATS_TABLES as readonly string[]).includes(values.by)) throw new UsageError(`--by must be ${STATS_TABLES.slice(0, -1).join(", ")} or ${STATS_TABLES.at(-1)} (got "${values.by}")`);
    return { target, all: values.all ?? false, cwd: values.cwd, by: values.by as StatsTable | undefined };
  },
});
