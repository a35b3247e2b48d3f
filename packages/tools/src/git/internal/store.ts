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
import type { Dirent } from "node:fs"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import { Effect } from "effect"
import { isInside } from "../../internal/workspace/paths.ts"
import type { Repository } from "../GitBackend.ts"
import { NotARepository } from "../GitError.ts"

/** Why a repository is refused, or nothing. */
type Problem = string | undefined

const realpathOf = (p: string): Promise<string | undefined> => fsp.realpath(p).catch(() => undefined)

const entriesOf = (dir: string): Promise<ReadonlyArray<Dirent>> =>
  fsp.readdir(dir, { withFileTypes: true }).catch(() => [])

/** At most this many alternates are followed, as git does. */
const maxAlternateDepth = 5

const checkRepository = async (repo: Repository, shown: (p: string) => string): Promise<Problem> => {
  const { root, gitDir, commonDir } = repo
  /** `p`, if it names something, must resolve inside the root (missing or dangling: nothing to read). */
  const mustBeInside = async (p: string): Promise<Problem> => {
    const real = await realpathOf(p)
    return real === undefined || isInside(root, real) ? undefined : shown(p)
  }
  /** Every link among the entries of `dir` must resolve inside. */
  const linksInside = async (dir: string): Promise<Problem> => {
    for (const e of await entriesOf(dir)) {
      if (!e.isSymbolicLink()) continue
      const problem = await mustBeInside(path.join(dir, e.name))
      if (problem !== undefined) return problem
    }
    return undefined
  }
  const objectStore = async (objects: string, depth: number): Promise<Problem> => {
    const own = await mustBeInside(objects)
    if (own !== undefined) return own
    const realObjects = await realpathOf(objects)
    if (realObjects === undefined) return undefined
    const top = await entriesOf(objects)
    for (const e of top) {
      const at = path.join(objects, e.name)
      if (e.isSymbolicLink()) {
        const problem = await mustBeInside(at)
        if (problem !== undefined) return problem
      }
    }
    // Fan-out directories, packs and the commit graphs, read in parallel: a link among their entries must stay inside.
    const dirs = top.filter((e) => e.isDirectory() || e.isSymbolicLink()).map((e) => path.join(objects, e.name))
    const extra = [path.join(objects, "info", "commit-graphs")]
    const problems = await Promise.all([...dirs, ...extra].map(linksInside))
    const found = problems.find((p) => p !== undefined)
    if (found !== undefined) return found
    const alternatesFile = path.join(objects, "info", "alternates")
    const alternates = await fsp.lstat(alternatesFile).catch(() => undefined)
    if (alternates === undefined) return undefined
    const fileProblem = await mustBeInside(alternatesFile)
    if (fileProblem !== undefined) return fileProblem
    if (depth >= maxAlternateDepth) return shown(alternatesFile)
    const real = await realpathOf(alternatesFile)
    if (real === undefined) return undefined
    const text = await fsp.readFile(real, "utf8").catch(() => "")

    for (const raw of text.split("\n")) {
      const line = raw.trim()
      if (line === "" || line.startsWith("#")) continue
      // git unquotes C-style quoted lines; they are not read here, so they are refused.
      if (line.startsWith('"')) return shown(alternatesFile)
      // A relative alternate is relative to the object directory holding the file.
      const target = path.resolve(realObjects, line)
      const realTarget = await realpathOf(target)
      if (realTarget === undefined) continue
      if (!isInside(root, realTarget)) return shown(alternatesFile)
      const deeper = await objectStore(realTarget, depth + 1)
      if (deeper !== undefined) return deeper
    }
    return undefined
  }
  const files = [
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
  ]
  const objects = await objectStore(path.join(commonDir, "objects"), 0)
  if (objects !== undefined) return objects
  for (const f of files) {
    const problem = await mustBeInside(f)
    if (problem !== undefined) return problem
  }
  return undefined
}

/**
 * Refuses a repository whose git directory reaches outside the jail
 * (`repo.root`) through a link, an alternate or a `commondir`.
 */
export const checkStore = (repo: Repository, shownAs: string): Effect.Effect<void, NotARepository> =>
  Effect.flatMap(
    Effect.promise(() =>
      checkRepository(repo, (p) => {
        const rel = path.relative(repo.workTree, p)
        return rel.startsWith("..") ? path.relative(repo.root, p) : rel
      })
    ),
    (part) =>
      part === undefined
        ? Effect.void
        : Effect.fail(new NotARepository({ path: shownAs, reason: "store-outside", part }))
  )
