/**
 * Markdown from session text (GFM, line breaks), as pi's export shows it, built as DOM: marked
 * reads the text into tokens, and each token becomes elements of a fixed set and text nodes.
 * Session text is never parsed as HTML, so nothing in it can become markup: raw HTML shows as
 * text, images become links (nothing remote is loaded), links go only to http(s) and mailto (in
 * a new tab, without a referrer), and no class, id or style comes from the text. The DOM is the
 * one marked's HTML for these tokens gives through a sanitizer (test/browser/markdown.test.ts
 * checks it against marked and DOMPurify), with neither on the page.
 * Bounded before parsing (bounds.ts): long lines are cut, and a text nested too deep is refused
 * (UnboundedText).
 */
import { Marked, type Token, type Tokens } from "marked";
import { capLines, checkMarkdownBounds } from "./bounds.js";

const SAFE_URL = /^(?:https?:|mailto:)/i;
const CODE_LANGUAGE = /^[A-Za-z0-9_+#.-]{1,32}$/;

/** pi's strict strikethrough: ~~x~~ only, not single tildes. */
const STRICT_DEL = /^(~~)(?=[^\s~])((?:\\.|[^\\])*?(?:\\.|[^\s~\\]))\1(?=[^~]|$)/;

const marked = new Marked({ gfm: true, breaks: true, async: false });
marked.use({
  tokenizer: {
    del(src: string) {
      const match = STRICT_DEL.exec(src);
      if (!match) return undefined;
      return { type: "del", raw: match[0], text: match[2]!, tokens: this.lexer.inlineTokens(match[2]!) };
    },
  },
});

type Parent = Element | DocumentFragment;

function add<K extends keyof HTMLElementTagNameMap>(parent: Parent, tag: K): HTMLElementTagNameMap[K] {
  return parent.appendChild(document.createElement(tag));
}

function addText(parent: Parent, text: string): void {
  parent.appendChild(document.createTextNode(text));
}

/** A newline after a block, as in marked's HTML (the same DOM; it takes no space). */
function newline(parent: Parent): void {
  addText(parent, "\n");
}

/** `&name;` and numeric references (marked keeps them in text; a browser reading its HTML shows the character). */
const REFERENCE = /&(?:#\d{1,7}|#[Xx][0-9A-Fa-f]{1,6}|\w+);/g;
let referenceDecoder: HTMLTextAreaElement | null = null;

/** Text as it shows: its references decoded by the browser's own table, in a textarea (RCDATA: one reference, which holds no `<`, can only become text). */
function shownText(text: string): string {
  if (!text.includes("&")) return text;
  return text.replace(REFERENCE, (reference) => {
    referenceDecoder ??= document.createElement("textarea");
    referenceDecoder.innerHTML = reference;
    return referenceDecoder.value;
  });
}

function addBlocks(parent: Parent, tokens: readonly Token[]): void {
  for (const token of tokens) addBlock(parent, token);
}

function addBlock(parent: Parent, token: Token): void {
  switch (token.type) {
    case "space":
    case "def":
      return;
    case "paragraph":
      addInline(add(parent, "p"), (token as Tokens.Paragraph).tokens);
      return newline(parent);
    case "heading": {
      const { depth, tokens } = token as Tokens.Heading;
      addInline(add(parent, `h${Math.min(Math.max(depth, 1), 6)}` as "h1"), tokens);
      return newline(parent);
    }
    case "hr":
      add(parent, "hr");
      return newline(parent);
    case "code": {
      const { text, lang } = token as Tokens.Code;
      const code = add(add(parent, "pre"), "code");
      const language = (lang ?? "").trim().split(/\s+/)[0] ?? "";
      if (CODE_LANGUAGE.test(language)) code.dataset.lang = language;
      return addText(code, text);
    }
    case "blockquote": {
      const quote = add(parent, "blockquote");
      newline(quote);
      addBlocks(quote, (token as Tokens.Blockquote).tokens);
      return newline(parent);
    }
    case "list":
      return addList(parent, token as Tokens.List);
    case "table":
      return addTable(parent, token as Tokens.Table);
    case "html":
      return addText(parent, (token as Tokens.HTML).text);
    case "checkbox":
      return addCheckbox(parent, token as Tokens.Checkbox);
    case "text":
      return addInlineText(parent, token as Tokens.Text);
    default:
      throw new Error(`no rendering for a markdown ${JSON.stringify(token.type)} token`);
  }
}

function addList(parent: Parent, { ordered, start, items }: Tokens.List): void {
  const list = add(parent, ordered ? "ol" : "ul");
  if (ordered && start !== 1) list.setAttribute("start", String(start));
  newline(list);
  for (const item of items) {
    addBlocks(add(list, "li"), item.tokens);
    newline(list);
  }
  newline(parent);
}

function addTable(parent: Parent, { header, rows }: Tokens.Table): void {
  const table = add(parent, "table");
  newline(table);
  const head = add(table, "thead");
  newline(head);
  addRow(head, header, "th");
  newline(table);
  if (rows.length > 0) {
    const body = add(table, "tbody");
    for (const row of rows) addRow(body, row, "td");
  }
  newline(parent);
}

function addRow(parent: Parent, cells: readonly Tokens.TableCell[], tag: "th" | "td"): void {
  const row = add(parent, "tr");
  newline(row);
  for (const cell of cells) {
    const element = add(row, tag);
    if (cell.align) element.setAttribute("align", cell.align);
    addInline(element, cell.tokens);
    newline(row);
  }
  newline(parent);
}

function addCheckbox(parent: Parent, { checked }: Tokens.Checkbox): void {
  const box = add(parent, "input");
  if (checked) box.setAttribute("checked", "");
  box.setAttribute("disabled", "");
  box.setAttribute("type", "checkbox");
  addText(parent, " ");
}

/** A text token: its inline tokens, or its text (one in a raw HTML tag's content too: shown, never markup). */
function addInlineText(parent: Parent, token: Tokens.Text | Tokens.Escape, inLink = false): void {
  if ("tokens" in token && token.tokens) addInline(parent, token.tokens, inLink);
  else addText(parent, shownText(token.text));
}

/** `inLink`: inside a link's text, where an image is its label alone (a link in a link is not one). */
function addInline(parent: Parent, tokens: readonly Token[], inLink = false): void {
  for (const token of tokens) {
    switch (token.type) {
      case "text":
      case "escape":
        addInlineText(parent, token as Tokens.Text | Tokens.Escape, inLink);
        break;
      case "html":
        addText(parent, (token as Tokens.Tag).text);
        break;
      case "strong":
      case "em":
      case "del":
        addInline(add(parent, token.type), (token as Tokens.Strong).tokens, inLink);
        break;
      case "codespan":
        addText(add(parent, "code"), (token as Tokens.Codespan).text);
        break;
      case "br":
        add(parent, "br");
        break;
      case "link":
        addLink(parent, token as Tokens.Link);
        break;
      case "image":
        addImage(parent, token as Tokens.Image, inLink);
        break;
      case "checkbox":
        addCheckbox(parent, token as Tokens.Checkbox);
        break;
      default:
        throw new Error(`no rendering for a markdown ${JSON.stringify(token.type)} token`);
    }
  }
}

function addAnchor(parent: Parent, href: string, title?: string | null): HTMLAnchorElement {
  const anchor = add(parent, "a");
  anchor.setAttribute("href", href);
  if (title) anchor.setAttribute("title", title);
  anchor.setAttribute("target", "_blank");
  anchor.setAttribute("rel", "noopener noreferrer nofollow");
  return anchor;
}

/** Only http(s) and mailto links are links; any other shows its text alone. */
function addLink(parent: Parent, { href, title, tokens }: Tokens.Link): void {
  const target = href.trim();
  addInline(SAFE_URL.test(target) ? addAnchor(parent, target, title) : parent, tokens, true);
}

/** An image is never loaded: a link to it when it is on the web (and not in a link already), else its label. */
function addImage(parent: Parent, { href, text }: Tokens.Image, inLink: boolean): void {
  const label = `image: ${text || href}`;
  addText(!inLink && /^https?:/i.test(href) ? addAnchor(parent, href) : parent, label);
}

/** Texts whose DOM is kept: a list scrolled back, an entry rebuilt (a toggle) or a filter change renders the same text again. */
const CACHED_TEXTS = 256;
const cache = new Map<string, DocumentFragment>();

/** Markdown as DOM (a copy of a cached result when the text was rendered lately); UnboundedText when it is not to be parsed. */
export function renderMarkdown(text: string): DocumentFragment {
  let fragment = cache.get(text);
  if (fragment) cache.delete(text); // re-inserted below: most recently used last
  else {
    const bounded = capLines(text);
    checkMarkdownBounds(bounded);
    fragment = document.createDocumentFragment();
    addBlocks(fragment, marked.lexer(bounded));
    if (cache.size >= CACHED_TEXTS) cache.delete(cache.keys().next().value!);
  }
  cache.set(text, fragment);
  return fragment.cloneNode(true) as DocumentFragment;
}
