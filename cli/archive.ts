/**
 * `export`, `import`, and `verify` of an archive: thin wrappers over the archive API. Sources are
 * read in place; export writes only its -o file, import only into the root.
 */
import { randomBytes } from "node:crypto";
import { createWriteStream, type WriteStream } from "node:fs";
import { open, readdir, readFile, realpath, rename, rm } from "node:fs/promises";
import nodePath from "node:path";
import { Writable } from "node:stream";
import { nodeArchiveCodecs } from "../adapters/node-fs/index.js";
import { exportArchive, type ExportSummary } from "../src/archive/export.js";
import { importArchive, importSessionFiles, type ImportOptions, type ImportSummary, type SessionFileInput } from "../src/archive/import.js";
import { isArchiveError, type ArchiveError } from "../src/archive/errors.js";
import { verifyArchive, type VerifySummary } from "../src/archive/verify.js";
import type { ArchiveRangeSource } from "../src/archive/zip-read.js";
import { discoverAgentStores, storeAt, storeOwner, type AgentStore } from "./agent-stores.js";
import type { ExportArgs, ImportArgs } from "./commands/archive.js";
import type { SessionArgs } from "./commands/session.js";
import { lookupContext, type Run } from "./run.js";
import { CliError, EXIT, failureKind } from "./errors.js";
import { exportHtmlCommand } from "./export-html.js";
import { exportJsonlCommand } from "./export-jsonl.js";
import { countsText, reportRedaction } from "./scan.js";
import { archiveProgress } from "./progress.js";
import { exportView, resolveSessionArgument, type ExportView, type SessionFileRef } from "./session-argument.js";
import { statOrNull, storeFileOf } from "./store.js";
import { openStorePort } from "./store-port.js";

const ZIP_MAGIC = Buffer.from("PK\x03\x04", "latin1");

/** A .zip name, or a file that starts like a zip; false when it cannot be read (the caller reports that). */
export async function isArchiveFile(file: string): Promise<boolean> {
  if (file.toLowerCase().endsWith(".zip")) return true;
  try {
    const handle = await open(file, "r");
    try {
      const { bytesRead, buffer } = await handle.read(Buffer.alloc(4), 0, 4, 0);
      return bytesRead === 4 && buffer.equals(ZIP_MAGIC);
    } finally {
      await handle.close();
    }
  } catch {
    return false;
  }
}

/**
 * One line for an archive failure: where (the archive, when the member is inside one), the member
 * (named by `nameOf`), the rule broken, and the error's code.
 */
function archiveErrorLine(error: ArchiveError, where: string | undefined, nameOf: (member: string) => string = (member) => member): string {
  const memberPrefix = error.member === undefined ? "" : `${error.member}: `;
  const rule = memberPrefix !== "" && error.message.startsWith(memberPrefix) ? error.message.slice(memberPrefix.length) : error.message;
  const parts = [where, error.member === undefined ? undefined : nameOf(error.member), rule].filter((part) => part !== undefined);
  return `${parts.join(": ")} [${error.code}]`;
}

async function requireFile(file: string): Promise<void> {
  const info = await statOrNull(file);
  if (!info) throw new CliError("not-found", `${file}: no such file`);
  if (!info.isFile()) throw new CliError("invalid", `${file} is not a file`);
}

// ---------------------------------------------------------------------------
// export
// ---------------------------------------------------------------------------

