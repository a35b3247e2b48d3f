/**
 * `git.branch` creates a branch at HEAD (or at a given revision) and lists
 * the local branches. It never moves, renames, deletes or overwrites a
 * branch (no `--force`); a name git would not take, or one that could read
 * as an option, is refused before git sees it. L2: each call is confirmed.
 *
 * @since 0.2.0
 */
import { Tool } from "@ugent/core"
import { Effect, Schema } from "effect"
import { GitBackend } from "./GitBackend.ts"
import { GitWriteRefused, UnknownRevision, WriteFailure } from "./GitError.ts"
import { locate, repositoryOption } from "./internal/locate.ts"
import { exclusive, validBranchName } from "./internal/writing.ts"

/**
 * @category schemas
 * @since 0.2.0
 */
export const Input = Schema.Struct({
  repository: repositoryOption,
  name: Schema.String.annotate({ description: 'The new branch\'s name, such as "feature/login".' }),
  from: Schema.optionalKey(
    Schema.String.annotate({
      description: "Where it starts: a branch, tag or commit hash (default HEAD). Ranges and options are refused."
    })
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
  /** The commit it points to. */
  at: Schema.String,
  /** The local branches after it was made, sorted. */
  branches: Schema.Array(Schema.String)
})

/**
 * @category models
 * @since 0.2.0
 */
export type Output = typeof Output.Type

/**
 * Creates a branch.
 *
 * @category tools
 * @since 0.2.0
 */
export const branch = Tool.make({
  name: "git.branch",
  description:
    "Create a branch at HEAD (or at from), without switching to it (use world.tools.git.switch for that). Never moves, deletes or overwrites a branch. Returns the branch, its commit, and every local branch.",
  input: Input,
  output: Output,
  failure: WriteFailure,
  trust: 2,
  effects: { readsFs: true, writesFs: true, idempotent: false },
  run: (input) =>
    Effect.gen(function* () {
      if (!validBranchName(input.name)) {
        return yield* new GitWriteRefused({ operation: "branch", reason: "invalid-branch-name", names: [input.name] })
      }
      const located = yield* locate("git.branch", input.repository)
      const repo = located.repository
      const backend = yield* GitBackend
      return yield* exclusive(
        repo,
        Effect.gen(function* () {
          const existing = yield* backend.writes.branches(repo)
          if (existing.includes(input.name)) {
            return yield* new GitWriteRefused({ operation: "branch", reason: "branch-exists", names: [input.name] })
          }
          const rev = input.from ?? "HEAD"
          const found = yield* backend.log(repo, {
            rev,
            path: undefined,
            limit: 1,
            since: undefined,
            until: undefined,
            author: undefined,
            grep: undefined,
            includeDiff: false,
            diff: { contextLines: 0, ignoreWhitespace: false, maxDiffSize: 0, maxFiles: 0, redact: located.redact }
          })
          const at = found.commits[0]?.hash
          if (at === undefined) return yield* new UnknownRevision({ revision: rev, reason: "no-commits" })
          yield* backend.writes.branch(repo, input.name, at)
          return { branch: input.name, at, branches: yield* backend.writes.branches(repo) }
        })
      )
    })
})
