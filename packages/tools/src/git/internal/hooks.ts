/**
 * Which hooks a git write runs, and whether the tools may run them. Hooks are
 * never skipped (no `--no-verify`). They run only from the repository's git
 * directory (`.git/hooks`, or a `core.hooksPath` inside `.git`), which no
 * file tool writes and the shell's sandbox keeps read-only: a hook there is
 * the person's. A hook git would run from elsewhere (`core.hooksPath` naming
 * a folder of the working tree, or a hook that is a link out of `.git`)
 * could have been written by the agent itself, so the write is refused,
 * naming the hooks, rather than run or skipped.
 *
 * @internal
 */
import { accessSync, constants, realpathSync, statSync } from "node:fs"
import { homedir } from "node:os"
import * as path from "node:path"
import { isInside } from "../../internal/workspace/paths.ts"
import { GitWriteRefused } from "../GitError.ts"
import type { Repository } from "./model.ts"

/** The hooks each write makes git run. */
export const hooksOf = {
  add: ["post-index-change"],
  commit: [
    "pre-commit",
    "prepare-commit-msg",
    "commit-msg",
    "post-commit",
    "post-rewrite",
    "reference-transaction",
    "post-index-change"
  ],
  branch: ["reference-transaction"],
  switch: ["post-checkout", "reference-transaction", "post-index-change"],
  stash: ["post-checkout", "reference-transaction", "post-index-change"]
} as const

export type Operation = keyof typeof hooksOf

/** The folder git takes hooks from: `core.hooksPath` (relative to the working tree, `~` the home) or `<common>/hooks`. */
export const hooksDir = (repo: Repository, hooksPath: string | undefined): string =>
  hooksPath === undefined || hooksPath === ""
    ? path.join(repo.commonDir, "hooks")
    : hooksPath.startsWith("~/")
      ? path.join(homedir(), hooksPath.slice(2))
      : path.resolve(repo.workTree, hooksPath)

const executable = (file: string): boolean => {
  try {
    if (!statSync(file).isFile()) return false
    accessSync(file, constants.X_OK)
    return true
  } catch {
    return false
  }
}

const real = (p: string): string | undefined => {
  try {
    return realpathSync(p)
  } catch {
    return undefined
  }
}

/**
 * The hooks folder to hand git (`undefined`: none of the operation's hooks
 * is there, so git runs none), or the refusal naming the hooks git would run
 * from outside the git directory.
 */
export const planHooks = (
  repo: Repository,
  hooksPath: string | undefined,
  operation: Operation
): { readonly dir: string | undefined; readonly present: ReadonlyArray<string> } | GitWriteRefused => {
  const dir = hooksDir(repo, hooksPath)
  const present = hooksOf[operation].filter((name) => executable(path.join(dir, name)))
  if (present.length === 0) return { dir: undefined, present }
  const inGit = (p: string | undefined) => p !== undefined && (isInside(repo.gitDir, p) || isInside(repo.commonDir, p))
  const outside = present.filter((name) => !inGit(real(path.join(dir, name))))
  if (outside.length > 0 || !inGit(real(dir))) {
    return new GitWriteRefused({
      operation,
      reason: "hooks-outside",
      names: present.map((n) => path.relative(repo.workTree, path.join(dir, n)))
    })
  }
  return { dir: real(dir)!, present }
}
