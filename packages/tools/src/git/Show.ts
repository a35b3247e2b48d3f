/**
 * `git.show` shows one commit, named by hash or ref: its metadata (author,
 * dates, message, parents, statistics) and, by default, its diff against its
 * first parent (a root commit against the empty tree; a merge shows what it
 * brought in on top of its first parent).
 *
 * @since 0.1.0
 */
import { Tool } from "@ugent/core"
import { Effect, Schema } from "effect"
import { GitBackend } from "./GitBackend.ts"
import { ToolFailure } from "./GitError.ts"
import { diffShape, locate, repositoryOption } from "./internal/locate.ts"
import * as Results from "./internal/results.ts"

/**
 * @category schemas
 * @since 0.1.0
 */
export const Input = Schema.Struct({
  repository: repositoryOption,
  rev: Schema.optionalKey(
    Schema.String.annotate({ description: "The commit: a hash, branch, tag or HEAD~N (default HEAD)." })
  ),
  includeDiff: Schema.optionalKey(
    Schema.Boolean.annotate({ description: "Include the commit's diff (default true)." })
  ),
  paths: Schema.optionalKey(
    Schema.Array(Schema.String).annotate({ description: "Limit the diff to these files or directories." })
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
export const Output = Results.ShowOutput

/**
 * @category models
 * @since 0.1.0
 */
export type Output = typeof Output.Type

/**
 * Everything `git.show` may fail with.
 *
 * @category schemas
 * @since 0.1.0
 */
export const Failure = ToolFailure

/**
 * Shows a commit and its diff.
 *
 * **Example** (The last commit)
 * ```ts
 * import { Trust } from "@ugent/core"
 * import { GitBackend, GitShow, Workspace } from "@ugent/tools"
 * import { Effect } from "effect"
 * import * as git from "isomorphic-git"
 * import * as fs from "node:fs"
 * import { tmpdir } from "node:os"
 * import { join } from "node:path"
 * const root = fs.mkdtempSync(join(tmpdir(), "show-"))
 * await git.init({ fs, dir: root, defaultBranch: "main" })
 * fs.writeFileSync(join(root, "hello.txt"), "hello\n")
 * await git.add({ fs, dir: root, filepath: "hello.txt" })
 * await git.commit({ fs, dir: root, message: "Say hello\n\nThe first file.\n", author: { name: "Ada", email: "ada@example.com", timestamp: 0, timezoneOffset: 0 } })
 * const out = await Effect.runPromise(
 *   GitShow.show.run({}).pipe(Effect.provide([Workspace.layer({ root }), GitBackend.layerIsomorphic, Trust.grant(0)]))
 * )
 * console.log(out.commit.subject, out.diff?.files.map((f) => `${f.status} ${f.path} +${f.additions}`))
 * // => Say hello [ 'added hello.txt +1' ]
 * ```
 *
 * @category tools
 * @since 0.1.0
 */
export const show = Tool.make({
  name: "git.show",
  description:
    "Show one commit by hash or ref (default HEAD): author, dates, message, parents, statistics and, unless includeDiff is false, its diff against its first parent with typed hunks (capped by maxDiffSize).",
  input: Input,
  output: Output,
  failure: Failure,
  trust: 0,
  effects: { readsFs: true, idempotent: true },
  run: (input) =>
    Effect.gen(function* () {
      const located = yield* locate("git.show", input.repository)
      const paths = yield* Effect.forEach(input.paths ?? [], (p) => located.toRepoPath(p))
      const shape = yield* located.diffOptions(input)
      const backend = yield* GitBackend
      return yield* backend.show(located.repository, {
        ...shape,
        rev: input.rev ?? "HEAD",
        includeDiff: input.includeDiff !== false,
        paths: paths.filter((p) => p !== "")
      })
    })
})