export async function exportCommand(run: Run<ExportArgs>): Promise<number> {
  if (run.args.html) return exportHtmlCommand(run);
  if (run.args.jsonl) return exportJsonlCommand(run);
  const output = nodePath.resolve(run.io.cwd, run.args.output!);
  const outputDir = nodePath.dirname(output);
  const dirInfo = await statOrNull(outputDir);
  if (!dirInfo?.isDirectory()) throw new CliError("failed", `${output}: cannot write it (${outputDir} is not a directory)`);
  const existing = await statOrNull(output);
  if (existing?.isDirectory()) throw new CliError("failed", `${output} is a directory (-o names the archive file to write)`);
  if (existing && !run.args.force) throw new CliError("failed", `${output} exists: not replacing it (use --force to replace it)`);

  const refs: SessionFileRef[] = [];
  try {
    const context = await lookupContext(run);
    for (const target of run.args.targets) refs.push(await resolveSessionArgument(target, context));
    // The rename at the end would put the archive in place of a session.
    const realOutput = nodePath.join(await realpath(outputDir), nodePath.basename(output));
    const overwritten = refs.find((ref) => ref.onDisk && ref.nameOf(ref.path) === realOutput);
    if (overwritten) throw new CliError("usage", `${output} is ${overwritten.absolute}, a session being exported: -o must name another file`);
    const view = exportView(refs);
    const leafId = run.args.leaf;
    const specs = view.paths.map((path) => (leafId === undefined ? path : { path, leafId }));
    // Written beside the output and renamed when complete: a failed export leaves no half archive.
    const temp = nodePath.join(outputDir, `.${nodePath.basename(output)}.${randomBytes(6).toString("hex")}.tmp`);
    const file = createWriteStream(temp, { flags: "wx", flush: true });
    const progress = archiveProgress(run.io.stderr, "sessionkit: export");
    let summary: ExportSummary;
    try {
      const sink = Writable.toWeb(file) as WritableStream<Uint8Array>;
      // An archive is a backup and a transfer: redacted only when asked (--redact).
      const redact = run.args.redact ?? false;
      summary = await exportArchive(view.storage, specs, sink, { includeBlobs: run.args.blobs, onProgress: progress.onProgress, redact, ...nodeArchiveCodecs });
      await rename(temp, output);
    } catch (error) {
      await closed(file);
      await rm(temp, { force: true });
      throw exportFailure(error, view, output);
    } finally {
      progress.done();
    }
    reportExport(run, summary, view, output);
    return 0;
  } finally {
    for (const ref of refs) await ref.storage.close();
  }
}

/** Resolves when the file is closed (an aborted stream also emits "error" first: not ours to report). */
async function closed(file: WriteStream): Promise<void> {
  if (!file.closed) await new Promise<void>((resolve) => file.once("close", () => resolve()));
}

function exportFailure(error: unknown, view: ExportView, output: string): unknown {
  if (isArchiveError(error)) return new CliError(failureKind(error), archiveErrorLine(error, undefined, (member) => view.fileOf(member) ?? member));
  // A system call failed on the output (the inputs are read through storage: StorageErrors).
  if (error instanceof Error && "syscall" in error) return new CliError("failed", `${output}: cannot write it (${(error as NodeJS.ErrnoException).code ?? error.message})`);
  return error;
}

function reportExport(run: Run<ExportArgs>, summary: ExportSummary, view: ExportView, output: string): void {
  const fileOf = (path: string) => view.fileOf(path) ?? path;
  for (const warning of summary.warnings) {
    const path = view.paths.find((p) => warning.startsWith(`${p}: `));
    run.warn(path === undefined ? warning : `${fileOf(path)}${warning.slice(path.length)}`);
  }
  for (const hash of summary.missingBlobs) run.warn(`blob ${hash} is referenced but not stored: left out (the sessions keep the ref)`);
  if (summary.redacted) reportRedaction(run, summary.redacted);
  run.print(summary, () => {
    const entries = summary.sessions.reduce((n, s) => n + s.entries, 0);
    const blobs = run.args.blobs ? `${plural(summary.blobs.count, "blob")} (${summary.blobs.bytes} bytes)` : "no blobs (--no-blobs)";
    return [
      `${output}: ${plural(summary.sessions.length, "session")} (${plural(entries, "entry", "entries")}), ${blobs}, ${summary.archiveBytes} bytes`,
      ...summary.sessions.map((s) => `  ${s.id}  ${plural(s.entries, "entry", "entries")}${s.leafId === undefined ? "" : ` (branch to ${s.leafId})`}  ${fileOf(s.originalPath)}`),
    ];
  });
}

/** What a redacted archive's manifest says was redacted. */
function redactedLine(counts: Record<string, number>): string {
  return `redacted on export: ${countsText(counts)}`;
}

function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

// ---------------------------------------------------------------------------
// import
// ---------------------------------------------------------------------------

