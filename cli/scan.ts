/**
 * `sessionkit scan`: the secrets in sessions, from the stores a command reads (their findings kept
 * in each store's cache, .sessionkit/secrets) or from the session arguments given (read in full).
 * Exit 1 when something was found, so that a script can stop on it.
 */
import nodePath from "node:path";
import type { RedactionCounts } from "../src/secrets/redact.js";
import { scanSessionFile, scanSessions, type SecretFinding } from "../src/secrets/scan.js";
import { storeSessionDir } from "../src/session/paths.js";
import type { AgentName } from "./command.js";
import { CliError, EXIT } from "./errors.js";
import { scanProgress } from "./progress.js";
import type { ScanArgs } from "./commands/scan.js";
import { lookupContext, type Run } from "./run.js";
import { resolveSessionArgument } from "./session-argument.js";
import { storeFileOf, storeStorage } from "./store.js";

/** A finding with an absolute `path`, and the agent and store it belongs to when it is in one. */
type FoundSecret = SecretFinding & { agent?: AgentName; store?: string };

export async function scanCommand(run: Run<ScanArgs>): Promise<number> {
  const found: FoundSecret[] = [];
  let sessions = 0;
  let where: string;
  if (run.args.targets.length > 0) {
    const context = await lookupContext(run);
    for (const target of run.args.targets) {
      const ref = await resolveSessionArgument(target, context);
      try {
        const findings = await scanSessionFile(ref.storage, ref.path);
        if (findings === null) throw new CliError("invalid", `${ref.absolute} is not a session file (its first line is no session header)`);
        sessions++;
        const store = ref.store ? { agent: ref.store.agent, store: ref.store.root } : {};
        for (const finding of findings) found.push({ ...finding, path: ref.absolute, ...store });
      } finally {
        await ref.storage.close();
      }
    }
    where = `${sessions} session${sessions === 1 ? "" : "s"}`;
  } else {
    const stores = await run.stores();
    const cwd = nodePath.resolve(run.io.cwd, run.args.cwd ?? ".");
    for (const store of stores) {
      // Read through the cache: findings are kept there, never in the agent's folder.
      const storage = await storeStorage(store, run.io.env, run.home);
      const progress = scanProgress(run.io.stderr, stores.length > 1 ? `sessionkit: scan: ${store.label}` : "sessionkit: scan", run.args.json && !run.io.stderr.isTTY);
      try {
        const scope = run.args.all ? {} : { dir: storeSessionDir(store.layout, cwd), ...(store.layout === "seed003" ? { cwd } : {}) };
        const result = await scanSessions(storage, { ...scope, onProgress: progress.onProgress });
        sessions += result.sessions;
        for (const finding of result.findings) found.push({ ...finding, path: storeFileOf(store, finding.path), agent: store.agent, store: store.root });
      } finally {
        progress.done();
        await storage.close();
      }
    }
    const roots = stores.map((store) => store.root).join(", ") || "no store";
    where = `${sessions} session${sessions === 1 ? "" : "s"} ${run.args.all ? "" : `of ${cwd} `}in ${roots}${run.args.all ? "" : " (--all scans every project)"}`;
  }
  run.print(found, () => {
    if (found.length === 0) return [`no secrets found in ${where}`];
    const lines: string[] = [];
    let session = "";
    const kindWidth = Math.max(...found.map((finding) => finding.kind.length));
    for (const finding of found) {
      if (finding.path !== session) {
        session = finding.path;
        lines.push(`${finding.path}  (${finding.agent ? `${finding.agent} ` : ""}session ${finding.sessionId})`);
      }
      lines.push(`  ${(finding.entryId ?? "(header)").padEnd(8)}  ${finding.kind.padEnd(kindWidth)}  ${finding.preview}  ${finding.field}`);
    }
    const withFindings = new Set(found.map((finding) => finding.path)).size;
    lines.push(`${found.length} finding${found.length === 1 ? "" : "s"} in ${withFindings} of ${where}`);
    return lines;
  });
  return found.length > 0 ? EXIT["not-found"] : EXIT.ok;
}

/** Counts per kind in words: "3 secrets: 2 anthropic-api-key, 1 url-password", or "no secrets found". */
export function countsText(counts: RedactionCounts): string {
  const kinds = Object.entries(counts).sort(([a, x], [b, y]) => y - x || (a < b ? -1 : 1));
  const total = kinds.reduce((n, [, count]) => n + count, 0);
  return total === 0 ? "no secrets found" : `${total} secret${total === 1 ? "" : "s"}: ${kinds.map(([kind, count]) => `${count} ${kind}`).join(", ")}`;
}

/** Prints on stderr what an export redacted, as counts per kind. */
export function reportRedaction(run: Run, counts: RedactionCounts): void {
  const text = Object.keys(counts).length === 0 ? "no secrets found, nothing redacted" : `redacted ${countsText(counts)}`;
  run.io.stderr.write(`sessionkit: ${run.args.command}: ${text}\n`);
}
