/**
 * The package's public surface, package.json "exports": every subpath is built from a source
 * file the build compiles, tsconfig.json's `paths` map it to that same file, and what each one
 * exports is listed below, so that a change to the public API is a deliberate edit of this file.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** Runtime names (`values`: functions, classes, constants) and type-only names of each subpath. */
const PUBLIC_API: Record<string, { values: string[]; types: string[] }> = {
  ".": {
    values: [
      "ArchiveError", "CURRENT_SESSION_VERSION", "DEFAULT_LIMITS", "DEFAULT_SOURCES", "HistoryError", "PromptHistory",
      "SEARCH_SOURCES", "SessionError", "SessionManager", "SessionTail", "StorageError", "buildSessionContext", "buildTree", "configureSqlite",
      "deleteSessionWithBlobs", "findMostRecentSession", "getRecentSessions", "isArchiveError", "isSessionError", "isStorageError",
      "listAllSessions", "listSessions", "readHistoryDb", "searchSessions",
    ],
    types: [
      "AgentMessage", "ArchiveErrorCode", "ArchiveLimits", "ArchiveProgress", "ArchiveRangeSource", "ArchiveSource", "BranchSummaryEntry", "ByteRange",
      "CompactionEntry", "ConflictPolicy", "ContextModel", "ContextOptions", "CustomEntry", "CustomMessageEntry",
      "DeleteSessionOptions", "DeleteSessionResult", "DirEntry", "ExportOptions", "ExportSessionSpec", "ExportSummary",
      "FileExtent", "FileStat", "FileToWrite", "FollowOptions", "FollowUpdate", "HistoryEntry", "HistoryErrorCode", "ImageContent",
      "ImportAction", "ImportOptions", "ImportSummary", "ImportedSession", "KnownSessionEntry", "LabelEntry", "LeafEntry",
      "LineProblem", "LineProblemKind", "ListOptions", "MessageEntry", "ModeChangeEntry", "ModelChangeEntry", "NewSessionOptions",
      "PromptHistoryOptions", "ReadArchiveOptions", "RecentSessionInfo", "RecentSessionsOptions", "SearchHit", "SearchIndexProgress",
      "SearchOptions", "SearchSource",
      "SessionContext", "SessionDialect", "SessionEntry",
      "SessionErrorCode", "SessionFileInput", "SessionFollow", "SessionHeader", "SessionInfo", "SessionInfoEntry",
      "SessionInitEntry", "SessionManagerOptions", "SessionTreeNode", "SqliteOptions", "StorageErrorCode", "StorageLock", "StoragePort",
      "StorageWatch", "StoreLayout", "StoreOwner", "TailRead", "TerminalBreadcrumb", "TextContent", "ThinkingLevelChangeEntry",
      "TtsrInjectionEntry", "VerifySummary",
    ],
  },
  "./adapter-kit": {
    values: [
      "StorageError", "baseName", "checkByteRange", "checkStoragePath", "clampByteRange", "isStorageError", "joinPath",
      "listChildren", "parentDir", "writeFilesThenSync",
    ],
    types: ["ByteRange", "DirEntry", "FileStat", "FileToWrite", "FullStoragePort", "StorageErrorCode", "StorageLock", "StoragePort", "StoragePortWith", "StorageWatch"],
  },
  "./testing": {
    values: ["checksum", "describePortConformance", "expectStorageError", "pseudoRandomBytes", "waitFor"],
    types: ["PortCapabilities", "PortUnderTest"],
  },
  "./secrets": {
    values: ["findSecrets", "findSecretsInRecord", "redactRecord", "scanSessionFile", "scanSessions"],
    types: ["FindOptions", "RedactionCounts", "ScanOptions", "ScanProgress", "ScanResult", "SecretFinding", "SecretMatch"],
  },
  // The archive functions only: their option, summary and error types stay in ".".
  "./archives": {
    values: ["exportArchive", "importArchive", "importSessionFiles", "verifyArchive"],
    types: [],
  },
  "./adapters/memory": {
    values: ["memoryStorage"],
    types: ["MemoryStorage"],
  },
  "./adapters/node-fs": {
    values: [
      "expandHome", "nodeArchiveCodecs", "nodeCrc32", "nodeDeflateSession", "nodeFsStorage", "nodeInflateRaw", "nodeSha256",
      "nodeTerminalBreadcrumb", "terminalId",
    ],
    types: ["NodeFsStorage", "NodeFsStorageOptions", "NodeTerminalBreadcrumb", "TerminalEnvironment"],
  },
  "./adapters/indexeddb": {
    values: ["CHUNK_BYTES", "MERGE_IDLE_MS", "TAIL_LIMIT_BYTES", "TAIL_MERGE_BYTES", "indexedDbStorage"],
    types: ["FileMeta", "IndexedDbDataLoss", "IndexedDbStorage", "IndexedDbStorageOptions"],
  },
  "./adapters/opfs": {
    values: ["DEFAULT_OPFS_ROOT", "opfsChangesChannel", "opfsStorage", "opfsWorkerStorage"],
    types: ["OpfsLocation", "OpfsStorage", "OpfsStorageOptions"],
  },
  "./adapters/postgres": {
    values: ["postgresStorage"],
    types: ["PostgresPool", "PostgresStorage", "PostgresStorageOptions"],
  },
  "./adapters/rpc": {
    values: [
      "DEFAULT_CHUNK_BYTES", "FRAME_CONTENT_TYPE", "RPC_PROTOCOL", "createStorageServer", "decodeFrame", "encodeFrame",
      "rpcClientStorage", "serveStorage", "webSocketEndpoint",
    ],
    types: [
      "ClientConnection", "ConnectOptions", "MessageEndpoint", "RequestTransport", "RpcClientOptions", "RpcPush", "RpcRequest",
      "RpcResponse", "RpcStorage", "ServeStorageOptions", "StorageServer", "StorageServerLimits", "StorageServerOptions", "WebSocketLike",
    ],
  },
  "./adapters/http": {
    values: ["httpStorage", "listServedStores"],
    types: ["HttpStorage", "HttpStorageOptions", "ServedStore"],
  },
  "./adapters/mounted": {
    values: ["mountedStorage"],
    types: ["MountedStorage", "Mounts"],
  },
  "./adapters/browser-storage": {
    values: ["requestPersistence", "storageEstimate"],
    types: ["StorageEstimate"],
  },
  "./adapters/electron/main": {
    values: ["serveStorageOverIpc"],
    types: ["IpcSender", "IpcStorageServer", "ServeOverIpcOptions"],
  },
  "./adapters/electron/preload": {
    values: ["exposeStorageBridge"],
    types: ["ExposeOptions"],
  },
  "./adapters/electron/renderer": {
    values: ["electronStorage"],
    types: ["ElectronStorage", "ElectronStorageOptions"],
  },
};

