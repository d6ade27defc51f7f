/**
 * The command line's first look: which command it runs, or whether it asks for the help or the
 * version. Nothing of any command is loaded for it; the command's module parses its flags and
 * arguments (commands.ts).
 */
import { parseArgs } from "node:util";
import { GLOBAL_OPTIONS, isCommandName, parseArgsMessage, type CommandName } from "./command.js";

/** What the command line asks for, before any command's module is loaded; "usage": it is malformed. */
export type CommandLine =
  | { kind: "help"; command: CommandName | undefined }
  | { kind: "version" }
  | { kind: "run"; command: CommandName }
  | { kind: "usage"; message: string };

const unknownCommand = (word: string): CommandLine => ({ kind: "usage", message: `unknown command "${word}"` });

/**
 * Finds the command (the first argument that is not a flag's value), and whether the version or
 * help is asked for (`--help` anywhere, or git's `sessionkit help <command>`). A command's own
 * flags are not known yet: a word right after one of them may be its value, so a word that is no
 * command there is passed over (the command's strict parse then checks where its name was).
 */
export function scanCommandLine(argv: readonly string[]): CommandLine {
  let tokens;
  try {
    ({ tokens } = parseArgs({ args: [...argv], options: GLOBAL_OPTIONS, strict: false, allowPositionals: true, tokens: true }));
  } catch (error) {
    return { kind: "usage", message: parseArgsMessage(error) };
  }
  let command: string | undefined;
  let passedOver: string | undefined;
  let help = false;
  let afterUnknownFlag = false;
  const words: string[] = [];
  for (const token of tokens) {
    if (token.kind === "option") {
      if (token.name === "version") return { kind: "version" };
      if (token.name === "help") help = true;
      afterUnknownFlag = !(token.name in GLOBAL_OPTIONS) && !token.inlineValue;
    } else if (token.kind === "positional") {
      words.push(token.value);
      if (command === undefined) {
        if (token.value === "help" || isCommandName(token.value) || !afterUnknownFlag) command = token.value;
        else passedOver ??= token.value;
      }
      afterUnknownFlag = false;
    }
  }
  // `sessionkit help <command>`, `sessionkit <command> --help`.
  const topic = command === "help" ? words[words.indexOf("help") + 1] : help ? command : undefined;
  if (command === "help" || help) {
    if (topic !== undefined && !isCommandName(topic)) return unknownCommand(topic);
    return { kind: "help", command: topic };
  }
  if (command === undefined) return passedOver === undefined ? { kind: "usage", message: "missing command" } : unknownCommand(passedOver);
  return isCommandName(command) ? { kind: "run", command } : unknownCommand(command);
}

