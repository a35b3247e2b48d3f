/**
 * `git.log` lists commits, newest first (git's default order: by commit
 * date, walking parents), optionally only those that touched a path, in a
 * time window, by an author or with a word in their message. Each commit
 * carries its author, date (ISO 8601), message, the number of files it
 * changed and its line statistics (against its first parent), and, on
 * request, its diff.
 *
 * @since 0.1.0
 */
import { Tool, ToolError } from "@ugent/core"
import { Effect, Schema } from "effect"
import { GitBackend } from "./GitBackend.ts"
import { ToolFailure } from "./GitError.ts"
import { diffShape, locate, repositoryOption } from "./internal/locate.ts"
import * as Results from "./internal/results.ts"
import * as When from "./internal/when.ts"

/**
 * A commit. `date` is the author date and `committerDate` the commit date,
 * both ISO 8601 with the recorded offset; names and emails go through the
 * repository's `.mailmap`. `subject` is the first paragraph of the message on
 * one line; `message` is the whole message. `filesChanged` and `stats` compare
 * the commit with its first parent (a root commit with the empty tree), so a
 * merge reports what it brought in.
 *
 * @category schemas
 * @since 0.1.0
 */
export const Commit = Results.Commit

/**
 * @category models
 * @since 0.1.0
 */
export type Commit = typeof Commit.Type

/**
 * The most commits a log may return.
 *
 * @category constants
 * @since 0.1.0
 */
export const maxLimit = 100

/**
 * The number of commits a log returns by default.
 *
 * @category constants
 * @since 0.1.0
 */
export const defaultLimit = 20

/**
 * @category schemas
 * @since 0.1.0
 */
export const Input = Schema.Struct({
  repository: repositoryOption,
  rev: Schema.optionalKey(Schema.String.annotate({ description: "Start from this revision (default HEAD)." })),
  path: Schema.optionalKey(
    Schema.String.annotate({
      description: "Only commits that changed this file or directory (relative to the workspace root)."
    })
  ),
  limit: Schema.optionalKey(
    Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: maxLimit })).annotate({
      description: "Most commits to return (default 20, at most 100)."
    })
  ),
  since: Schema.optionalKey(
    Schema.String.annotate({
      description:
        'Only commits at or after this date: ISO 8601 ("2024-05-01") or relative ("1 week ago", "yesterday").'
    })
  ),
  until: Schema.optionalKey(
    Schema.String.annotate({
      description: 'Only commits made at or before this date: ISO 8601, or relative ("2 days ago").'
    })
  ),
  author: Schema.optionalKey(
    Schema.String.annotate({
      description: "Only commits whose author name or email contains this text (ASCII case ignored)."
    })
  ),
  grep: Schema.optionalKey(
    Schema.String.annotate({
      description: "Only commits whose message contains this text on one line (ASCII case ignored)."
    })
  ),
  includeDiff: Schema.optionalKey(
    Schema.Boolean.annotate({ description: "Include each commit's diff (against its first parent)." })
  ),
  ...diffShape
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
export const Output = Results.LogOutput

/**
 * @category models
 * @since 0.1.0
 */
export type Output = typeof Output.Type

/**
 * Everything `git.log` may fail with.
 *
 * @category schemas
 * @since 0.1.0
 */
export const Failure = ToolFailure

const dateOption = (tool: string, name: string, value: string | undefined) =>
  value === undefined
    ? Effect.succeed(undefined)
    : Effect.flatMap(When.seconds(value), (at) =>
        at === undefined
          ? Effect.fail(
              new ToolError.InvalidInput({
                tool,
                issues: `${name} must be an ISO 8601 date such as "2024-05-01" or "2024-05-01T12:00:00Z", or a relative one such as "1 week ago", "3 days ago" or "yesterday" (got ${JSON.stringify(value)})`
              })
            )
          : Effect.succeed(at)
      )

const textOption = (tool: string, name: string, value: string | undefined) =>
  value === undefined
    ? Effect.succeed(undefined)
    : value === "" || value.includes("\u0000") || value.includes("\n") || value.includes("\r")
      ? Effect.fail(
          new ToolError.InvalidInput({
            tool,
            issues: `${name} must be non-empty text on one line (got ${JSON.stringify(value)})`
          })
        )
      : Effect.succeed(value)

/**
 * Lists commits.
 *
 * **Example** (The last commits that touched a file)
 * ```ts
 * import { Trust } from "@ugent/core"
 * import { GitBackend, GitLog, Workspace } from "@ugent/tools"
 * import { Effect } from "effect"
 * import * as git from "isomorphic-git"
 * import * as fs from "node:fs"
 * import { tmpdir } from "node:os"
 * import { join } from "node:path"
 * const root = fs.mkdtempSync(join(tmpdir(), "log-"))
 * await git.init({ fs, dir: root, defaultBranch: "main" })
 * const author = { name: "Ada", email: "ada@example.com", timezoneOffset: 0 }
 * for (const [i, file] of ["a.txt", "b.txt", "a.txt"].entries()) {
 *   fs.writeFileSync(join(root, file), `version ${i}\n`)
 *   await git.add({ fs, dir: root, filepath: file })
 *   await git.commit({ fs, dir: root, message: `change ${i}`, author: { ...author, timestamp: 1_700_000_000 + i } })
 * }
 * const out = await Effect.runPromise(
 *   GitLog.log.run({ path: "a.txt" }).pipe(Effect.provide([Workspace.layer({ root }), GitBackend.layerIsomorphic, Trust.grant(0)]))
 * )
 * console.log(out.commits.map((c) => `${c.subject} (${c.date})`))
 * // => [ 'change 2 (2023-11-14T22:13:22+00:00)', 'change 0 (2023-11-14T22:13:20+00:00)' ]
 * ```
 *
 * @category tools
 * @since 0.1.0
 */
export const log = Tool.make({
  name: "git.log",
  description:
    "List commits, newest first: hash, author, date, message, files changed and statistics. Filter by path, since/until, author or message text; limit defaults to 20; includeDiff adds each diff.",
  input: Input,
  output: Output,
  failure: Failure,
  trust: 0,
  effects: { readsFs: true, idempotent: true },
  run: (input) =>
    Effect.gen(function* () {
      const located = yield* locate("git.log", input.repository)
      const limit = yield* located.integer("limit", input.limit, defaultLimit, 1, maxLimit)
      const since = yield* dateOption("git.log", "since", input.since)
      const until = yield* dateOption("git.log", "until", input.until)
      const author = yield* textOption("git.log", "author", input.author)
      const grep = yield* textOption("git.log", "grep", input.grep)
      const path = input.path === undefined ? undefined : yield* located.toRepoPath(input.path)
      const diff = yield* located.diffOptions(input)
      const backend = yield* GitBackend
      return yield* backend.log(located.repository, {
        rev: input.rev,
        path: path === "" ? undefined : path,
        limit,
        since,
        until,
        author,
        grep,
        includeDiff: input.includeDiff === true,
        diff
      })
    })
})
