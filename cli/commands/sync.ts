/** `sync`: its flags. */
import { defineCommand } from "../command.js";
import { UsageError } from "../errors.js";
import { isMachineName } from "../machine-stores.js";

export interface SyncArgs {
  /** --to: the shared store (a postgres:// URL or a directory); else --store or --root is. */
  to: string | undefined;
  /** --as: the machine's name there. */
  machine: string | undefined;
  watch: boolean;
}

export const sync = defineCommand({
  options: { to: { type: "string" }, as: { type: "string" }, watch: { type: "boolean" } },
  operands: { max: 0, what: "" },
  parse(values): SyncArgs {
    const targets = [values.to, values.store, values.root].filter((target) => target !== undefined);
    if (targets.length !== 1) throw new UsageError(`sync needs one shared store to copy into: --to URL|DIR (or --store URL, or --root DIR)${targets.length > 1 ? `, got ${targets.length}` : ""}`);
    if (values.to !== undefined && /^[a-z][a-z0-9+.-]*:\/\//i.test(values.to) && !/^postgres(ql)?:\/\//.test(values.to)) throw new UsageError(`--to takes a postgres:// URL or a directory (got "${values.to}")`);
    if (values.as !== undefined && !isMachineName(values.as)) throw new UsageError(`--as must be a name of 1-64 letters, digits, ".", "_" or "-", not starting with "." or "-" (got "${values.as}")`);
    return { to: values.to, machine: values.as, watch: values.watch ?? false };
  },
});