/** Internals the CLI and the viewer use, which the application API must not hand out. */
const INTERNALS = ["scanJsonl", "splitGluedObjects", "encodeRecord", "decodeRecord", "clampLimit", "base64ToBytes", "bytesToBase64", "migrateRecords"];

interface PackageJson {
  name: string;
  main: string;
  types: string;
  exports: Record<string, { types: string; default: string } | string>;
  typesVersions: Record<string, Record<string, string[]>>;
}

const packageJson = JSON.parse(await readFile(join(ROOT, "package.json"), "utf8")) as PackageJson;
/** Each code subpath with the source it is built from, relative to the root ("src/index.ts"). */
const subpaths = Object.entries(packageJson.exports)
  .filter(([subpath]) => subpath !== "./package.json")
  .map(([subpath, target]) => {
    if (typeof target === "string") throw new Error(`${subpath}: a bare target ${target}; every code subpath gives "types" and "default"`);
    return { subpath, target, source: `${target.default.replace(/^\.\/dist\//, "").replace(/\.js$/, "")}.ts` };
  });

function parsedConfig(file: string): ts.ParsedCommandLine {
  const config = ts.getParsedCommandLineOfConfigFile(join(ROOT, file), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} });
  if (!config || config.errors.length > 0) throw new Error(`${file} does not parse: ${config?.errors.map((e) => ts.flattenDiagnosticMessageText(e.messageText, "\n")).join("; ")}`);
  return config;
}

