/**
 * The object store jail: before a git tool reads a repository, everything
 * git (or isomorphic-git) would read from its git directory must resolve
 * inside the jail, links followed. That is HEAD, the index, `packed-refs`,
 * `shallow`, the `refs`, `info` and `objects` directories, every fan-out
 * directory and pack of `objects` (and any link among their entries), the
 * commit graphs, and `objects/info/alternates`: each directory it names must
 * lie inside too (checked the same way, recursively, as git follows them).
 * A repository that fails is refused (`NotARepository`, reason
 * `store-outside`, naming the part), so another repository's history never
 * shows through links, alternates or a planted `commondir`.
 *
 * The git environment does the rest: `GIT_ALTERNATE_OBJECT_DIRECTORIES`,
 * `GIT_OBJECT_DIRECTORY` and the like never reach git (its environment is
 * built from scratch), and replace refs are off (`GIT_NO_REPLACE_OBJECTS`).
 *
 * @internal
 */
import { type Dirent, lstatSync, readdirSync, readFileSync, realpathSync, statSync } from "node:fs"
import * as path from "node:path"
import { Effect } from "effect"
import { isInside } from "../../internal/workspace/paths.ts"
import type { Repository } from "./model.ts"
import { NotARepository } from "../GitError.ts"

/** Why a repository is refused, or nothing. */
type Problem = string | undefined

// The scan runs on every call, so it uses the synchronous calls: a few hundred of them cost well under a
// millisecond, where the asynchronous ones would each pay a trip through the thread pool.
const realpathOf = (p: string): string | undefined => {
  try {
    return realpathSync(p)
  } catch {
    return undefined
  }
}

const entriesOf = (dir: string): ReadonlyArray<Dirent> => {
  try {
    return readdirSync(dir, { withFileTypes: true })
  } catch {
    return []
  }
}

/** A directory's identity and last change: a link added to it changes its modification time. */
const signatureOf = (dir: string): string | undefined => {
  try {
    const st = lstatSync(dir)
    return `${st.dev}:${st.ino}:${st.mtimeMs}:${st.ctimeMs}`
  } catch {
    return undefined
  }
}

/** Directories whose entries were found free of links leading out, by their signature when checked. */
const clean = new Map<string, string>()

/** At most this many alternates are followed, as git does. */
const maxAlternateDepth = 5

