/** The code that runs each command, loaded when it runs: a command loads no other's code. */
import type { CommandName } from "./command.js";
import { commandCode, type CommandCode } from "./commands.js";
import { exportSpec, importSpec } from "./commands/archive.js";
import { ls } from "./commands/ls.js";
import { history, search } from "./commands/search.js";
import { scan } from "./commands/scan.js";
import { serve } from "./commands/serve.js";
import { context, migrate, show, tree, verify } from "./commands/session.js";
import { stats } from "./commands/stats.js";
import { sync } from "./commands/sync.js";

export const COMMAND_CODE: Record<CommandName, CommandCode> = {
  ls: commandCode(ls, async () => (await import("./ls.js")).lsCommand),
  show: commandCode(show, async () => (await import("./session-commands.js")).showCommand),
  context: commandCode(context, async () => (await import("./session-commands.js")).contextCommand),
  tree: commandCode(tree, async () => (await import("./session-commands.js")).treeCommand),
  verify: commandCode(verify, async () => (await import("./session-commands.js")).verifyCommand),
  migrate: commandCode(migrate, async () => (await import("./session-commands.js")).migrateCommand),
  export: commandCode(exportSpec, async () => (await import("./archive.js")).exportCommand),
  import: commandCode(importSpec, async () => (await import("./archive.js")).importCommand),
  serve: commandCode(serve, async () => (await import("./serve/command.js")).serveCommand),
  search: commandCode(search, async () => (await import("./search.js")).searchCommand),
  history: commandCode(history, async () => (await import("./search.js")).historyCommand),
  scan: commandCode(scan, async () => (await import("./scan.js")).scanCommand),
  sync: commandCode(sync, async () => (await import("./sync.js")).syncCommand),
  stats: commandCode(stats, async () => (await import("./stats.js")).statsCommand),
};
