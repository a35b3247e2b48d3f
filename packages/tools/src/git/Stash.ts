/**
 * `git.stash` puts uncommitted changes to tracked files aside (`push`),
 * brings the newest back (`pop`), or lists what is put aside (`list`).
 * Untracked files are never stashed or removed; nothing is dropped or
 * cleared. The working-tree files a push or pop changes are kept as one
 * checkpoint, so `self.tools.checkpoint.restore` takes it back. L2: each
 * call is confirmed.
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
import { captured, exclusive } from "./internal/writing.ts"

/**
 * @category schemas
 * @since 0.2.0
 */
export const Input = Schema.Struct({
  repository: repositoryOption,
  action: Schema.Literals(["push", "pop", "list"]).annotate({
    description:
      "push: put changes to tracked files aside (the working tree then matches HEAD); pop: bring the newest entry back and drop it; list: show the entries."
  }),
  message: Schema.optionalKey(Schema.String.annotate({ description: "For push: a note to find the entry by." }))
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
  action: Schema.Literals(["push", "pop", "list"]),
  /** The entries after the action, newest first (`index` 0 is `stash@{0}`). */
  entries: Schema.Array(Schema.Struct({ index: Schema.Int, message: Schema.String })),
  status: Results.StatusOutput,
  /** The checkpoint of the files it changed, when the workspace keeps them. */
  checkpoint: Schema.optionalKey(Schema.String)
})

/**
 * @category models
 * @since 0.2.0
 */
export type Output = typeof Output.Type

/**
 * Puts changes aside and brings them back.
 *
 * @category tools
 * @since 0.2.0
 */
export const stash = Tool.make({
  name: "git.stash",
  description:
    'Put changes to tracked files aside ("push"), bring the newest back ("pop"), or "list". Nothing is dropped. Push and pop are checkpoints (self.tools.checkpoint.restore undoes them). Returns the entries and git status.',
  input: Input,
  output: Output,
  failure: WriteFailure,
  trust: 2,
  effects: { readsFs: true, writesFs: true, idempotent: false },
  run: (input) =>
    Effect.gen(function* () {
      const ws = yield* Workspace.Workspace
      const located = yield* locate("git.stash", input.repository)
      const repo = located.repository
      const backend = yield* GitBackend
      const limit = { limit: 1000 }
      return yield* exclusive(
        repo,
        Effect.gen(function* () {
          const before = yield* backend.status(repo, { limit: 100_000 })
          const entries = yield* backend.writes.stashList(repo)
          if (input.action === "list") return { action: "list" as const, entries, status: before }
          if (before.conflicted.length > 0) {
            return yield* new GitWriteRefused({ operation: "stash", reason: "conflicted", names: before.conflicted })
          }
          const tracked = [...new Set([...before.staged, ...before.unstaged].map((c) => c.path))].sort()
          let checkpoint: string | undefined
          if (input.action === "push") {
            if (before.head === null) return yield* new GitWriteRefused({ operation: "stash", reason: "no-commits" })
            if (tracked.length === 0)
              return yield* new GitWriteRefused({ operation: "stash", reason: "nothing-to-stash" })
            ;[, checkpoint] = yield* captured(ws, backend.writes.stashPush(repo, input.message))
          } else {
            if (entries.length === 0) return yield* new GitWriteRefused({ operation: "stash", reason: "no-stash" })
            if (tracked.length > 0) {
              return yield* new GitWriteRefused({ operation: "stash", reason: "changes-in-the-way", names: tracked })
            }
            ;[, checkpoint] = yield* captured(ws, backend.writes.stashPop(repo))
          }
          return {
            action: input.action,
            entries: yield* backend.writes.stashList(repo),
            status: yield* backend.status(repo, limit),
            ...(checkpoint === undefined ? {} : { checkpoint })
          }
        })
      )
    })
})
