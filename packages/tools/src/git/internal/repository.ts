/**
 * Finding the git directory of a working tree without searching upwards:
 * `<dir>/.git` must be a directory, or a `gitdir:` file (linked worktrees,
 * submodules). Every step is checked against the jail (the workspace root,
 * or the working tree itself when no root is given) before it is read: the
 * `.git` entry, the git directory, its `commondir` file and the common
 * directory must all lie inside, links resolved, so a `.git` file or link
 * pointing elsewhere is refused without reading what it points to. Files are
 * read without blocking (threat 45): a FIFO planted as `commondir` is
 * refused (`not-a-file`) instead of freezing the thread.
 *
 * @internal
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { Effect, Option } from "effect"
import { isInside } from "../../internal/workspace/paths.ts"
import { readRegularSync } from "../../internal/workspace/regular.ts"
import type { Repository } from "./model.ts"
import { NotARepository } from "../GitError.ts"

// Every call opens its repository, so the checks use the synchronous calls: a dozen of them cost well under
// a millisecond, where each asynchronous one would pay a trip through the thread pool (2 to 3 ms in all).
const attempt = <A>(f: () => A): Option.Option<A> => {
  try {
    return Option.some(f())
  } catch {
    return Option.none()
  }
}

/** A small file (a `.git` file, `commondir`), read without blocking; a FIFO or device there is `NotAFile`. */
const head = (file: string, jail: string) => readRegularSync(file, { maxBytes: 4096, root: jail })

export const openRepository = (dir: string, root?: string): Effect.Effect<Repository, NotARepository> =>
  Effect.gen(function* () {
    const shown = dir
    const outside = () => new NotARepository({ path: shown, reason: "git-dir-outside" })
    const workTree = attempt(() => fs.realpathSync(dir))
    if (workTree._tag === "None") return yield* new NotARepository({ path: shown, reason: "no-git-dir" })
    const jail = root ?? workTree.value
    /** The real path of `p`, which must lie inside the jail. */
    const inside = (p: string) =>
      Effect.gen(function* () {
        const real = attempt(() => fs.realpathSync(p))
        if (real._tag === "None") return yield* new NotARepository({ path: shown, reason: "unreadable" })
        if (!isInside(jail, real.value)) return yield* outside()
        return real.value
      })
    const dotGit = path.join(workTree.value, ".git")
    const st = attempt(() => fs.lstatSync(dotGit))
    if (st._tag === "None") return yield* new NotARepository({ path: shown, reason: "no-git-dir" })
    const realDotGit = yield* inside(dotGit)
    const kind = attempt(() => fs.statSync(realDotGit))
    let gitDirPath: string
    if (kind._tag === "Some" && kind.value.isFile()) {
      const content = head(realDotGit, jail)
      if (content._tag === "NotAFile")
        return yield* new NotARepository({ path: shown, reason: "not-a-file", part: ".git" })
      const m = content._tag === "Bytes" ? /^gitdir: (.+)$/m.exec(content.bytes.toString("utf8")) : null
      if (m === null) return yield* new NotARepository({ path: shown, reason: "unreadable" })
      gitDirPath = path.resolve(workTree.value, m[1]!.trim())
    } else gitDirPath = realDotGit
    const gitDir = yield* inside(gitDirPath)
    const commondirFile = path.join(gitDir, "commondir")
    const hasCommondir = attempt(() => fs.lstatSync(commondirFile))
    let commonDir = gitDir
    if (hasCommondir._tag === "Some") {
      const common = head(yield* inside(commondirFile), jail)
      if (common._tag === "NotAFile") {
        return yield* new NotARepository({
          path: shown,
          reason: "not-a-file",
          part: path.relative(workTree.value, commondirFile)
        })
      }
      if (common._tag !== "Bytes") return yield* new NotARepository({ path: shown, reason: "unreadable" })
      commonDir = yield* inside(path.resolve(gitDir, common.bytes.toString("utf8").trim()))
    }
    const headFile = attempt(() => fs.statSync(path.join(gitDir, "HEAD")))
    const objects = attempt(() => fs.statSync(path.join(commonDir, "objects")))
    if (headFile._tag === "None" || objects._tag === "None" || !objects.value.isDirectory()) {
      return yield* new NotARepository({ path: shown, reason: "unreadable" })
    }
    return { workTree: workTree.value, gitDir, commonDir, root: jail }
  })
