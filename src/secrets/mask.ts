/**
 * A finding's preview: enough to recognize the secret, never enough to use it. At most the first
 * characters of a prefix the rule knows (public: every such key starts so) and the last four.
 */

/** Most characters of a known prefix shown. */
const PREFIX_MAX = 7;

/** Last characters shown: four of a long secret, two of a medium one, none of a short one. */
function tailLength(length: number): number {
  return length >= 20 ? 4 : length >= 12 ? 2 : 0;
}

/**
 * `secret` masked: `sk-ant-…Q2xA` (a known prefix, up to 7 characters, and the last 4). A PEM
 * block shows its BEGIN line, which names the kind of key and holds nothing of it.
 */
export function maskSecret(secret: string, knownPrefixes: readonly string[]): string {
  if (secret.startsWith("-----BEGIN")) {
    const line = secret.slice(0, secret.indexOf("\n") < 0 ? secret.length : secret.indexOf("\n"));
    return `${line.slice(0, 40).replace(/-+$/, "")}…`;
  }
  const lower = secret.toLowerCase();
  const prefix = knownPrefixes.filter((word) => word.length >= 2 && /^[a-z0-9]/.test(word) && lower.startsWith(word)).reduce((longest, word) => (word.length > longest ? word.length : longest), 0);
  const shown = secret.slice(0, Math.min(prefix, PREFIX_MAX));
  let tail = tailLength(secret.length);
  // Never half of it: what is shown stays a small part of a short secret.
  if (shown.length + tail > secret.length / 2) tail = 0;
  return `${shown}…${tail > 0 ? secret.slice(-tail) : ""}`;
}
