/** Rules as data: gitleaks' shape (gitleaks-rules.ts), and sessionkit's own rules (rules.ts) in it. */

/** When a finding is not one: its secret (or match, or line) matches a regex, or holds a stop word. */
export interface AllowlistData {
  /** JavaScript regex sources. */
  regexes?: string[];
  /** What the regexes test: the secret (default), the whole match, or the line it is on. */
  regexTarget?: "match" | "line";
  /** Lower-case words: a secret holding one is not a finding. */
  stopwords?: string[];
  /** "and": every test given must hold (default: any one). */
  condition?: "and";
}

export interface RuleData {
  /** The rule's id: the finding's kind, and `[REDACTED:<id>]`. */
  id: string;
  /** JavaScript regex source. */
  regex: string;
  /** The regex ignores case (its "i" flag). */
  caseless?: boolean;
  /**
   * A caseless regex matching wherever `regex` does (and maybe elsewhere): it finds candidates,
   * `regex` confirms each where it starts. For a rule caseless in parts only, whose letters
   * `regex` spells out (`[aA]`), which a regex engine scans for far more slowly than a literal.
   */
  loose?: string;
  /**
   * The match also takes in up to this many name characters (`[\w.-]`) before where the regex
   * matched: gitleaks' `[\w.-]{0,50}?` prefix, applied backwards (see detect.ts).
   */
  leadingName?: number;
  /** Lower-case words one of which the text must hold for the regex to run (none: always runs). */
  keywords: string[];
  /** A secret of this Shannon entropy (bits per character) or less is not a finding. */
  entropy?: number;
  /** The capture group holding the secret (default: the first group that matched, else the match). */
  secretGroup?: number;
  allowlists?: AllowlistData[];
}
