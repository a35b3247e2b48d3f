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
 * **Nothing there can block git or us (threat 45).** Every entry met (the
 * git and common directories, `info`, the `refs` tree, the object store's
 * directories) must be a regular file or a directory, or a link to one
 * inside; a FIFO, socket or device is refused (`not-a-file`, naming it)
 * before git runs, since git opens its files with a blocking `open`.
 * `alternates` is read without blocking. The directories git reads refs and
 * its top-level files from are checked on every call (one `lstat` each when
 * unchanged); the object store's fan-out directories as described below.
 *
 * The git environment does the rest: `GIT_ALTERNATE_OBJECT_DIRECTORIES`,
 * `GIT_OBJECT_DIRECTORY` and the like never reach git (its environment is
 * built from scratch), and replace refs are off (`GIT_NO_REPLACE_OBJECTS`).
 *
 * @internal
 */
import { type Dirent, lstatSync, readdirSync, realpathSync, statSync } from "node:fs"
import * as path from "node:path"
import { Effect } from "effect"
import { isInside } from "../../internal/workspace/paths.ts"
import { readRegularSync } from "../../internal/workspace/regular.ts"
import type { Repository } from "./model.ts"
import { NotARepository } from "../GitError.ts"

/** Why a repository is refused, or nothing: a part that leads outside, or a part git would block on. */
type Problem = { readonly reason: "store-outside" | "not-a-file"; readonly part: string } | undefined

// The scan runs on every call, so it uses the synchronous calls: a few hundred of them cost well under a
// millisecond, where the asynchronous ones would each pay a trip through the thread pool. None of them opens
// a file but `readRegularSync`, which cannot block.
const realpathOf = (p: string): string | undefined => {
  try {
    return realpathSync(p)
  } catch {
    return undefined
  }
}

/** Whether a real path names a regular file or a directory (what git may open without blocking on it). */
const fileOrDirectory = (real: string): boolean => {
  try {
    const st = statSync(real)
    return st.isFile() || st.isDirectory()
  } catch {
    // Gone since: nothing git could block on.
    return true
  }
}

const entriesOf = (dir: string): ReadonlyArray<Dirent> => {
  try {
    return readdirSync(dir, { withFileTypes: true })
  } catch {
    return []
  }
}

/** A directory's identity and last change: a link or FIFO added to it changes its modification time. */
const signatureOf = (dir: string): string | undefined => {
  try {
    const st = lstatSync(dir)
    return `${st.dev}:${st.ino}:${st.mtimeMs}:${st.ctimeMs}`
  } catch {
    return undefined
  }
}

/** Directories whose entries were found sound, by their signature when checked, with their sub-directories. */
const sound = new Map<string, { readonly signature: string; readonly subdirs: ReadonlyArray<string> }>()

/** At most this many alternates are followed, as git does. */
const maxAlternateDepth = 5

/** Checks a directory's entries (and, with `deep`, its sub-directories'), as git would meet them. */
const makeChecks = (root: string, shown: (p: string) => string) => {
  /** `p`, if it names something, must resolve inside the root, to a regular file or a directory. */
  const mustBeInside = (p: string): Problem => {
    const real = realpathOf(p)
    if (real === undefined) return undefined
    if (!isInside(root, real)) return { reason: "store-outside", part: shown(p) }
    return fileOrDirectory(real) ? undefined : { reason: "not-a-file", part: shown(p) }
  }
  /**
   * Every entry of `dir` must be a regular file or a directory, or a link
   * that resolves inside to one; a directory unchanged since it passed is
   * not read again.
   */
  const entriesSound = (dir: string, deep: boolean): Problem => {
    const signature = signatureOf(dir)
    if (signature === undefined) return undefined
    const key = `${root}\0${dir}`
    const seen = sound.get(key)
    let subdirs: ReadonlyArray<string>
    if (seen?.signature === signature) subdirs = seen.subdirs
    else {
      const found: Array<string> = []
      for (const e of entriesOf(dir)) {
        const at = path.join(dir, e.name)
        if (e.isSymbolicLink()) {
          const problem = mustBeInside(at)
          if (problem !== undefined) return problem
        } else if (e.isDirectory()) found.push(at)
        else if (!e.isFile()) return { reason: "not-a-file", part: shown(at) }
      }
      subdirs = found
      if (sound.size > 100_000) sound.clear()
      sound.set(key, { signature, subdirs })
    }
    if (deep) {
      for (const sub of subdirs) {
        const problem = entriesSound(sub, true)
        if (problem !== undefined) return problem
      }
    }
    return undefined
  }
  return { mustBeInside, entriesSound }
}

