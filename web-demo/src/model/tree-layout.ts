/**
 * The tree sidebar as rows: pi's export layout (single-child chains stay flat, branches indent
 * with ├─/└─ connectors and │ gutters, the branch holding the active leaf first), over the entries
 * a filter keeps (hidden entries hand their children to the nearest visible ancestor), minus the
 * subtrees of folded entries. Pure data, O(entries), no recursion (chains are 100,000 deep); rows
 * are typed arrays, and a row object is made only for the rows on screen.
 */
import type { SessionEntry } from "../../../src/format/types.js";
import { entryMatches, type EntryFilter } from "./filters.js";
import type { SessionModel } from "./session-model.js";

export interface Gutter {
  position: number;
  show: boolean;
}

export interface TreeRow {
  entry: SessionEntry;
  indent: number;
  showConnector: boolean;
  isLast: boolean;
  gutters: readonly Gutter[];
  isVirtualRootChild: boolean;
  multipleRoots: boolean;
  /** Children in the whole tree: more than one makes a branch point. */
  childCount: number;
  /** Can be folded: a branch point, or the first entry of a branch, in the listed tree. */
  foldable: boolean;
  folded: boolean;
  /** Entries the fold hides (the subtree below it). */
  hiddenBelow: number;
}

/** Entries by number (the viewed path: a set over every entry of a large session). */
export interface EntrySet {
  has(i: number): boolean;
}

/** The entries of a path, as a bit per entry of the session: a 700,000-entry path in a few ms, 1 byte per entry. */
export class PathSet implements EntrySet {
  readonly #bits: Uint8Array;

  constructor(size: number, path: readonly number[]) {
    this.#bits = new Uint8Array(size);
    for (const i of path) this.#bits[i] = 1;
  }

  has(i: number): boolean {
    return this.#bits[i] === 1;
  }
}

export interface TreeLayoutOptions {
  filter: EntryFilter;
  /** Entries a search kept, by number (null: no search). */
  matches: ReadonlySet<number> | null;
  /** Entries on the root → leaf path, by number: their branch is listed first. */
  activePath: EntrySet;
  leafId: string | null;
  /** Folded entries, by id. */
  folded: ReadonlySet<string>;
}

const SHOW_CONNECTOR = 1;
const IS_LAST = 2;
const VIRTUAL_ROOT_CHILD = 4;
const FOLDED = 8;
const FOLDABLE = 16;
const NO_GUTTERS: readonly Gutter[] = [];

export class TreeLayout {
  readonly count: number;
  /** Every entry of every branch: the M of "N / M entries". */
  readonly total: number;
  /** Entries the filter and search keep (folded ones' hidden entries included): the N. */
  readonly shown: number;
  readonly multipleRoots: boolean;
  readonly #model: SessionModel;
  readonly #entry: Int32Array;
  readonly #indent: Int32Array;
  readonly #bits: Uint8Array;
  readonly #gutters: (readonly Gutter[])[];
  /** Row by entry number (-1: not listed), made on first use. */
  #rowOf: Int32Array | null = null;

  constructor(model: SessionModel, rows: { entry: Int32Array; indent: Int32Array; bits: Uint8Array; gutters: (readonly Gutter[])[]; count: number }, shown: number, multipleRoots: boolean) {
    this.#model = model;
    this.#entry = rows.entry;
    this.#indent = rows.indent;
    this.#bits = rows.bits;
    this.#gutters = rows.gutters;
    this.count = rows.count;
    this.total = model.size;
    this.shown = shown;
    this.multipleRoots = multipleRoots;
  }

  entryIndex(row: number): number {
    return this.#entry[row]!;
  }

  /** The row showing entry number `i`, or -1. */
  rowOfEntry(i: number): number {
    if (!this.#rowOf) {
      this.#rowOf = new Int32Array(this.total).fill(-1);
      for (let r = 0; r < this.count; r++) this.#rowOf[this.#entry[r]!] = r;
    }
    return i >= 0 && i < this.#rowOf.length ? this.#rowOf[i]! : -1;
  }

  row(r: number): TreeRow {
    const model = this.#model;
    const i = this.#entry[r]!;
    const bits = this.#bits[r]!;
    const childCount = model.childCount(i);
    const folded = (bits & FOLDED) !== 0;
    return {
      entry: model.entry(i),
      indent: this.#indent[r]!,
      showConnector: (bits & SHOW_CONNECTOR) !== 0,
      isLast: (bits & IS_LAST) !== 0,
      gutters: this.#gutters[r] ?? NO_GUTTERS,
      isVirtualRootChild: (bits & VIRTUAL_ROOT_CHILD) !== 0,
      multipleRoots: this.multipleRoots,
      childCount,
      foldable: (bits & FOLDABLE) !== 0,
      folded,
      hiddenBelow: folded ? model.subtreeSize(i) - 1 : 0,
    };
  }
}

