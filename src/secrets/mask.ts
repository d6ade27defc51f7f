/**
 * A finding's preview: enough to recognize the secret, never enough to use it. At most the first
 * characters of a prefix the rule knows (public: every such key starts so) and the last four.
 */

/** Most characters of a known prefix shown. */
const PREFIX_MAX = 8;

/** Last characters shown: four of a long secret, two of a medium one, none of a short one. */
function tailLength(length: number): number {
  return length >= 20 ? 4 : length >= 12 ? 2 : 0;
}

/** A token's type as its issuer writes it first: `sk-ant-`, `sk-proj-`, `ghp_`, `xoxb-`, `glpat-`. */
const TYPE_PREFIX = /^[a-z]{1,8}[-_](?:[a-z]{2,8}[-_])?/;

/**
 * `secret` masked: `sk-ant-…Q2xA` (a known prefix, up to 8 characters, and the last 4). The
 * prefix is (`typed`: a rule for one issuer's tokens) the type prefix such tokens start with, else
 * the longest of the rule's keywords the secret starts with (AKIA); a password or a generic value
 * shows none. A PEM block shows its BEGIN line, which names the kind of key and holds nothing of it.
 */
export function maskSecret(secret: string, knownPrefixes: readonly string[], typed: boolean): string {
  if (secret.startsWith("-----BEGIN")) {
    const line = secret.slice(0, secret.indexOf("\n") < 0 ? secret.length : secret.indexOf("\n"));
    return `${line.slice(0, 40).replace(/-+$/, "")}…`;
  }
  const lower = secret.toLowerCase();
  const keyword = knownPrefixes.filter((word) => word.length >= 2 && /^[a-z0-9]/.test(word) && lower.startsWith(word)).reduce((longest, word) => Math.max(longest, word.length), 0);
  const prefix = (typed ? TYPE_PREFIX.exec(secret)?.[0].length : undefined) ?? keyword;
  const shown = secret.slice(0, Math.min(prefix, PREFIX_MAX));
  let tail = tailLength(secret.length);
  // Never half of it: what is shown stays a small part of a short secret.
  if (shown.length + tail > secret.length / 2) tail = 0;
  return `${shown}…${tail > 0 ? secret.slice(-tail) : ""}`;
}
