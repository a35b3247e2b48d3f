/**
 * Finding the git directory of a working tree without searching upwards:
 * `<dir>/.git` must be a directory, or a `gitdir:` file (linked worktrees,
 * submodules). Both the git directory and its common directory are returned
 * as real paths, so the caller can check them against the workspace root.
 *
 * @internal
 */
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import { Effect } from "effect"
import type { Repository } from "../GitBackend.ts"
import { NotARepository } from "../GitError.ts"

const attempt = <A>(f: () => Promise<A>) =>
  Effect.tryPromise({ try: f, catch: () => "failed" as const }).pipe(Effect.option)

export const openRepository = (dir: string): Effect.Effect<Repository, NotARepository> =>
  Effect.gen(function* () {
    const shown = dir
    const workTree = yield* attempt(() => fsp.realpath(dir))
    if (workTree._tag === "None") return yield* new NotARepository({ path: shown, reason: "no-git-dir" })
    const dotGit = path.join(workTree.value, ".git")
    const st = yield* attempt(() => fsp.lstat(dotGit))
    if (st._tag === "None") return yield* new NotARepository({ path: shown, reason: "no-git-dir" })
    let gitDirPath: string
    if (st.value.isFile()) {
      const content = yield* attempt(() => fsp.readFile(dotGit, "utf8"))
      const m = content._tag === "Some" ? /^gitdir: (.+)$/m.exec(content.value) : null
      if (m === null) return yield* new NotARepository({ path: shown, reason: "unreadable" })
      gitDirPath = path.resolve(workTree.value, m[1]!.trim())
    } else gitDirPath = dotGit
    const gitDir = yield* attempt(() => fsp.realpath(gitDirPath))
    if (gitDir._tag === "None") return yield* new NotARepository({ path: shown, reason: "unreadable" })
    const common = yield* attempt(() => fsp.readFile(path.join(gitDir.value, "commondir"), "utf8"))
    const commonPath = common._tag === "Some" ? path.resolve(gitDir.value, common.value.trim()) : gitDir.value
    const commonDir = yield* attempt(() => fsp.realpath(commonPath))
    if (commonDir._tag === "None") return yield* new NotARepository({ path: shown, reason: "unreadable" })
    const head = yield* attempt(() => fsp.stat(path.join(gitDir.value, "HEAD")))
    const objects = yield* attempt(() => fsp.stat(path.join(commonDir.value, "objects")))
    if (head._tag === "None" || objects._tag === "None" || !objects.value.isDirectory()) {
      return yield* new NotARepository({ path: shown, reason: "unreadable" })
    }
    return { workTree: workTree.value, gitDir: gitDir.value, commonDir: commonDir.value }
  })
