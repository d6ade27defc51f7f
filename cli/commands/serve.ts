/** `serve`: its flags. */
import { defineCommand } from "../command.js";
import { UsageError } from "../errors.js";

export interface ServeArgs {
  port: number | undefined;
  host: string | undefined;
  /** --write: allow changes. */
  write: boolean;
  /** Every --allow-origin. */
  allowOrigins: string[];
  /** --agent-stores: every agent's store found besides each --root. */
  agentStores: boolean;
}

export const serve = defineCommand({
  options: { port: { type: "string" }, host: { type: "string" }, write: { type: "boolean" }, "allow-origin": { type: "string", multiple: true }, "agent-stores": { type: "boolean" } },
  operands: { max: 0, what: "" },
  manyRoots: true,
  parse(values): ServeArgs {
    const port = values.port === undefined ? undefined : Number(values.port);
    if (port !== undefined && (!/^\d+$/.test(values.port!) || port > 65535)) throw new UsageError(`--port must be a number from 0 to 65535 (got "${values.port}")`);
    for (const origin of values["allow-origin"] ?? []) {
      if (!URL.canParse(origin)) throw new UsageError(`--allow-origin must be a URL such as http://localhost:5173 (got "${origin}")`);
      // file:, data: and the like serialize as "null", the Origin of every sandboxed frame and data: page too.
      if (new URL(origin).origin === "null") throw new UsageError(`--allow-origin must be an http: or https: URL such as http://localhost:5173: "${origin}" has no origin of its own`);
    }
    if (values.store !== undefined && values["agent-stores"]) throw new UsageError("--store names a database store: it takes no --agent-stores");
    return { port, host: values.host, write: values.write ?? false, allowOrigins: values["allow-origin"] ?? [], agentStores: values["agent-stores"] ?? false };
  },
});
