/** The commands of one session argument: show, context, tree, verify, migrate. */
import { defineCommand } from "../command.js";

export interface SessionArgs {
  /** The session file or id prefix (verify: or an archive). */
  target: string;
}

export interface ContextArgs extends SessionArgs {
  /** --leaf: the context at this entry instead of the session's leaf. */
  leaf: string | undefined;
}

const SESSION = { max: 1, what: "a session file or id prefix" };

const sessionCommand = (what = SESSION.what) => defineCommand({ options: {}, operands: { ...SESSION, what }, parse: (_values, { target }): SessionArgs => ({ target }) });

export const show = sessionCommand();
export const tree = sessionCommand();
export const migrate = sessionCommand();
export const verify = sessionCommand("a session file, id prefix or archive");

export const context = defineCommand({
  options: { leaf: { type: "string" } },
  operands: SESSION,
  parse: (values, { target }): ContextArgs => ({ target, leaf: values.leaf }),
});
