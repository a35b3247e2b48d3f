/**
 * `git.add` stages files for the next commit: new and changed files, and
 * removals (a directory stages what is under it; `.` the whole repository).
 * Each path is checked by the workspace first (inside the repository, no
 * link leading out); a path whose name holds a secret (the names
 * `file.read` refuses) is never staged, and `git.commit` refuses any that
 * reached the index another way. Ignored files are refused, never forced.
 * L2: each call is confirmed, and `dryRun` shows the changes it would stage.
 *
 * @since 0.2.0
 */
import { Tool } from "@ugent/core"
import { Effect, Schema } from "effect"
import { GitBackend } from "./GitBackend.ts"
import { GitWriteRefused, WriteFailure } from "./GitError.ts"
import { locate, repositoryOption } from "./internal/locate.ts"
import * as Results from "./internal/results.ts"
import { exclusive, renderChanges } from "./internal/writing.ts"

/**
 * @category schemas
 * @since 0.2.0
 */
export const Input = Schema.Struct({
  repository: repositoryOption,
  paths: Schema.Array(Schema.String).check(Schema.isMinLength(1)).annotate({
    description:
      'Files or directories to stage, relative to the workspace root ("." for everything). Removed files are staged as removals.'
  }),
  dryRun: Schema.optionalKey(
    Schema.Boolean.annotate({ description: "Show the changes that would be staged; stage nothing." })
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
  /** `git status` after staging (before it, on a dry run). */
  status: Results.StatusOutput,
  dryRun: Schema.optionalKey(Schema.Literal(true)),
  /** On a dry run: the unstaged changes of those paths, as a unified diff. */
  diff: Schema.optionalKey(Schema.String)
})

/**
 * @category models
 * @since 0.2.0
 */
export type Output = typeof Output.Type

/**
 * Stages files.
 *
 * @category tools
 * @since 0.2.0
 */
export const add = Tool.make({
  name: "git.add",
  description:
    'Stage files for the next commit (git add); a directory stages what is under it, "." everything. Secrets (.env, keys) and ignored files are refused. Returns git status; dryRun shows what would be staged.',
  input: Input,
  output: Output,
  failure: WriteFailure,
  trust: 2,
  effects: { readsFs: true, writesFs: true, idempotent: true },
  run: (input) =>
    Effect.gen(function* () {
      const located = yield* locate("git.add", input.repository)
      const repo = located.repository
      const backend = yield* GitBackend
      const paths = yield* Effect.forEach(input.paths, (p) =>
        p === "." || p === "./" ? Effect.succeed("") : located.toRepoPath(p)
      )
      const limit = { limit: 100_000 }
      const before = yield* backend.status(repo, limit)
      // A secret is never staged: named, or found under a directory given (git would take it with the rest).
      const under = (file: string) => paths.some((p) => p === "" || file === p || file.startsWith(`${p}/`))
      const changed = [...before.unstaged.map((c) => c.path), ...before.untracked]
      const secrets = [
        ...new Set([...paths.filter((p) => p !== ""), ...changed.filter(under)].filter((p) => located.redact(p)))
      ].sort()
      if (secrets.length > 0) {
        return yield* new GitWriteRefused({ operation: "add", reason: "secret-staged", names: secrets })
      }
      if (input.dryRun === true) {
        const changes = yield* backend.diff(repo, {
          base: undefined,
          compare: undefined,
          staged: false,
          paths: paths.filter((p) => p !== ""),
          ...(yield* located.diffOptions({}))
        })
        return { status: before, dryRun: true as const, diff: renderChanges(changes) }
      }
      return yield* exclusive(
        repo,
        Effect.gen(function* () {
          yield* backend.writes.add(
            repo,
            paths.map((p) => (p === "" ? "." : p))
          )
          return { status: yield* backend.status(repo, limit) }
        })
      )
    })
})
