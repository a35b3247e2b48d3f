/**
 * Where the git tools meet the workspace jail. The repository is the
 * workspace root, or a sub-directory of it resolved through the workspace;
 * its `.git` (and, for a linked worktree, the common directory) must lie
 * inside the root too. Paths given to the tools are resolved lexically
 * against the root and must fall inside the repository's working tree (a path
 * in history may no longer exist on disk, so existence is not required);
 * names the workspace policy blocks (secrets, keys) never show content.
 *
 * @internal
 */
import * as path from "node:path"
import { ToolError } from "@ugent/core"
import { Effect, Schema } from "effect"
import * as Workspace from "../../Workspace.ts"
import { type DiffShape, repository as openRepository, type Repository } from "../GitBackend.ts"
import { NotARepository, PathNotInRepository } from "../GitError.ts"

/** The `repository` input field shared by every git tool. */
export const repositoryOption = Schema.optionalKey(
  Schema.String.annotate({
    description: "The repository's sub-directory (default: the root)."
  })
)

/** The diff-shaping input fields shared by git.diff, git.show and git.log. */
export const diffShape = {
  contextLines: Schema.optionalKey(
    Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 1000 })).annotate({
      description: "Lines of context around each change (default 3)."
    })
  ),
  ignoreWhitespace: Schema.optionalKey(
    Schema.Boolean.annotate({ description: "Ignore whitespace when comparing lines (like git diff -w)." })
  ),
  maxDiffSize: Schema.optionalKey(
    Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 10_000_000 })).annotate({
      description: "Most bytes of hunk lines (default 51200); past it, truncated."
    })
  ),
  maxFiles: Schema.optionalKey(
    Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 100_000 })).annotate({
      description: "Most files listed (default 500)."
    })
  )
}

export const defaultContextLines = 3
export const defaultMaxDiffSize = 51_200
export const defaultMaxFiles = 500

export interface DiffShapeInput {
  readonly contextLines?: number | undefined
  readonly ignoreWhitespace?: boolean | undefined
  readonly maxDiffSize?: number | undefined
  readonly maxFiles?: number | undefined
}

export interface Located {
  readonly repository: Repository
  /** A path given to a tool, as a `/`-separated path relative to the repository (`""` for its root). */
  readonly toRepoPath: (
    input: string
  ) => Effect.Effect<
    string,
    PathNotInRepository | Workspace.InvalidPath | Workspace.OutsideWorkspace | Workspace.FileSystemError
  >
  /** Whether the workspace policy blocks a repository path. */
  readonly redact: (repoPath: string) => boolean
  readonly diffOptions: (input: DiffShapeInput) => Effect.Effect<DiffShape, ToolError.InvalidInput>
  /** Checks an integer option: `undefined` takes the default, `0` stays `0`. */
  readonly integer: (
    name: string,
    value: number | undefined,
    fallback: number,
    min: number,
    max: number
  ) => Effect.Effect<number, ToolError.InvalidInput>
}

export const locate = (
  tool: string,
  repositoryInput: string | undefined
): Effect.Effect<Located, NotARepository | Workspace.PathError, Workspace.Workspace> =>
  Effect.gen(function* () {
    const ws = yield* Workspace.Workspace
    const dir = yield* ws.resolve(repositoryInput ?? ".", { expect: "directory" })
    const shown = repositoryInput ?? "."
    const repository = yield* openRepository(dir.real, ws.root).pipe(
      Effect.mapError((e) => new NotARepository({ ...e, path: shown }))
    )
    const gitDirInTree = path.join(repository.workTree, ".git")
    const integer = (name: string, value: number | undefined, fallback: number, min: number, max: number) => {
      const v = value ?? fallback
      return Number.isInteger(v) && v >= min && v <= max
        ? Effect.succeed(v)
        : Effect.fail(
            new ToolError.InvalidInput({
              tool,
              issues: `${name} must be an integer from ${min} to ${max} (got ${String(value)})`
            })
          )
    }
    // A log names the same paths again and again: each is judged once per call.
    const judged = new Map<string, boolean>()
    const redact = (repoPath: string): boolean => {
      let blocked = judged.get(repoPath)
      if (blocked === undefined) {
        const rel = ws.relative(path.join(repository.workTree, repoPath))
        blocked = rel !== undefined && ws.blockedBy(rel) !== undefined
        judged.set(repoPath, blocked)
      }
      return blocked
    }
    const located: Located = {
      repository,
      redact,
      integer,
      toRepoPath: (input) =>
        Effect.gen(function* () {
          if (input.includes("\u0000")) return yield* new Workspace.InvalidPath({ path: input, reason: "nul-byte" })
          if (input === "") return yield* new Workspace.InvalidPath({ path: input, reason: "empty" })
          const abs = path.isAbsolute(input) ? path.resolve(input) : path.resolve(ws.root, input)
          if (!Workspace.isInside(repository.workTree, abs) || Workspace.isInside(gitDirInTree, abs)) {
            return yield* new PathNotInRepository({ path: input, reason: "outside" })
          }
          // The path git will be given must not lead out through a link on the way (git would follow it).
          yield* ws.resolveEntry(input)
          const rel = path.relative(repository.workTree, abs).split(path.sep).join("/")
          return rel
        }),
      diffOptions: (input) =>
        Effect.gen(function* () {
          const contextLines = yield* integer("contextLines", input.contextLines, defaultContextLines, 0, 1000)
          const maxDiffSize = yield* integer("maxDiffSize", input.maxDiffSize, defaultMaxDiffSize, 0, 10_000_000)
          const maxFiles = yield* integer("maxFiles", input.maxFiles, defaultMaxFiles, 0, 100_000)
          return { contextLines, maxDiffSize, maxFiles, ignoreWhitespace: input.ignoreWhitespace === true, redact }
        })
    }
    return located
  })