export async function importCommand(run: Run<ImportArgs>): Promise<number> {
  const source = nodePath.resolve(run.io.cwd, run.args.target);
  const info = await statOrNull(source);
  if (!info) throw new CliError("not-found", `${source}: no such file or directory`);
  if (!info.isFile() && !info.isDirectory()) throw new CliError("invalid", `${source} is not a file or a directory`);
  const target = await importTarget(run);
  const { root, layout } = target;
  // A missing root is made by the first write (and not at all when nothing is written).
  const rootInfo = target.database ? null : await statOrNull(root);
  if (rootInfo && !rootInfo.isDirectory()) throw new CliError("invalid", `${root} is not a directory (the storage root; set it with --root)`);

  const archive = info.isFile() && (await isArchiveFile(source));
  const files = archive ? [] : info.isDirectory() ? await readSessionFiles(source) : [await readInput(source)];
  // New sessions go where the store's agent puts them (seed 003's profiles: one flat folder), in
  // its form (its dialect; images inline, or as refs to its blobs/).
  const storage = target.database ? await target.database.open() : await openStorePort(root);
  // Files copied out of a store that keeps blob refs: their refs name that store's blobs.
  const sourceRoot = archive ? null : await sourceStoreRoot(source, info.isDirectory());
  const sourceBlobs = sourceRoot === null ? undefined : await openStorePort(sourceRoot);
  const progress = archiveProgress(run.io.stderr, "sessionkit: import");
  const options: ImportOptions = {
    onConflict: run.args.onConflict,
    dryRun: run.args.dryRun,
    onProgress: progress.onProgress,
    layout,
    owner: storeOwner(target),
    ...(sourceBlobs ? { sourceBlobs } : {}),
    ...nodeArchiveCodecs,
  };
  let summary: ImportSummary;
  try {
    summary = archive ? await withArchiveFile(source, (file) => importArchive(storage, file, options)) : await importSessionFiles(storage, files, options);
  } catch (error) {
    // Members are named inside the archive; plain files are named by their own path.
    if (isArchiveError(error)) throw new CliError(failureKind(error), archiveErrorLine(error, archive || error.member === undefined ? source : undefined));
    throw error;
  } finally {
    progress.done();
    await storage.close();
    await sourceBlobs?.close();
  }
  reportImport(run, summary, source, archive, target);
  return 0;
}

/** The store an import writes into: --root, else the one store of --agent, else pi's. */
async function importTarget(run: Run): Promise<AgentStore> {
  if (run.args.store !== undefined) return (await run.stores())[0]!;
  const discovered = await discoverAgentStores({ home: run.home, env: run.io.env });
  if (run.args.root === undefined && run.args.agent !== undefined) {
    const stores = discovered.filter((store) => store.agent === run.args.agent);
    if (stores.length === 1) return stores[0]!;
    if (stores.length === 0) throw new CliError("not-found", `no store of ${run.args.agent} found to import into (name one with --root)`);
    throw new CliError("usage", `${stores.length} stores of ${run.args.agent}: name the one to import into with --root`, stores.map((store) => `  ${store.root}`));
  }
  return storeAt(run.root, discovered, run.home, run.args.agent);
}

/**
 * The agent dir a session file or folder lies in (`<root>/sessions/`, `<root>/sessions/<project>/`),
 * when it has a `blobs/` folder; else null.
 */
async function sourceStoreRoot(source: string, isDirectory: boolean): Promise<string | null> {
  let dir = isDirectory ? source : nodePath.dirname(source);
  for (let up = 0; up < 2; up++, dir = nodePath.dirname(dir)) {
    if (nodePath.basename(dir) !== "sessions") continue;
    const root = nodePath.dirname(dir);
    return (await statOrNull(nodePath.join(root, "blobs")))?.isDirectory() ? root : null;
  }
  return null;
}

/** Every *.jsonl below `dir` (pi's sessions/ tree: one level of project dirs, or any depth), in path order. */
async function readSessionFiles(dir: string): Promise<SessionFileInput[]> {
  const paths: string[] = [];
  const walk = async (current: string): Promise<void> => {
    for (const entry of await readdir(current, { withFileTypes: true })) {
      const path = nodePath.join(current, entry.name);
      if (entry.isDirectory()) await walk(path);
      else if (entry.isFile() && entry.name.endsWith(".jsonl")) paths.push(path);
    }
  };
  try {
    await walk(dir);
  } catch (error) {
    throw cannotRead(dir, error);
  }
  if (paths.length === 0) throw new CliError("not-found", `${dir}: no .jsonl files below it`);
  paths.sort();
  const files: SessionFileInput[] = [];
  for (const path of paths) files.push(await readInput(path));
  return files;
}

