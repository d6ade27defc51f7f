/**
 * The Chromium that vitest's browser project, the e2e tests and the browser bench launch: Debian's (test tools may not
 * download their own browser on these machines), flags as in shared/BROWSER-TESTING.md.
 */
export const chromiumExecutable = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

export const chromiumArgs = [
  "--no-sandbox", // running as root
  "--disable-gpu",
  // The network is closed here: keep Chromium from reaching for it.
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
  "--disable-quic",
];