const checkRepository = (repo: Repository, shown: (p: string) => string): Problem => {
  const { root, gitDir, commonDir } = repo
  /** `p`, if it names something, must resolve inside the root (missing or dangling: nothing to read). */
  const mustBeInside = (p: string): Problem => {
    const real = realpathOf(p)
    return real === undefined || isInside(root, real) ? undefined : shown(p)
  }
  /** Every link among the entries of `dir` must resolve inside; a directory unchanged since it passed is skipped. */
  const linksInside = (dir: string): Problem => {
    const signature = signatureOf(dir)
    if (signature === undefined) return undefined
    const key = `${root}\0${dir}`
    if (clean.get(key) === signature) return undefined
    for (const e of entriesOf(dir)) {
      if (!e.isSymbolicLink()) continue
      const problem = mustBeInside(path.join(dir, e.name))
      if (problem !== undefined) return problem
    }
    if (clean.size > 100_000) clean.clear()
    clean.set(key, signature)
    return undefined
  }
  const objectStore = (objects: string, depth: number): Problem => {
    const own = mustBeInside(objects)
    if (own !== undefined) return own
    const realObjects = realpathOf(objects)
    if (realObjects === undefined) return undefined
    const top = linksInside(objects)
    if (top !== undefined) return top
    // Fan-out directories, packs, info and the commit graphs: a link among their entries must stay inside.
    for (const e of entriesOf(objects)) {
      if (!e.isDirectory()) continue
      const problem = linksInside(path.join(objects, e.name))
      if (problem !== undefined) return problem
    }
    const graphs = linksInside(path.join(objects, "info", "commit-graphs"))
    if (graphs !== undefined) return graphs
    const alternatesFile = path.join(objects, "info", "alternates")
    const real = realpathOf(alternatesFile)
    if (real === undefined) return undefined
    if (!isInside(root, real)) return shown(alternatesFile)
    if (depth >= maxAlternateDepth) return shown(alternatesFile)
    let text = ""
    try {
      if (statSync(real).size <= 1 << 20) text = readFileSync(real, "utf8")
    } catch {
      text = ""
    }
    for (const raw of text.split("\n")) {
      const line = raw.trim()
      if (line === "" || line.startsWith("#")) continue
      // git unquotes C-style quoted lines; they are not read here, so they are refused.
      if (line.startsWith('"')) return shown(alternatesFile)
      // A relative alternate is relative to the object directory holding the file.
      const realTarget = realpathOf(path.resolve(realObjects, line))
      if (realTarget === undefined) continue
      if (!isInside(root, realTarget)) return shown(alternatesFile)
      const deeper = objectStore(realTarget, depth + 1)
      if (deeper !== undefined) return deeper
    }
    return undefined
  }
  const objects = objectStore(path.join(commonDir, "objects"), 0)
  if (objects !== undefined) return objects
  for (const f of [
    path.join(gitDir, "HEAD"),
    path.join(gitDir, "index"),
    path.join(gitDir, "info"),
    path.join(gitDir, "info", "sparse-checkout"),
    path.join(commonDir, "config"),
    path.join(commonDir, "packed-refs"),
    path.join(commonDir, "shallow"),
    path.join(commonDir, "refs"),
    path.join(commonDir, "reftable"),
    path.join(commonDir, "info"),
    path.join(commonDir, "info", "exclude"),
    path.join(commonDir, "info", "attributes"),
    path.join(commonDir, "info", "grafts")
  ]) {
    const problem = mustBeInside(f)
    if (problem !== undefined) return problem
  }
  return undefined
}

/** How long a repository found clean is trusted before its fan-out directories are read again. */
const rescanMillis = 2000

/** Repositories found clean: when, and the signature of their top-level paths then. */
const verified = new Map<string, { readonly at: number; readonly top: string }>()

/** What changes when the store is repacked, relinked or reconfigured: checked on every call. */
const topSignature = (repo: Repository): string =>
  [
    repo.gitDir,
    repo.commonDir,
    path.join(repo.commonDir, "objects"),
    path.join(repo.commonDir, "objects", "info"),
    path.join(repo.commonDir, "objects", "info", "alternates"),
    path.join(repo.commonDir, "objects", "pack"),
    path.join(repo.commonDir, "config"),
    path.join(repo.commonDir, "refs"),
    path.join(repo.commonDir, "packed-refs"),
    path.join(repo.gitDir, "index"),
    path.join(repo.gitDir, "HEAD")
  ]
    .map((p) => signatureOf(p) ?? "-")
    .join("|")

/**
 * Refuses a repository whose git directory reaches outside the jail
 * (`repo.root`) through a link, an alternate or a `commondir`. The top-level
 * paths are checked on every call; the fan-out directories of `objects`
 * (one `lstat` each, a few milliseconds for a large store) again only when
 * a directory changed or two seconds have passed, so a link planted inside
 * an existing fan-out directory is seen within two seconds.
 */
export const checkStore = (repo: Repository, shownAs: string): Effect.Effect<void, NotARepository> =>
  Effect.flatMap(
    Effect.sync(() => {
      const key = `${repo.root}\0${repo.gitDir}\0${repo.commonDir}`
      const top = topSignature(repo)
      const seen = verified.get(key)
      const now = Date.now()
      if (seen !== undefined && seen.top === top && now - seen.at < rescanMillis) return undefined
      const problem = checkRepository(repo, (p) => {
        const rel = path.relative(repo.workTree, p)
        return rel.startsWith("..") ? path.relative(repo.root, p) : rel
      })
      if (problem === undefined) {
        if (verified.size > 10_000) verified.clear()
        verified.set(key, { at: now, top })
      } else verified.delete(key)
      return problem
    }),
    (part) =>
      part === undefined
        ? Effect.void
        : Effect.fail(new NotARepository({ path: shownAs, reason: "store-outside", part }))
  )