/**
 * The archive file read by ranges on one open handle: a file's Blob (`openAsBlob`) opens the file
 * again for every range, which for 200 blobs cost 3× the CPU of these reads (zip-read.ts).
 */
async function withArchiveFile<T>(file: string, use: (source: ArchiveRangeSource) => Promise<T>): Promise<T> {
  const handle = await open(file, "r");
  try {
    const { size } = await handle.stat();
    return await use({
      size,
      async read(offset, length) {
        const bytes = new Uint8Array(length);
        let filled = 0;
        while (filled < length) {
          const { bytesRead } = await handle.read(bytes, filled, length - filled, offset + filled);
          if (bytesRead === 0) return bytes.subarray(0, filled);
          filled += bytesRead;
        }
        return bytes;
      },
    });
  } finally {
    await handle.close();
  }
}

async function readInput(file: string): Promise<SessionFileInput> {
  try {
    return { name: file, bytes: await readFile(file) };
  } catch (error) {
    throw cannotRead(file, error);
  }
}

function cannotRead(path: string, error: unknown): CliError {
  return new CliError("failed", `${path}: cannot read it (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
}

function reportImport(run: Run, summary: ImportSummary, source: string, archive: boolean, target: AgentStore): void {
  // The warnings name missing blobs too.
  for (const warning of summary.warnings) run.warn(warning);
  const { root } = target;
  const fileOf = (path: string) => storeFileOf(target, path);
  run.print(summary, () => {
    const { written, present, bytesWritten } = summary.blobs;
    return [
      `${source}: ${plural(summary.sessions.length, "session")} into ${root}${summary.dryRun ? " (dry run: nothing written)" : ""}`,
      ...summary.sessions.map((s) => `  ${s.action.padEnd(8)} ${s.id}  ${fileOf(s.path)}  (${s.reason}${archive ? "" : `; from ${s.source}`})`),
      `blobs: ${written} written (${bytesWritten} bytes), ${present} already stored`,
      ...(summary.redacted ? [redactedLine(summary.redacted)] : []),
    ];
  });
}

// ---------------------------------------------------------------------------
// verify (an archive)
// ---------------------------------------------------------------------------

/** Every check an import makes; an invalid archive is a finding (printed on stdout), exit code "invalid". */
export async function verifyArchiveCommand(run: Run<SessionArgs>): Promise<number> {
  const file = nodePath.resolve(run.io.cwd, run.args.target);
  await requireFile(file);
  const progress = archiveProgress(run.io.stderr, "sessionkit: verify");
  let summary: VerifySummary;
  try {
    summary = await withArchiveFile(file, (source) => verifyArchive(source, { onProgress: progress.onProgress, ...nodeArchiveCodecs }));
  } catch (error) {
    if (!isArchiveError(error)) throw error;
    run.print(error, () => [`${file}: invalid archive: ${archiveErrorLine(error, undefined)}`]);
    return EXIT.invalid;
  } finally {
    progress.done();
  }
  run.print(summary, () => {
    const entries = summary.sessions.reduce((n, s) => n + s.entries, 0);
    const lines = [
      `${file}: OK (${summary.format} ${summary.version} by ${summary.generator}, ${plural(summary.sessions.length, "session")}, ${plural(entries, "entry", "entries")}, ${plural(summary.blobs.count, "blob")}, ${summary.archiveBytes} bytes)`,
      ...summary.sessions.map((s) => `  ${s.id}  ${plural(s.entries, "entry", "entries")}${s.leafId === undefined ? "" : ` (branch to ${s.leafId})`}  ${s.cwd}`),
    ];
    if (summary.redacted) lines.push(`  ${redactedLine(summary.redacted)}`);
    const absent = summary.blobsNotInArchive.length;
    if (absent > 0) lines.push(`  ${plural(absent, "referenced blob is", "referenced blobs are")} not in the archive (exported without blobs)`);
    return lines;
  });
  return 0;
}
