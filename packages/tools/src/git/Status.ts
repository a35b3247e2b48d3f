/**
 * `git.status` reports the state of the working tree: the current branch
 * (or the commit of a detached HEAD), whether anything changed, and the
 * staged, unstaged, untracked and conflicted files, each list sorted by path.
 * A repository with no commits yet is reported as such, not as an error.
 *
 * @since 0.1.0
 */
import { Tool, ToolError } from "@ugent/core"
import { Effect, Schema } from "effect"
import * as Workspace from "../Workspace.ts"
import { GitBackend } from "./GitBackend.ts"
import { GitFailed, NotARepository } from "./GitError.ts"
import { locate, repositoryOption } from "./internal/locate.ts"
import * as Results from "./internal/results.ts"

/**
 * A changed file: staged (index against HEAD) or unstaged (working tree
 * against the index). Renames are detected among staged changes, as git does.
 *
 * @category schemas
 * @since 0.1.0
 */
export const Change = Results.Change

/**
 * @category models
 * @since 0.1.0
 */
export type Change = typeof Change.Type

/**
 * The default number of files listed over all lists.
 *
 * @category constants
 * @since 0.1.0
 */
export const defaultLimit = 1000

/**
 * @category schemas
 * @since 0.1.0
 */
export const Input = Schema.Struct({
  repository: repositoryOption,
  limit: Schema.optionalKey(
    Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 100_000 })).annotate({
      description: "Most files listed over all lists (default 1000); totals count them all."
    })
  )
})

/**
 * @category models
 * @since 0.1.0
 */
export type Input = typeof Input.Type

/**
 * @category schemas
 * @since 0.1.0
 */
export const Output = Results.StatusOutput

/**
 * @category models
 * @since 0.1.0
 */
export type Output = typeof Output.Type

/**
 * Everything `git.status` may fail with.
 *
 * @category schemas
 * @since 0.1.0
 */
export const Failure = Schema.Union([ToolError.InvalidInput, NotARepository, GitFailed, ...Workspace.pathErrors])

/**
 * Reports the state of the working tree.
 *
 * **Example** (A new repository with one file)
 * ```ts
 * import { Trust } from "@ugent/core"
 * import { GitBackend, GitStatus, Workspace } from "@ugent/tools"
 * import { Effect } from "effect"
 * import * as git from "isomorphic-git"
 * import * as fs from "node:fs"
 * import { tmpdir } from "node:os"
 * import { join } from "node:path"
 * const root = fs.mkdtempSync(join(tmpdir(), "status-"))
 * await git.init({ fs, dir: root, defaultBranch: "main" })
 * fs.writeFileSync(join(root, "notes.md"), "# notes\n")
 * const out = await Effect.runPromise(
 *   GitStatus.status.run({}).pipe(Effect.provide([Workspace.layer({ root }), GitBackend.layerIsomorphic, Trust.grant(0)]))
 * )
 * console.log(out.branch, out.noCommits, out.clean, out.untracked)
 * // => main true false [ 'notes.md' ]
 * ```
 *
 * @category tools
 * @since 0.1.0
 */
export const status = Tool.make({
  name: "git.status",
  description:
    "Show the repository's state: current branch (or detached HEAD commit), whether the working tree is clean, and staged, unstaged, untracked and conflicted files with their status (added, modified, deleted, renamed, typechange).",
  input: Input,
  output: Output,
  failure: Failure,
  trust: 0,
  effects: { readsFs: true, idempotent: true },
  run: (input) =>
    Effect.gen(function* () {
      const located = yield* locate("git.status", input.repository)
      const limit = yield* located.integer("limit", input.limit, defaultLimit, 0, 100_000)
      const backend = yield* GitBackend
      return yield* backend.status(located.repository, { limit })
    })
})
