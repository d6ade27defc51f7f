/**
 * Japanese, Korean and Chinese text for the search benchmarks, from TypeScript's translated
 * diagnostic messages (node_modules/typescript/lib/<language>/diagnosticMessages.generated.json,
 * 2,120 sentences per language, placeholders such as '{0}' kept as they are).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { BENCH_DIR } from "./data.js";
import type { Random } from "../../test/shared/message-factory.js";

export const CJK_LANGUAGES = ["ja", "ko", "zh-cn", "zh-tw"] as const;
export type CjkLanguage = (typeof CJK_LANGUAGES)[number];

export function diagnosticMessages(language: CjkLanguage): string[] {
  const file = join(BENCH_DIR, "..", "node_modules", "typescript", "lib", language, "diagnosticMessages.generated.json");
  return Object.values(JSON.parse(readFileSync(file, "utf8")) as Record<string, string>);
}

/**
 * New text in a language: the messages cut into Intl.Segmenter's segments (words, punctuation,
 * spaces), then drawn one after another as often as they occur there. Unlike the messages
 * repeated, runs of characters are new combinations, as in text written over many sessions.
 */
export function cjkTextSource(language: CjkLanguage): (random: Random, segments: number) => string {
  const counts = new Map<string, number>();
  const segmenter = new Intl.Segmenter(language, { granularity: "word" });
  for (const message of diagnosticMessages(language)) for (const { segment } of segmenter.segment(message)) counts.set(segment, (counts.get(segment) ?? 0) + 1);
  const segments = [...counts.keys()];
  const cumulative: number[] = [];
  let total = 0;
  for (const segment of segments) cumulative.push((total += counts.get(segment)!));
  return (random, count) => {
    let text = "";
    for (let i = 0; i < count; i++) {
      const target = random() * total;
      let lo = 0;
      let hi = segments.length - 1;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (cumulative[mid]! <= target) lo = mid + 1;
        else hi = mid;
      }
      text += segments[lo];
    }
    return text;
  };
}
