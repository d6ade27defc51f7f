/** `ls`: its flags. */
import { defineCommand } from "../command.js";

export interface LsArgs {
  all: boolean;
  cwd: string | undefined;
  /** --with-text: pi's allMessagesText too. */
  withText: boolean;
}

export const ls = defineCommand({
  options: { all: { type: "boolean" }, cwd: { type: "string" }, "with-text": { type: "boolean" } },
  operands: { max: 0, what: "" },
  parse: (values): LsArgs => ({ all: values.all ?? false, cwd: values.cwd, withText: values["with-text"] ?? false }),
});
