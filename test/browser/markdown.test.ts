/**
 * The viewer's markdown and highlighting, built as DOM without an HTML parser or a sanitizer,
 * against the pipeline they replace, in Chromium: marked's HTML for the same tokens (with the
 * viewer's renderers of raw HTML, links, images and code) through DOMPurify with the viewer's
 * allow-list, and hljs's HTML through DOMPurify with class-only spans. The same DOM (innerHTML)
 * for hand-written cases of every token, for every markdown text of the corpus's real sessions,
 * and for generated markdown; where the two differ by design, the case says why.
 */
import DOMPurify from "dompurify";
import fc from "fast-check";
import hljs from "highlight.js/lib/core";
import bash from "highlight.js/lib/languages/bash";
import python from "highlight.js/lib/languages/python";
import typescript from "highlight.js/lib/languages/typescript";
import xml from "highlight.js/lib/languages/xml";
import { Marked, type Tokens } from "marked";
import { describe, expect, it } from "vitest";
import { commands } from "vitest/browser";
import { UnboundedText, capLines } from "../../web-demo/src/render/bounds.js";
import { highlightedNodes } from "../../web-demo/src/render/highlight.js";
import { renderMarkdown } from "../../web-demo/src/render/markdown.js";
import { CORPUS_DIR_FROM_PROJECT_ROOT, PI_REFERENCE_NAME, type PiReferenceFile } from "../shared/corpus-observe.js";

/**
 * The pipeline before the DOM builder (web-demo/src/render/markdown.ts at 0b162f5), kept as the
 * oracle. As configured then (`asShipped`), it gave DOMPurify the link pattern as
 * ALLOWED_URI_REGEXP, which DOMPurify applies to the value of every attribute it does not know to
 * be URI-safe: it dropped data-lang, start and align, and a task's checkbox with its type. The
 * oracle leaves that out by default (the hook checks links, as it did): the DOM it was meant to give.
 */
