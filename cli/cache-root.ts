/** The user's cache directory of the CLI, in a module of its own: the search script's loader needs it alone. */
import nodePath from "node:path";

/** `$XDG_CACHE_HOME/sessionkit` (an absolute $XDG_CACHE_HOME only, as the XDG spec says), else `~/.cache/sessionkit`. */
export function cacheRoot(env: NodeJS.ProcessEnv, home: string): string {
  const xdg = env.XDG_CACHE_HOME;
  return nodePath.join(xdg && nodePath.isAbsolute(xdg) ? xdg : nodePath.join(home, ".cache"), "sessionkit");
}
