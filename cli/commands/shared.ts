/** Checks of flags that several commands take. */
import { UsageError } from "../errors.js";

/** --limit N: a whole number ≥ 1. */
export function parseLimit(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const limit = Number(value);
  if (!/^\d+$/.test(value) || limit < 1) throw new UsageError(`--limit must be a whole number ≥ 1 (got "${value}")`);
  return limit;
}

/** A command of one project dir (--cwd DIR) or of all (--all): not both. */
export function checkScope(command: string, values: { all?: boolean | undefined; cwd?: string | undefined }): void {
  if (values.all && values.cwd !== undefined) throw new UsageError(`${command} takes --cwd DIR or --all, not both`);
}