describe("package.json exports", () => {
  it("maps each subpath to a module the build emits: types, then default, both from one source file", () => {
    const built = new Set(parsedConfig("tsconfig.build.json").fileNames.map((file) => file.slice(ROOT.length)));
    expect(packageJson.exports["./package.json"]).toBe("./package.json");
    for (const { subpath, target, source } of subpaths) {
      const stem = source.slice(0, -".ts".length);
      expect(Object.keys(target), subpath).toEqual(["types", "default"]);
      expect(target, subpath).toEqual({ types: `./dist/${stem}.d.ts`, default: `./dist/${stem}.js` });
      expect(built.has(source), `${subpath}: ${source} is compiled by tsconfig.build.json`).toBe(true);
    }
  });

  it("the root's main and types, and typesVersions for every other subpath, agree with exports (for node10 resolution)", () => {
    const root = subpaths.find(({ subpath }) => subpath === ".")!;
    expect({ main: packageJson.main, types: packageJson.types }).toEqual({ main: root.target.default, types: root.target.types });
    const others = subpaths.filter(({ subpath }) => subpath !== ".");
    expect(packageJson.typesVersions).toEqual({ "*": Object.fromEntries(others.map(({ subpath, target }) => [subpath.slice(2), [target.types]])) });
  });

  it("tsconfig.json's paths map every subpath, and nothing else, to its source", () => {
    const paths = parsedConfig("tsconfig.json").options.paths ?? {};
    const expected = Object.fromEntries(subpaths.map(({ subpath, source }) => [`${packageJson.name}${subpath.slice(1)}`, [`./${source}`]]));
    expect(paths).toEqual(expected);
  });

  it("lists every public subpath here", () => {
    expect(subpaths.map(({ subpath }) => subpath).sort()).toEqual(Object.keys(PUBLIC_API).sort());
  });

  it.each(subpaths)("$subpath exports at run time exactly the values listed", async ({ subpath, source }) => {
    const module = (await import(join(ROOT, source))) as Record<string, unknown>;
    expect(Object.keys(module).sort()).toEqual(PUBLIC_API[subpath]?.values);
  });

  it("each subpath exports exactly the names listed, types included", () => {
    const program = ts.createProgram(
      subpaths.map(({ source }) => join(ROOT, source)),
      parsedConfig("tsconfig.json").options,
    );
    const checker = program.getTypeChecker();
    const isValue = (symbol: ts.Symbol) => ((symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol).flags & ts.SymbolFlags.Value) !== 0;
    const actual = Object.fromEntries(
      subpaths.map(({ subpath, source }) => {
        const exported = checker.getExportsOfModule(checker.getSymbolAtLocation(program.getSourceFile(join(ROOT, source))!)!);
        return [subpath, { values: exported.filter(isValue).map((s) => s.name).sort(), types: exported.filter((s) => !isValue(s)).map((s) => s.name).sort() }];
      }),
    );
    expect(actual).toEqual(PUBLIC_API);
  });

  it("the application API leaves out the internals the CLI and the viewer use", async () => {
    const root = (await import(join(ROOT, "src/index.ts"))) as Record<string, unknown>;
    expect(INTERNALS.filter((name) => name in root)).toEqual([]);
    expect(PUBLIC_API["."]!.values.filter((name) => INTERNALS.includes(name))).toEqual([]);
  });
});
