/**
 * `git.diff` compares two states of the repository (by default the last
 * commit and the working tree) and returns the changed files with their
 * status, typed hunks (context, added and deleted lines with their old and
 * new line numbers), a binary flag, and per-file and total statistics. The
 * hunks are capped by `maxDiffSize`; the statistics always cover every file.
 *
 * @since 0.1.0
 */
import { Tool, ToolError } from "@ugent/core"
import { Effect, Schema } from "effect"
import { GitBackend } from "./GitBackend.ts"
import { ToolFailure } from "./GitError.ts"
import { diffShape, locate, repositoryOption } from "./internal/locate.ts"
import * as Results from "./internal/results.ts"

/**
 * How a file changed.
 *
 * @category schemas
 * @since 0.1.0
 */
export const FileStatus = Results.FileStatus

/**
 * @category models
 * @since 0.1.0
 */
export type FileStatus = typeof FileStatus.Type

/**
 * One line of a hunk. `oldLine` is set for context and deleted lines,
 * `newLine` for context and added lines; `noNewlineAtEnd` marks the last line
 * of a file that does not end with a line feed.
 *
 * @category schemas
 * @since 0.1.0
 */
export const Line = Results.Line

/**
 * @category models
 * @since 0.1.0
 */
export type Line = typeof Line.Type

/**
 * A hunk, with the ranges of its `@@ -oldStart,oldLines +newStart,newLines @@` header.
 *
 * @category schemas
 * @since 0.1.0
 */
export const Hunk = Results.Hunk

/**
 * @category models
 * @since 0.1.0
 */
export type Hunk = typeof Hunk.Type

/**
 * One changed file. `oldPath` is set for renames; `oldMode`/`newMode` when
 * the mode changed (or the file was added or deleted). A binary file has no
 * hunks and counts no lines. `truncated` means some of its hunks were left
 * out to respect `maxDiffSize`; `redacted` means the workspace policy blocks
 * its name (secrets, keys), so its content is never shown.
 *
 * @category schemas
 * @since 0.1.0
 */
export const FileDiff = Results.FileDiff

/**
 * @category models
 * @since 0.1.0
 */
export type FileDiff = typeof FileDiff.Type

/**
 * Totals over every changed file, including the files left out by `maxFiles`.
 *
 * @category schemas
 * @since 0.1.0
 */
export const Stats = Results.Stats

/**
 * @category models
 * @since 0.1.0
 */
export type Stats = typeof Stats.Type

/**
 * The files of a diff and its truncation metadata.
 *
 * @category schemas
 * @since 0.1.0
 */
export const Changes = Results.Changes

/**
 * @category models
 * @since 0.1.0
 */
export type Changes = typeof Changes.Type

/**
 * @category schemas
 * @since 0.1.0
 */
export const Input = Schema.Struct({
  repository: repositoryOption,
  base: Schema.optionalKey(
    Schema.String.annotate({
      description: "Revision to compare from (default HEAD; the empty tree before the first commit)."
    })
  ),
  compare: Schema.optionalKey(
    Schema.String.annotate({
      description: "Revision to compare to (default: the working tree, or the index with staged)."
    })
  ),
  staged: Schema.optionalKey(
    Schema.Boolean.annotate({
      description: "Compare base with the index (what is staged) instead of the working tree."
    })
  ),
  paths: Schema.optionalKey(
    Schema.Array(Schema.String).annotate({
      description: "Limit to these files or directories (relative to the workspace root)."
    })
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
export const Output = Results.DiffOutput

/**
 * @category models
 * @since 0.1.0
 */
export type Output = typeof Output.Type

/**
 * Everything `git.diff` may fail with.
 *
 * @category schemas
 * @since 0.1.0
 */
export const Failure = ToolFailure

/**
 * Shows what changed between two states of the repository.
 *
 * **Example** (Unstaged and staged work against the last commit)
 * ```ts
 * import { Trust } from "@ugent/core"
 * import { GitBackend, GitDiff, Workspace } from "@ugent/tools"
 * import { Effect } from "effect"
 * import * as git from "isomorphic-git"
 * import * as fs from "node:fs"
 * import { tmpdir } from "node:os"
 * import { join } from "node:path"
 * const root = fs.mkdtempSync(join(tmpdir(), "diff-"))
 * fs.writeFileSync(join(root, "a.txt"), "one\ntwo\n")
 * await git.init({ fs, dir: root, defaultBranch: "main" })
 * await git.add({ fs, dir: root, filepath: "a.txt" })
 * const author = { name: "Ada", email: "ada@example.com", timestamp: 0, timezoneOffset: 0 }
 * await git.commit({ fs, dir: root, message: "first", author })
 * fs.writeFileSync(join(root, "a.txt"), "one\n2\n")
 * const out = await Effect.runPromise(
 *   GitDiff.diff.run({}).pipe(Effect.provide([Workspace.layer({ root }), GitBackend.layerIsomorphic, Trust.grant(0)]))
 * )
 * console.log(out.files[0]?.hunks[0]?.lines.map((l) => `${l.type} ${l.content}`))
 * // => [ 'context one', 'delete two', 'add 2' ]
 * ```
 *
 * @category tools
 * @since 0.1.0
 */
export const diff = Tool.make({
  name: "git.diff",
  description:
    "Show what changed: by default the working tree against HEAD; base and compare revisions compare commits, staged what is staged, paths limit it. Returns files with status, hunks with line numbers, and statistics.",
  input: Input,
  output: Output,
  failure: Failure,
  trust: 0,
  effects: { readsFs: true, idempotent: true },
  run: (input) =>
    Effect.gen(function* () {
      const located = yield* locate("git.diff", input.repository)
      const backend = yield* GitBackend
      const paths = yield* Effect.forEach(input.paths ?? [], (p) => located.toRepoPath(p))
      if (input.staged === true && input.compare !== undefined) {
        return yield* new ToolError.InvalidInput({
          tool: "git.diff",
          issues: "staged compares with the index, so it cannot be combined with compare; give one of them"
        })
      }
      const shape = yield* located.diffOptions(input)
      return yield* backend.diff(located.repository, {
        ...shape,
        base: input.base,
        compare: input.compare,
        staged: input.staged === true,
        paths
      })
    })
})
