/**
 * Redaction of the copy that leaves: each secret becomes `[REDACTED:<kind>]` in the string it was
 * in. Works on parsed records, so the JSON written after is valid whatever the secret held; ids,
 * parent links, image data and everything else are kept as they were.
 */
import { findSecrets } from "./detect.js";
import { mapTexts } from "./fields.js";

/**
 * How many secrets of each kind were redacted.
 * @category Secrets
 */
export type RedactionCounts = Record<string, number>;

/** What stands in for a secret of `kind`. */
export function redactionMark(kind: string): string {
  return `[REDACTED:${kind}]`;
}

/** `text` with its secrets replaced; counts them into `counts`. */
function redactText(text: string, counts: RedactionCounts): string {
  const found = findSecrets(text);
  if (found.length === 0) return text;
  let out = "";
  let at = 0;
  for (const { kind, start, end } of found) {
    out += text.slice(at, start) + redactionMark(kind);
    at = end;
    counts[kind] = (counts[kind] ?? 0) + 1;
  }
  return out + text.slice(at);
}

/**
 * A session record (header or entry) with every secret in its texts replaced by
 * `[REDACTED:<kind>]`, counted into `counts`; the record itself when it holds none.
 * @category Secrets
 */
export function redactRecord<T>(record: T, counts: RedactionCounts): T {
  return mapTexts(record, (text) => {
    const redacted = redactText(text, counts);
    return redacted === text ? undefined : redacted;
  });
}