/**
 * The parts of a git directory checked on every call (a directory unchanged
 * since it passed costs one `lstat`): the entries of the git and common
 * directories (HEAD, the index, config, packed-refs, commondir, …), `info`,
 * and the whole `refs` tree, none of which may be a FIFO, socket or device
 * or lead outside through a link.
 */
const checkEveryCall = (repo: Repository, shown: (p: string) => string): Problem => {
  const { entriesSound } = makeChecks(repo.root, shown)
  for (const dir of new Set([repo.gitDir, repo.commonDir])) {
    const problem = entriesSound(dir, false) ?? entriesSound(path.join(dir, "info"), false)
    if (problem !== undefined) return problem
  }
  return entriesSound(path.join(repo.commonDir, "refs"), true)
}

const checkRepository = (repo: Repository, shown: (p: string) => string): Problem => {
  const { root, gitDir, commonDir } = repo
  const { mustBeInside, entriesSound } = makeChecks(root, shown)
  const objectStore = (objects: string, depth: number): Problem => {
    const own = mustBeInside(objects)
    if (own !== undefined) return own
    const realObjects = realpathOf(objects)
    if (realObjects === undefined) return undefined
    const top = entriesSound(objects, false)
    if (top !== undefined) return top
    // Fan-out directories, packs, info and the commit graphs: every entry a file or directory, links inside.
    for (const e of entriesOf(objects)) {
      if (!e.isDirectory()) continue
      const problem = entriesSound(path.join(objects, e.name), false)
      if (problem !== undefined) return problem
    }
    const graphs = entriesSound(path.join(objects, "info", "commit-graphs"), false)
    if (graphs !== undefined) return graphs
    const alternatesFile = path.join(objects, "info", "alternates")
    const real = realpathOf(alternatesFile)
    if (real === undefined) return undefined
    if (!isInside(root, real)) return { reason: "store-outside", part: shown(alternatesFile) }
    if (depth >= maxAlternateDepth) return { reason: "store-outside", part: shown(alternatesFile) }
    // Read without blocking: a FIFO here once froze the event loop.
    const read = readRegularSync(real, { maxBytes: 1 << 20, root })
    if (read._tag === "NotAFile") return { reason: "not-a-file", part: shown(alternatesFile) }
    if (read._tag === "Outside") return { reason: "store-outside", part: shown(alternatesFile) }
    const text = read._tag === "Bytes" ? read.bytes.toString("utf8") : ""
    for (const raw of text.split("\n")) {
      const line = raw.trim()
      if (line === "" || line.startsWith("#")) continue
      // git unquotes C-style quoted lines; they are not read here, so they are refused.
      if (line.startsWith('"')) return { reason: "store-outside", part: shown(alternatesFile) }
      // A relative alternate is relative to the object directory holding the file.
      const realTarget = realpathOf(path.resolve(realObjects, line))
      if (realTarget === undefined) continue
      if (!isInside(root, realTarget)) return { reason: "store-outside", part: shown(alternatesFile) }
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
      const shown = (p: string) => {
        const rel = path.relative(repo.workTree, p)
        return rel.startsWith("..") ? path.relative(repo.root, p) : rel
      }
      const always = checkEveryCall(repo, shown)
      if (always !== undefined) {
        verified.delete(key)
        return always
      }
      if (seen !== undefined && seen.top === top && now - seen.at < rescanMillis) return undefined
      const problem = checkRepository(repo, shown)
      if (problem === undefined) {
        if (verified.size > 10_000) verified.clear()
        verified.set(key, { at: now, top })
      } else verified.delete(key)
      return problem
    }),
    (problem) =>
      problem === undefined
        ? Effect.void
        : Effect.fail(new NotARepository({ path: shownAs, reason: problem.reason, part: problem.part }))
  )
