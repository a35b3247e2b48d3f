/**
 * `git.switch` checks out a local branch (or creates one at HEAD and checks
 * it out, with `create`). Refused, naming the files, when changes to tracked
 * files or untracked files the branch has would be overwritten: nothing is
 * ever discarded (no `--force`, no `--discard-changes`). The files it
 * changes are kept as one checkpoint, so `self.tools.checkpoint.restore`
 * takes the switch back. L2: each call is confirmed; `dryRun` shows the
 * changes the switch would make to the working tree.
 *
 * @since 0.2.0
 */
import { Tool } from "@ugent/core"
import { Effect, Schema } from "effect"
import * as Workspace from "../Workspace.ts"
import { GitBackend } from "./GitBackend.ts"
import { GitWriteRefused, WriteFailure } from "./GitError.ts"
import { locate, repositoryOption } from "./internal/locate.ts"
import * as Results from "./internal/results.ts"
import { captured, exclusive, renderChanges, validBranchName } from "./internal/writing.ts"

/**
 * @category schemas
 * @since 0.2.0
 */
export const Input = Schema.Struct({
  repository: repositoryOption,
  branch: Schema.String.annotate({ description: "The local branch to switch to." }),
  create: Schema.optionalKey(
    Schema.Boolean.annotate({ description: "Create the branch at HEAD first (refused if it exists)." })
  ),
  dryRun: Schema.optionalKey(
    Schema.Boolean.annotate({ description: "Check and show what the switch would change; change nothing." })
  )
})

/**
 * @category models
 * @since 0.2.0
 */
export type Input = typeof Input.Type

/**
 * @category schemas
 * @since 0.2.0
 */
export const Output = Schema.Struct({
  branch: Schema.String,
  /** `git status` after the switch (before it, on a dry run). */
  status: Results.StatusOutput,
  /** The checkpoint of the files it changed (restore to it to go back), when the workspace keeps them. */
  checkpoint: Schema.optionalKey(Schema.String),
  dryRun: Schema.optionalKey(Schema.Literal(true)),
  diff: Schema.optionalKey(Schema.String)
})

/**
 * @category models
 * @since 0.2.0
 */
export type Output = typeof Output.Type

/**
 * Switches branches.
 *
 * @category tools
 * @since 0.2.0
 */
export const switchBranch = Tool.make({
  name: "git.switch",
  description:
    "Switch to a local branch (create: true makes it at HEAD first). Refused, naming the files, when local changes would be overwritten. A checkpoint (undo with self.tools.checkpoint.restore). Returns git status; dryRun shows what would change.",
  input: Input,
  output: Output,
  failure: WriteFailure,
  trust: 2,
  effects: { readsFs: true, writesFs: true, idempotent: false },
  run: (input) =>
    Effect.gen(function* () {
      if (!validBranchName(input.branch)) {
        return yield* new GitWriteRefused({ operation: "switch", reason: "invalid-branch-name", names: [input.branch] })
      }
      const ws = yield* Workspace.Workspace
      const located = yield* locate("git.switch", input.repository)
      const repo = located.repository
      const backend = yield* GitBackend
      return yield* exclusive(
        repo,
        Effect.gen(function* () {
          const before = yield* backend.status(repo, { limit: 100_000 })
          if (before.conflicted.length > 0) {
            return yield* new GitWriteRefused({ operation: "switch", reason: "conflicted", names: before.conflicted })
          }
          const tracked = [...new Set([...before.staged, ...before.unstaged].map((c) => c.path))].sort()
          if (tracked.length > 0) {
            return yield* new GitWriteRefused({ operation: "switch", reason: "changes-in-the-way", names: tracked })
          }
          const branches = yield* backend.writes.branches(repo)
          const create = input.create === true
          if (create && branches.includes(input.branch)) {
            return yield* new GitWriteRefused({ operation: "switch", reason: "branch-exists", names: [input.branch] })
          }
          if (!create && !branches.includes(input.branch)) {
            return yield* new GitWriteRefused({ operation: "switch", reason: "no-such-branch", names: [input.branch] })
          }
          if (create && before.head === null) {
            return yield* new GitWriteRefused({ operation: "switch", reason: "no-commits" })
          }
          const changes = create
            ? undefined
            : yield* backend.diff(repo, {
                base: "HEAD",
                compare: input.branch,
                staged: false,
                paths: [],
                ...(yield* located.diffOptions({}))
              })
          // An untracked file the branch has would be overwritten: refused, as git refuses it.
          const untracked = new Set(before.untracked)
          const inTheWay = (changes?.files ?? []).filter((f) => f.status !== "deleted" && untracked.has(f.path))
          if (inTheWay.length > 0) {
            return yield* new GitWriteRefused({
              operation: "switch",
              reason: "changes-in-the-way",
              names: inTheWay.map((f) => f.path)
            })
          }
          if (input.dryRun === true) {
            return {
              branch: input.branch,
              status: before,
              dryRun: true as const,
              diff: `Switch from ${before.branch ?? "a detached HEAD"} to ${input.branch}${create ? " (created at HEAD)" : ""}\n${changes === undefined ? "" : renderChanges(changes)}`
            }
          }
          if (create) yield* backend.writes.branch(repo, input.branch, before.head!)
          const [, checkpoint] = yield* captured(ws, backend.writes.switchTo(repo, input.branch))
          const after = yield* backend.status(repo, { limit: 1000 })
          return { branch: input.branch, status: after, ...(checkpoint === undefined ? {} : { checkpoint }) }
        })
      )
    })
})
