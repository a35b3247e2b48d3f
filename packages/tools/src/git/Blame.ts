/**
 * `git.blame` tells, for each line of a file, the commit that last changed
 * it: hash, author, date and subject, and the line's number and path in that
 * commit. By default it blames the file as it is in the working tree (lines
 * not committed yet have no commit); `rev` blames it at a revision. Whole-file
 * renames are followed, as git does by default.
 *
 * @since 0.1.0
 */
import { Tool, ToolError } from "@ugent/core"
import { Effect, Schema } from "effect"
import * as Workspace from "../Workspace.ts"
import { GitBackend } from "./GitBackend.ts"
import { PathNotInRepository, ToolFailure } from "./GitError.ts"
import { locate, repositoryOption } from "./internal/locate.ts"
import * as Results from "./internal/results.ts"

/**
 * The commit a line comes from. `message` is the commit's subject.
 *
 * @category schemas
 * @since 0.1.0
 */
export const BlameCommit = Results.BlameCommit

/**
 * @category models
 * @since 0.1.0
 */
export type BlameCommit = typeof BlameCommit.Type

/**
 * One blamed line: its number in the file, its number and path in the commit
 * it comes from, its text, and that commit (`null` when not committed yet).
 *
 * @category schemas
 * @since 0.1.0
 */
export const BlameLine = Results.BlameLine

/**
 * @category models
 * @since 0.1.0
 */
export type BlameLine = typeof BlameLine.Type

/**
 * The most lines one call returns by default.
 *
 * @category constants
 * @since 0.1.0
 */
export const defaultMaxLines = 2000

/**
 * @category schemas
 * @since 0.1.0
 */
export const Input = Schema.Struct({
  repository: repositoryOption,
  path: Schema.String.annotate({ description: "The file, relative to the workspace root." }),
  rev: Schema.optionalKey(
    Schema.String.annotate({ description: "Blame the file at this revision (default: as it is in the working tree)." })
  ),
  startLine: Schema.optionalKey(
    Schema.Int.check(Schema.isGreaterThanOrEqualTo(1)).annotate({ description: "First line (1-based, default 1)." })
  ),
  endLine: Schema.optionalKey(
    Schema.Int.check(Schema.isGreaterThanOrEqualTo(1)).annotate({
      description: "Last line (inclusive, default: the end)."
    })
  ),
  maxLines: Schema.optionalKey(
    Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 100_000 })).annotate({
      description: "Most lines returned (default 2000); truncated and nextLine tell where to continue."
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
export const Output = Results.BlameOutput

/**
 * @category models
 * @since 0.1.0
 */
export type Output = typeof Output.Type

/**
 * Everything `git.blame` may fail with.
 *
 * @category schemas
 * @since 0.1.0
 */
export const Failure = Schema.Union([...ToolFailure.members, Workspace.FileTooLarge, Workspace.ConcurrentChange])

/** The most bytes of a working-tree file blamed. */
const maxBlameBytes = 64 * 1024 * 1024

/** The working tree's file as git would store it, read through the workspace. */
const workingFile = (input: string) =>
  Effect.gen(function* () {
    const ws = yield* Workspace.Workspace
    const entry = yield* ws.resolveEntry(input)
    if (entry.kind === "missing") return yield* new PathNotInRepository({ path: input, reason: "not-tracked" })
    if (entry.kind === "directory") return yield* new PathNotInRepository({ path: input, reason: "not-a-file" })
    return yield* ws
      .readEntry(entry, { maxBytes: maxBlameBytes })
      .pipe(
        Effect.catchTag("NotFound", () => Effect.fail(new PathNotInRepository({ path: input, reason: "not-tracked" })))
      )
  })

/**
 * Blames the lines of a file.
 *
 * **Example** (Who wrote each line)
 * ```ts
 * import { Trust } from "@ugent/core"
 * import { GitBackend, GitBlame, Workspace } from "@ugent/tools"
 * import { Effect } from "effect"
 * import * as git from "isomorphic-git"
 * import * as fs from "node:fs"
 * import { tmpdir } from "node:os"
 * import { join } from "node:path"
 * const root = fs.mkdtempSync(join(tmpdir(), "blame-"))
 * await git.init({ fs, dir: root, defaultBranch: "main" })
 * const commit = async (name: string, text: string, timestamp: number) => {
 *   fs.writeFileSync(join(root, "poem.txt"), text)
 *   await git.add({ fs, dir: root, filepath: "poem.txt" })
 *   await git.commit({ fs, dir: root, message: `${name} writes`, author: { name, email: `${name}@example.com`, timestamp, timezoneOffset: 0 } })
 * }
 * await commit("ada", "roses\nviolets\n", 1_700_000_000)
 * await commit("bob", "roses\nare red\nviolets\n", 1_700_000_100)
 * const out = await Effect.runPromise(
 *   GitBlame.blame.run({ path: "poem.txt" }).pipe(Effect.provide([Workspace.layer({ root }), GitBackend.layerIsomorphic, Trust.grant(0)]))
 * )
 * console.log(out.lines.map((l) => `${l.line} ${l.commit?.author}: ${l.text}`))
 * // => [ '1 ada: roses', '2 bob: are red', '3 ada: violets' ]
 * ```
 *
 * @category tools
 * @since 0.1.0
 */
export const blame = Tool.make({
  name: "git.blame",
  description:
    "Show, for each line of a file, the commit that last changed it (hash, author, date, subject) and its line there. Blames the working tree (uncommitted lines: commit null) or rev; startLine/endLine pick a range; at most maxLines (default 2000).",
  input: Input,
  output: Output,
  failure: Failure,
  trust: 0,
  effects: { readsFs: true, idempotent: true },
  run: (input) =>
    Effect.gen(function* () {
      const located = yield* locate("git.blame", input.repository)
      const path = yield* located.toRepoPath(input.path)
      if (path === "") return yield* new PathNotInRepository({ path: input.path, reason: "not-a-file" })
      if (located.redact(path)) {
        const ws = yield* Workspace.Workspace
        const rule = ws.blockedBy(ws.relative(`${located.repository.workTree}/${path}`) ?? path) ?? "blocked"
        return yield* new Workspace.BlockedPath({ path: input.path, rule, via: "path" })
      }
      const startLine = yield* located.integer("startLine", input.startLine, 1, 1, Number.MAX_SAFE_INTEGER)
      if (input.endLine !== undefined && input.endLine < startLine) {
        return yield* new ToolError.InvalidInput({
          tool: "git.blame",
          issues: `endLine (${input.endLine}) must not be before startLine (${startLine})`
        })
      }
      const endLine =
        input.endLine === undefined
          ? undefined
          : yield* located.integer("endLine", input.endLine, 1, 1, Number.MAX_SAFE_INTEGER)
      const maxLines = yield* located.integer("maxLines", input.maxLines, defaultMaxLines, 1, 100_000)
      // The working tree's file is read here, through the workspace (links on the way must stay inside, the
      // file is opened through a verified descriptor), and handed to the backend: git never opens the path.
      const contents = input.rev === undefined ? yield* workingFile(input.path) : undefined
      const backend = yield* GitBackend
      return yield* backend.blame(located.repository, { path, rev: input.rev, contents, startLine, endLine, maxLines })
    })
})
