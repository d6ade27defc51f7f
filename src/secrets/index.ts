/**
 * `sessionkit/secrets`: finding secrets in sessions (the gitleaks rules, ~18 KB gzipped in a
 * browser bundle), and redacting them from copies that leave. A subpath of its own rather than a
 * part of `sessionkit`: esbuild's code splitting puts every file the root module imports in the
 * chunk an app loads first, so an app that loads the scanner lazily would load it up front.
 *
 * @module sessionkit/secrets
 */
export { findSecrets, type FindOptions, type SecretMatch } from "./detect.js";
export { scanSessions, scanSessionFile, findSecretsInRecord, type SecretFinding, type ScanOptions, type ScanResult, type ScanProgress } from "./scan.js";
export { redactRecord, type RedactionCounts } from "./redact.js";
