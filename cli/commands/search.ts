/** `search` and `history`: their flags. */
import { SEARCH_SOURCES, type SearchSource } from "../../src/search/text.js";
import { defineCommand } from "../command.js";
import { UsageError } from "../errors.js";
import { checkScope, parseLimit } from "./shared.js";

export interface SearchArgs {
  /** The query: the words of the arguments. */
  target: string;
  all: boolean;
  cwd: string | undefined;
  /** --source. */
  sources: SearchSource[] | undefined;
  limit: number | undefined;
}

export interface HistoryArgs {
  /** The query ("" for none). */
  target: string;
  limit: number | undefined;
}

// The words of a query may come as one argument or several.
const QUERY = { max: Infinity, what: "a query", query: true };

export const search = defineCommand({
  options: { all: { type: "boolean" }, cwd: { type: "string" }, source: { type: "string" }, limit: { type: "string" } },
  operands: QUERY,
  parse(values, { target }): SearchArgs {
    checkScope("search", values);
    const limit = parseLimit(values.limit);
    let sources: SearchSource[] | undefined;
    if (values.source !== undefined) {
      const names = values.source.split(",").map((part) => part.trim());
      sources = names.includes("all") ? [...SEARCH_SOURCES] : (names as SearchSource[]);
      const unknown = sources.find((source) => !SEARCH_SOURCES.includes(source));
      if (unknown !== undefined) throw new UsageError(`--source: unknown source "${unknown}" (known: ${SEARCH_SOURCES.join(", ")}, all)`);
    }
    return { target, all: values.all ?? false, cwd: values.cwd, sources, limit };
  },
});

export const history = defineCommand({
  options: { limit: { type: "string" } },
  operands: { ...QUERY, optional: true, emptyMessage: "takes a query or none" },
  parse: (values, { target }): HistoryArgs => ({ target, limit: parseLimit(values.limit) }),
});
