/**
 * What git would open by name in the working tree and wait on (threat 45):
 * it reads `.gitignore` in every directory it lists, `.gitattributes` along
 * the paths it diffs and `.mailmap` at the top, each with a blocking `open`,
 * so a FIFO (or socket, or device) planted under one of those names holds
 * the git process until the call times out. The working tree is walked
 * through directory descriptors (never blocking, never through a link),
 * directories its `.gitignore` files exclude and nested `.git` directories
 * left out, as git leaves them out, and the first such entry is reported;
 * the native backend then hands the call to the isomorphic one, which reads
 * through a jailed file system that skips anything but regular files.
 *
 * @internal
 */
import { existsSync } from "node:fs"
import { walk } from "../../internal/search/walk.ts"

/** The names git opens in a working tree by itself. */
const watched: ReadonlySet<string> = new Set([".gitignore", ".gitattributes", ".mailmap"])

const procFd = existsSync("/proc/self/fd")

/** The first entry under `workTree` (relative to it) that git would open by name and that is not a regular file. */
export const irregularFile = (workTree: string): string | undefined => {
  let found: string | undefined
  const files = walk({
    root: workTree,
    base: ".",
    excluded: (relative) => relative === ".git" || relative.endsWith("/.git"),
    ignoreFiles: { gitignore: true, ignore: false, rgignore: false },
    // Only directories are entered; files are never handed out, so nothing is opened but ignore files.
    keep: (c) => c.isDir && c.ignored() !== "ignore" && found === undefined,
    sorted: false,
    procFd,
    irregular: (relative) => {
      found ??= relative
    },
    watched
  })
  for (const _ of files) {
    // The walk yields no files; it runs for what it meets on the way.
  }
  return found
}
