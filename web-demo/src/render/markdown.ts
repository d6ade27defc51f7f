/**
 * Markdown from session text (GFM, line breaks), as pi's export shows it, made safe: raw HTML is
 * shown as text, images become links (nothing remote is loaded), and the HTML marked produces
 * goes through DOMPurify with an allow-list of plain formatting tags and only href/title
 * attributes (no class, id or style: session text cannot restyle the page), links only to
 * http(s) and mailto, opening in a new tab without a referrer. Bounded before parsing
 * (bounds.ts): long lines are cut, and a text nested too deep is refused (UnboundedText).
 */
import DOMPurify from "dompurify";
import { Marked, type Tokens } from "marked";
import { capLines, checkMarkdownBounds } from "./bounds.js";

const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => (c === "&" ? "&amp;" : c === "<" ? "&lt;" : c === ">" ? "&gt;" : c === '"' ? "&quot;" : "&#39;"));

const SAFE_URL = /^(?:https?:|mailto:)/i;

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
  renderer: {
    html({ text }: Tokens.HTML | Tokens.Tag) {
      return escapeHtml(text);
    },
    // Links are checked here too (DOMPurify checks them again): only http(s) and mailto keep an href.
    link({ href, title, tokens }: Tokens.Link) {
      const inner = this.parser.parseInline(tokens);
      if (!SAFE_URL.test(href.trim())) return inner;
      return `<a href="${escapeHtml(href.trim())}"${title ? ` title="${escapeHtml(title)}"` : ""} target="_blank" rel="noopener noreferrer nofollow">${inner}</a>`;
    },
    image({ href, text }: Tokens.Image) {
      const label = `image: ${text || href}`;
      return /^https?:/i.test(href) ? `<a href="${escapeHtml(href)}" target="_blank" rel="noopener noreferrer nofollow">${escapeHtml(label)}</a>` : escapeHtml(label);
    },
    code({ text, lang }: Tokens.Code) {
      const language = (lang ?? "").trim().split(/\s+/)[0] ?? "";
      const attribute = /^[A-Za-z0-9_+#.-]{1,32}$/.test(language) ? ` data-lang="${escapeHtml(language)}"` : "";
      return `<pre><code${attribute}>${escapeHtml(text)}</code></pre>`;
    },
  },
});

const ALLOWED_TAGS = [
  "a", "b", "blockquote", "br", "code", "del", "em", "h1", "h2", "h3", "h4", "h5", "h6", "hr", "i",
  "li", "ol", "p", "pre", "s", "strong", "table", "tbody", "td", "th", "thead", "tr", "ul", "input",
];
const ALLOWED_ATTR = ["href", "title", "target", "rel", "data-lang", "start", "type", "checked", "disabled", "align"];

let hooked = false;
function purify(html: string): DocumentFragment {
  if (!hooked) {
    hooked = true;
    DOMPurify.addHook("afterSanitizeAttributes", (node) => {
      if (node.nodeName === "A") {
        const href = node.getAttribute("href");
        if (href === null || !SAFE_URL.test(href.trim())) node.removeAttribute("href");
        else {
          node.setAttribute("target", "_blank");
          node.setAttribute("rel", "noopener noreferrer nofollow");
        }
      }
      // GFM task lists: a disabled checkbox, nothing else an input could be.
      if (node.nodeName === "INPUT" && (node.getAttribute("type") !== "checkbox" || !node.hasAttribute("disabled"))) node.remove();
      if (node.hasAttribute("align") && !/^(left|right|center)$/.test(node.getAttribute("align") ?? "")) node.removeAttribute("align");
    });
  }
  return DOMPurify.sanitize(html, {
    ALLOWED_TAGS,
    ALLOWED_ATTR,
    ALLOWED_URI_REGEXP: SAFE_URL,
    ALLOW_DATA_ATTR: false,
    RETURN_DOM_FRAGMENT: true,
  });
}

/** Texts whose sanitized DOM is kept: a list scrolled back, an entry rebuilt (a toggle) or a filter change renders the same text again. */
const CACHED_TEXTS = 256;
const cache = new Map<string, DocumentFragment>();

/** Markdown as sanitized DOM (a copy of a cached result when the text was rendered lately); UnboundedText when it is not to be parsed. */
export function renderMarkdown(text: string): DocumentFragment {
  let fragment = cache.get(text);
  if (fragment) cache.delete(text); // re-inserted below: most recently used last
  else {
    const bounded = capLines(text);
    checkMarkdownBounds(bounded);
    fragment = purify(marked.parse(bounded) as string);
    if (cache.size >= CACHED_TEXTS) cache.delete(cache.keys().next().value!);
  }
  cache.set(text, fragment);
  return fragment.cloneNode(true) as DocumentFragment;
}

/** A class list only the viewer sets: hljs output (its own span classes) sanitized to spans. */
export function sanitizeHighlighted(html: string): DocumentFragment {
  return DOMPurify.sanitize(html, { ALLOWED_TAGS: ["span"], ALLOWED_ATTR: ["class"], RETURN_DOM_FRAGMENT: true });
}