export function layoutTree(model: SessionModel, options: TreeLayoutOptions): TreeLayout {
  const { activePath, folded, filter, matches } = options;
  const n = model.size;
  const leaf = options.leafId === null ? -1 : (model.indexOf(options.leafId) ?? -1);
  const visible = (i: number) => i === leaf || (entryMatches(model, i, filter) && (matches === null || matches.has(i)));
  // Children with the active branch first, as pi orders them.
  const ordered = (kids: readonly number[]) => {
    if (kids.length < 2) return kids;
    const active = kids.findIndex((k) => activePath.has(k));
    return active <= 0 ? kids : [kids[active]!, ...kids.slice(0, active), ...kids.slice(active + 1)];
  };

  // Pass 1: the visible tree. A pre-order walk of the whole tree, each entry carrying its nearest
  // visible ancestor; visible entries join that ancestor's visible children in walk order. Most
  // entries have one visible child: `onlyVisible` holds it, `manyVisible` the rest.
  const onlyVisible = new Int32Array(n).fill(-1);
  const manyVisible = new Map<number, number[]>();
  const visibleRoots: number[] = [];
  const addVisible = (ancestor: number, child: number) => {
    if (ancestor < 0) visibleRoots.push(child);
    else if (onlyVisible[ancestor] === -1) onlyVisible[ancestor] = child;
    else {
      let list = manyVisible.get(ancestor);
      if (!list) manyVisible.set(ancestor, (list = [onlyVisible[ancestor]!]));
      list.push(child);
    }
  };
  let shown = 0;
  const stackEntry: number[] = [];
  const stackAncestor: number[] = [];
  const roots = ordered(model.rootIndexes());
  for (let k = roots.length - 1; k >= 0; k--) {
    stackEntry.push(roots[k]!);
    stackAncestor.push(-1);
  }
  while (stackEntry.length > 0) {
    let i = stackEntry.pop()!;
    let ancestor = stackAncestor.pop()!;
    // Walk single-child chains without touching the stack.
    for (;;) {
      if (visible(i)) {
        shown++;
        addVisible(ancestor, i);
        ancestor = i;
      }
      const only = model.onlyChild(i);
      if (only >= 0) {
        i = only;
        continue;
      }
      if (only === -2) {
        const kids = ordered(model.childIndexes(i));
        for (let k = kids.length - 1; k >= 0; k--) {
          stackEntry.push(kids[k]!);
          stackAncestor.push(ancestor);
        }
      }
      break;
    }
  }
  const visibleChildren = (i: number): readonly number[] => manyVisible.get(i) ?? (onlyVisible[i]! >= 0 ? [onlyVisible[i]!] : []);

  // Pass 2: indentation and connectors over the visible tree (pi's flattenTree rules).
  const rows = { entry: new Int32Array(shown), indent: new Int32Array(shown), bits: new Uint8Array(shown), gutters: [] as (readonly Gutter[])[], count: 0 };
  const multipleRoots = visibleRoots.length > 1;
  type Item = [entry: number, indent: number, justBranched: boolean, showConnector: boolean, isLast: boolean, gutters: readonly Gutter[], isVirtualRootChild: boolean];
  const work: Item[] = [];
  for (let k = visibleRoots.length - 1; k >= 0; k--) {
    work.push([visibleRoots[k]!, multipleRoots ? 1 : 0, multipleRoots, multipleRoots, k === visibleRoots.length - 1, NO_GUTTERS, multipleRoots]);
  }
  while (work.length > 0) {
    let [i, indent, justBranched, showConnector, isLast, gutters, isVirtualRootChild] = work.pop()!;
    for (;;) {
      const children = visibleChildren(i);
      // Foldable: a branch point, or the head of a branch (justBranched), as listed.
      const foldable = children.length > 1 || (justBranched && children.length > 0);
      const isFolded = foldable && folded.size > 0 && folded.has(model.id(i));
      const r = rows.count++;
      rows.entry[r] = i;
      rows.indent[r] = indent;
      rows.bits[r] = (showConnector ? SHOW_CONNECTOR : 0) | (isLast ? IS_LAST : 0) | (isVirtualRootChild ? VIRTUAL_ROOT_CHILD : 0) | (isFolded ? FOLDED : 0) | (foldable ? FOLDABLE : 0);
      if (gutters.length > 0) rows.gutters[r] = gutters;
      if (isFolded) break;
      if (children.length === 0) break;
      const multipleChildren = children.length > 1;
      const childIndent = multipleChildren || (justBranched && indent > 0) ? indent + 1 : indent;
      const connectorDisplayed = showConnector && !isVirtualRootChild;
      const displayIndent = multipleRoots ? Math.max(0, indent - 1) : indent;
      const childGutters = connectorDisplayed ? [...gutters, { position: Math.max(0, displayIndent - 1), show: !isLast }] : gutters;
      if (!multipleChildren) {
        // A chain continues in place: same rules, no stack.
        i = children[0]!;
        indent = childIndent;
        justBranched = false;
        showConnector = false;
        isLast = true;
        gutters = childGutters;
        isVirtualRootChild = false;
        continue;
      }
      for (let k = children.length - 1; k >= 0; k--) {
        work.push([children[k]!, childIndent, true, true, k === children.length - 1, childGutters, false]);
      }
      break;
    }
  }
  return new TreeLayout(model, rows, shown, multipleRoots);
}

/** Levels drawn before a row's text; deeper rows show how many more there are instead. */
const MAX_DRAWN_LEVELS = 8;

/**
 * The connector and gutter characters before a row's text (pi's buildTreePrefix). A long
 * session's active path can sit hundreds of branch levels deep (each branch point indents): only
 * the innermost MAX_DRAWN_LEVELS are drawn, after "‹N›" for the levels left out.
 */
export function treePrefix(row: TreeRow): string {
  const displayIndent = row.multipleRoots ? Math.max(0, row.indent - 1) : row.indent;
  const connector = row.showConnector && !row.isVirtualRootChild;
  const connectorPosition = connector ? displayIndent - 1 : -1;
  const first = Math.max(0, displayIndent - MAX_DRAWN_LEVELS);
  let out = first > 0 ? `‹${first}›` : "";
  for (let level = first; level < displayIndent; level++) {
    const gutter = row.gutters.find((g) => g.position === level);
    if (gutter) out += gutter.show ? "│  " : "   ";
    else if (level === connectorPosition) out += row.isLast ? "└─ " : "├─ ";
    else out += "   ";
  }
  return out;
}