function oracleMarkdown(text: string, asShipped = false): string {
  const escapeHtml = (value: string) =>
    value.replace(/[&<>"']/g, (c) => (c === "&" ? "&amp;" : c === "<" ? "&lt;" : c === ">" ? "&gt;" : c === '"' ? "&quot;" : "&#39;"));
  const safeUrl = /^(?:https?:|mailto:)/i;
  const strictDel = /^(~~)(?=[^\s~])((?:\\.|[^\\])*?(?:\\.|[^\s~\\]))\1(?=[^~]|$)/;
  const marked = new Marked({ gfm: true, breaks: true, async: false });
  marked.use({
    tokenizer: {
      del(src: string) {
        const match = strictDel.exec(src);
        if (!match) return undefined;
        return { type: "del", raw: match[0], text: match[2]!, tokens: this.lexer.inlineTokens(match[2]!) };
      },
    },
    renderer: {
      html({ text }: Tokens.HTML | Tokens.Tag) {
        return escapeHtml(text);
      },
      link({ href, title, tokens }: Tokens.Link) {
        const inner = this.parser.parseInline(tokens);
        if (!safeUrl.test(href.trim())) return inner;
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
  const purify = DOMPurify();
  purify.addHook("afterSanitizeAttributes", (node) => {
    if (node.nodeName === "A") {
      const href = node.getAttribute("href");
      if (href === null || !safeUrl.test(href.trim())) node.removeAttribute("href");
      else {
        node.setAttribute("target", "_blank");
        node.setAttribute("rel", "noopener noreferrer nofollow");
      }
    }
    if (node.nodeName === "INPUT" && (node.getAttribute("type") !== "checkbox" || !node.hasAttribute("disabled"))) node.remove();
    if (node.hasAttribute("align") && !/^(left|right|center)$/.test(node.getAttribute("align") ?? "")) node.removeAttribute("align");
  });
  const fragment = purify.sanitize(marked.parse(text) as string, {
    ALLOWED_TAGS: ["a", "b", "blockquote", "br", "code", "del", "em", "h1", "h2", "h3", "h4", "h5", "h6", "hr", "i", "li", "ol", "p", "pre", "s", "strong", "table", "tbody", "td", "th", "thead", "tr", "ul", "input"],
    ALLOWED_ATTR: ["href", "title", "target", "rel", "data-lang", "start", "type", "checked", "disabled", "align"],
    ...(asShipped ? { ALLOWED_URI_REGEXP: safeUrl } : {}),
    ALLOW_DATA_ATTR: false,
    RETURN_DOM_FRAGMENT: true,
  });
  return html(fragment);
}

function html(fragment: DocumentFragment): string {
  const box = document.createElement("div");
  box.append(fragment);
  return box.innerHTML;
}

const ours = (text: string) => html(renderMarkdown(text));

/** Every token type, and what session text does to them. */
const CASES = [
  "# One\n## Two\n### Three\n#### Four\n##### Five\n###### Six\nSetext\n===",
  "*em* _em_ **strong** __strong__ ***both*** ~~gone~~ ~one tilde~ `a & <b> \"c\"`",
  "line one\nline two  \nline three\\\nfour",
  "```ts\nconst x = 1 < 2 && \"y\";\n```\n\n```\nplain\n```\n\n```weird lang!! more\nx\n```\n\n    indented\n    code",
  "> quote\n>\n> > nested\n> - in a list\n\nafter",
  "- a\n- b\n  - nested\n\n1. one\n2. two\n\n0. zero\n\n5. five\n6. six",
  "- loose\n\n- items\n\n  with paragraphs",
  "- [x] done\n- [ ] todo\n\n- [x] loose done\n\n- [ ] loose todo",
  "| left | right | center | none |\n|:-|-:|:-:|-|\n| 1 | 2 | 3 | 4 |\n| *a* | `b` | [c](https://c.example) | |\n\n| only | head |\n|---|---|",
  "***\n---\n___",
  "<div class=\"x\" style=\"color:red\">raw block</div>\n\ninline <b>bold</b> <img src=x onerror=alert(1)> <script>alert(2)</script> <!-- comment -->",
  "[http](http://a.example/x?y=1&z=2) [https](https://a.example \"Title & 'quotes'\") [mail](mailto:a@b.example) [js](javascript:alert(1)) [data](data:text/html,x) [rel](/relative) [ spaced ]( https://s.example )",
  "<https://auto.example/path> <a@b.example> www.bare.example https://bare.example/x. a@b.example",
  "[ref][1] and [other]\n\n[1]: https://ref.example \"T\"\n[other]: javascript:alert(1)",
  "![web](https://img.example/a.png) ![](https://img.example/b.png) ![data](data:image/png;base64,AAAA) ![rel](a.png \"t\")",
  "&copy; &amp; &lt;tag&gt; &foo; &#65; &#x41; &#0; &#xD800; &#1114112; &nbsp;x &AMP; &copy no semicolon, \\& \\* \\_ \\` \\\\",
  "emoji 🎉 naïve 中文 עברית \u200b zero-width, tab\there",
  "a\r\nwindows\r\nlines\rold mac",
  "**nested *em* inside** and *em with **strong** inside* and ~~del with *em*~~",
  "<",
  "",
  "   ",
];

describe("markdown as DOM", () => {
  it("gives the DOM marked's HTML gave through DOMPurify, for every token type", () => {
    for (const text of CASES) expect(ours(text), JSON.stringify(text)).toBe(oracleMarkdown(text));
  });

  it("does so for every markdown text in the corpus's real sessions", async () => {
    const reference: PiReferenceFile = JSON.parse(await commands.readFile(`${CORPUS_DIR_FROM_PROJECT_ROOT}/${PI_REFERENCE_NAME}`, "utf8"));
    let texts = 0;
    for (const file of Object.keys(reference.files)) {
      const lines = (await commands.readFile(`${CORPUS_DIR_FROM_PROJECT_ROOT}/${file}`, "utf8")).split("\n");
      for (const line of lines) {
        let entry: { message?: { role?: string; content?: unknown } };
        try {
          entry = JSON.parse(line);
        } catch {
          continue;
        }
        const content = entry.message?.content;
        const blocks = typeof content === "string" ? [content] : Array.isArray(content) ? content.filter((b) => b?.type === "text" && typeof b.text === "string").map((b) => b.text as string) : [];
        for (const text of blocks) {
          if (RAW_TAG.test(text) || XML_SENSITIVE.test(text) || LINKED_IMAGE.test(text)) continue;
          let built: string;
          try {
            built = ours(text);
          } catch (error) {
            // Refused before parsing (bounds.ts), as the pipeline before refused it.
            expect(error).toBeInstanceOf(UnboundedText);
            continue;
          }
          texts++;
          // Long lines are cut before parsing, as before.
          expect(built, JSON.stringify(text.slice(0, 200))).toBe(oracleMarkdown(capLines(text)));
        }
      }
    }
    expect(texts).toBeGreaterThan(1000);
  });

  it("does so for generated markdown", () => {
    const piece = fc.constantFrom(
      "a", "b c", " ", "\n", "\n\n", "  \n", "*", "**", "_", "__", "~~", "~", "`", "```", "```ts\n", "- ", "1. ", "0. ", "> ", "# ", "## ",
      "|", "|-|-|\n", ":-:", "---", "[", "]", "(", ")", "![", "<", ">", "&", "&amp;", "&copy;", "&#65;", "&foo;", "\\", "\\*",
      "https://x.example", "mailto:a@b.example", "javascript:alert(1)", "data:x", "<b>", "</b>", "<img src=x onerror=alert(1)>", "[x] ", "\t", "é", "🎉", "\"", "'",
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 40 }).map((pieces) => pieces.join("")), (text) => {
        fc.pre(!XML_SENSITIVE.test(text) && !LINKED_IMAGE.test(text));
        expect(ours(text)).toBe(oracleMarkdown(text));
      }),
      { numRuns: 2000 },
    );
  });

  it("keeps a fence's language, a list's start, a cell's alignment and a task's checkbox (the pipeline before, as shipped, dropped them in Chromium)", () => {
    const text = "```ts\nconst x = 1;\n```\n\n3. three\n\n- [x] done\n\n| a |\n|:-:|\n| 1 |";
    const box = document.createElement("div");
    box.append(renderMarkdown(text));
    expect(box.querySelector("code")!.dataset.lang).toBe("ts");
    expect(box.querySelector("ol")!.getAttribute("start")).toBe("3");
    expect([...box.querySelectorAll("th, td")].map((cell) => cell.getAttribute("align"))).toEqual(["center", "center"]);
    expect(box.querySelector("input")!.outerHTML).toBe('<input checked="" disabled="" type="checkbox">');
    const before = document.createElement("div");
    before.innerHTML = oracleMarkdown(text, true);
    expect([before.querySelector("code")!.dataset.lang, before.querySelector("ol")!.getAttribute("start"), before.querySelector("th")!.getAttribute("align"), before.querySelector("input")]).toEqual([undefined, null, null, null]);
  });

  it("shows the text after an inline <pre>, <code>, <kbd> or <script> tag as written (the pipeline before passed it to the browser as HTML, which decoded a reference without its semicolon)", () => {
    const text = "<kbd>a &copy b &amp; c</kbd>";
    const box = document.createElement("div");
    box.append(renderMarkdown(text));
    expect(box.textContent).toBe("<kbd>a &copy b & c</kbd>\n");
    expect(oracleMarkdown(text)).toBe("<p>&lt;kbd&gt;a © b &amp; c&lt;/kbd&gt;</p>\n");
  });

  it("shows an image in a link as its label in that link (the pipeline before made it a link of its own, which the HTML parser moved out of the emptied link)", () => {
    const text = "[![logo](https://img.example/logo.png)](https://site.example)";
    const box = document.createElement("div");
    box.append(renderMarkdown(text));
    expect(box.innerHTML).toBe('<p><a href="https://site.example" target="_blank" rel="noopener noreferrer nofollow">image: logo</a></p>\n');
    expect(oracleMarkdown(text)).toBe(
      '<p><a href="https://site.example" target="_blank" rel="noopener noreferrer nofollow"></a><a href="https://img.example/logo.png" target="_blank" rel="noopener noreferrer nofollow">image: logo</a></p>\n',
    );
  });

  it("keeps a link whose address holds `-->`, `]>` or `</title` (DOMPurify dropped such an attribute; as DOM it is a value, never markup)", () => {
    const text = '[a](https://x.example/--> "t]>") [b](https://x.example/</title)';
    const links = (box: Element) => [...box.querySelectorAll("a")].map((a) => [a.getAttribute("href"), a.getAttribute("title")]);
    const box = document.createElement("div");
    box.append(renderMarkdown(text));
    expect(links(box)).toEqual([
      ["https://x.example/-->", "t]>"],
      ["https://x.example/</title", null],
    ]);
    const before = document.createElement("div");
    before.innerHTML = oracleMarkdown(text);
    expect(links(before)).toEqual([
      [null, null],
      [null, null],
    ]);
  });
});

/** Text marked passed through as HTML (after a raw tag), attributes DOMPurify dropped for XML's sake, images in links: the differences by design (above). */
const RAW_TAG = /<(?:pre|code|kbd|script)[\s>]/i;
const XML_SENSITIVE = /--!?>|\]>|<\/(?:style|title)/i;
const LINKED_IMAGE = /\[[^\]]*!\[/;

describe("highlighted code as DOM", () => {
  hljs.registerLanguage("typescript", typescript);
  hljs.registerLanguage("python", python);
  hljs.registerLanguage("bash", bash);
  hljs.registerLanguage("xml", xml);
  const CODE = [
    ["typescript", 'const a: Map<string, number> = new Map(); // "quoted" & \'single\'\nif (a.size > 0 && b < 1) throw new Error(`x ${y}`);'],
    ["python", 'def f(x):\n    """doc & <b>"""\n    return x > 1 and x < 2  # comment'],
    ["bash", "echo \"$HOME\" && cat <<EOF > file\n</span><img src=x onerror=alert(1)>\nEOF"],
    ["xml", '<div class="a" onclick="alert(1)"><script>alert(2)</script><!-- c --></div>'],
  ] as const;

  it("gives the DOM DOMPurify gave hljs's HTML, with the code's text unchanged", () => {
    for (const [language, code] of CODE) {
      const highlighted = hljs.highlight(code, { language, ignoreIllegals: true }).value;
      const nodes = highlightedNodes(highlighted);
      expect(nodes, language).not.toBeNull();
      const built = html(nodes!);
      expect(built).toBe(html(DOMPurify.sanitize(highlighted, { ALLOWED_TAGS: ["span"], ALLOWED_ATTR: ["class"], RETURN_DOM_FRAGMENT: true })));
      const box = document.createElement("div");
      box.innerHTML = built;
      expect(box.textContent).toBe(code);
      expect(box.querySelector("span")).not.toBeNull();
    }
  });

  it("refuses anything but class-only spans and hljs's escapes: the code then stays plain", () => {
    for (const other of ['<span class="a">x', "x</span>", '<span class="a" onclick="x">y</span>', "<img src=x>", "<b>x</b>", "a &copy; b", "a & b", '<span class="a:b">x</span>'])
      expect(highlightedNodes(other), other).toBeNull();
    expect(html(highlightedNodes('<span class="hljs-title function_">f</span>(&lt;&amp;&gt;&quot;&#x27;)')!)).toBe('<span class="hljs-title function_">f</span>(&lt;&amp;&gt;"\')');
  });
});
