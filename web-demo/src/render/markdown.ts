/**
 * Markdown from session text (GFM, line breaks), as pi's export shows it, made safe: raw HTML is
 * shown as text, images become links (nothing remote is loaded), and the HTML marked produces
 * goes through DOMPurify with an allow-list of plain formatting tags and only href/title
 * attributes (no class, id or style: session text cannot restyle the page), links only to
 * http(s) and mailto, opening in a new tab without a referrer.
 */
import DOMPurify from "dompurify";
import { Marked, type Tokens } from "marked";

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

/** Markdown as sanitized DOM. */
export function renderMarkdown(text: string): DocumentFragment {
  return purify(marked.parse(text) as string);
}

/** A class list only the viewer sets: hljs output (its own span classes) sanitized to spans. */
export function sanitizeHighlighted(html: string): DocumentFragment {
  return DOMPurify.sanitize(html, { ALLOWED_TAGS: ["span"], ALLOWED_ATTR: ["class"], RETURN_DOM_FRAGMENT: true });
}
