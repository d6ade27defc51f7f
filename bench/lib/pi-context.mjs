// pi doing what `sessionkit context --json FILE` does, as a whole process: open the file with pi's
// SessionManager, build the context, print it as JSON. Plain JavaScript run by plain `node`, so pi
// starts as its users start it (a TypeScript loader would add its own start-up to pi's figure).
import { SessionManager } from "../../node_modules/@mariozechner/pi-coding-agent/dist/core/session-manager.js";

process.stdout.write(`${JSON.stringify(SessionManager.open(process.argv[2]).buildSessionContext())}\n`);
