// @vitest-environment happy-dom
/**
 * The viewer's bounds on session text (web-demo/src/render/bounds.ts) before markdown parsing:
 * what it refuses (nesting past 16 levels by quotes, list markers or indentation; more than 256
 * emphasis marks in a paragraph, also over many lines) and what it must still parse (a 16-level
 * list, a long list with bold in every item, fenced code with deep indentation and stars), and
 * lines cut at 5,000 characters with a note. The texts are the ones that broke or froze the view.
 */
import { describe, expect, it } from "vitest";
import { MAX_LINE, UnboundedText, capLines, checkMarkdownBounds } from "../../../web-demo/src/render/bounds.js";
import { renderMarkdown } from "../../../web-demo/src/render/markdown.js";

/** The rendered markdown in an element (queried there, not in the fragment). */
const rendered = (text: string) => {
  const box = document.createElement("div");
  box.append(renderMarkdown(text));
  return box;
};

const refused = (text: string) => {
  try {
    checkMarkdownBounds(text);
    return null;
  } catch (error) {
    if (!(error instanceof UnboundedText)) throw error;
    return error.message;
  }
};

describe("markdown bounds", () => {
  it("refuses nesting past 16 levels: quotes, list markers on one line, indentation, a mix", () => {
    expect(refused(">".repeat(5000))).toBe("nested more than 16 levels deep");
    expect(refused("> ".repeat(17) + "x")).toBe("nested more than 16 levels deep");
    expect(refused("- ".repeat(5000) + "x")).toBe("nested more than 16 levels deep");
    expect(refused("1. ".repeat(3000) + "x")).toBe("nested more than 16 levels deep");
    expect(refused(Array.from({ length: 2000 }, (_, i) => " ".repeat(i * 2) + "- x").join("\n"))).toBe("nested more than 16 levels deep");
    expect(refused("> - ".repeat(3000) + "x")).toBe("nested more than 16 levels deep");
    // Each of these made marked throw "Maximum call stack size exceeded" or run for seconds.
    for (const text of [">".repeat(5000), "- ".repeat(5000) + "x"]) expect(() => renderMarkdown(text)).toThrow(UnboundedText);
  });

  it("refuses more than 256 emphasis marks in a paragraph, on one line or over many", () => {
    expect(refused(`${"*a ".repeat(2000)}x${" a*".repeat(2000)}`)).toBe("more than 256 emphasis marks in one paragraph");
    expect(refused("*".repeat(20000) + "x" + "*".repeat(20000))).toBe("more than 256 emphasis marks in one paragraph");
    expect(refused("*a\n".repeat(300))).toBe("more than 256 emphasis marks in one paragraph");
  });

  it("parses what sessions hold: a 16-level list, bold in each of 200 items, fenced code with deep indentation and stars", () => {
    const deepList = Array.from({ length: 16 }, (_, i) => " ".repeat(i * 2) + "- level").join("\n");
    expect(refused(deepList)).toBeNull();
    expect(rendered(deepList).textContent!.match(/level/g)).toHaveLength(16);
    const boldItems = Array.from({ length: 200 }, (_, i) => `- **item ${i}**: what it is`).join("\n");
    expect(refused(boldItems)).toBeNull();
    expect(rendered(boldItems).querySelectorAll("strong")).toHaveLength(200);
    const fenced = "```c\n" + Array.from({ length: 100 }, (_, i) => " ".repeat(i) + "- **p = *q; /* > */").join("\n") + "\n```";
    expect(refused(fenced)).toBeNull();
    expect(rendered(fenced).querySelector("code[data-lang=c]")!.textContent).toContain("**p = *q;");
    // Paragraphs end at blank lines: 200 of them with bold are fine.
    expect(refused(Array.from({ length: 200 }, () => "Some **bold** words.").join("\n\n"))).toBeNull();
  });
});

describe("capLines", () => {
  it("cuts lines longer than 5,000 characters and says how much was left out; shorter text is returned as it is", () => {
    expect(capLines("x".repeat(200_000))).toBe(`${"x".repeat(MAX_LINE)} … [195,000 more characters on this line]`);
    expect(capLines(`short\n${"y".repeat(6000)}\nend`)).toBe(`short\n${"y".repeat(MAX_LINE)} … [1,000 more characters on this line]\nend`);
    const ordinary = "a line\n".repeat(2000);
    expect(capLines(ordinary)).toBe(ordinary);
  });
});
