// pi listing a store as `sessionkit ls --all --json` does, as a whole process: SessionManager.list
// of every project dir below ROOT/sessions, printed as one JSON array. Plain JavaScript run by
// plain `node`, so pi starts as its users start it.
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { SessionManager } from "../../node_modules/@mariozechner/pi-coding-agent/dist/core/session-manager.js";

const sessions = join(process.argv[2], "sessions");
const listed = [];
for (const dir of readdirSync(sessions).sort()) listed.push(...(await SessionManager.list(process.cwd(), join(sessions, dir))));
process.stdout.write(`${JSON.stringify(listed)}\n`);
