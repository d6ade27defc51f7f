/**
 * `@sqlite.org/sqlite-wasm` as the search script sees it (scripts/cli-bundle.ts aliases the
 * package to this module there): a vm script cannot `import()`, so this default export forwards
 * to the package's, which the script's loader (search-script.ts) imports when it is first called.
 */
import type init from "@sqlite.org/sqlite-wasm";

type SqliteModule = { default: typeof init };
/** A parameter of the script's function (SEARCH_SCRIPT_PARAMETERS in search-script.ts). */
declare const __sessionkitImportSqlite: () => Promise<SqliteModule>;

const forwarded: typeof init = async (options) => (await __sessionkitImportSqlite()).default(options);
export default forwarded;
