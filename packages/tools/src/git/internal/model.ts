/**
 * The models a git backend works with: the repository, the queries of each
 * operation and the backend's shape. They live here, apart from
 * `GitBackend.ts` (which re-exports them) and the tool modules, so that the
 * backends import neither.
 *
 * @internal
 */
import type { Effect } from "effect"
import type { ConcurrentChange } from "../../internal/workspace/errors.ts"
import type { GitFailed, InvalidRevision, PathNotInRepository, UnknownRevision } from "../GitError.ts"
import type { BlameOutput, DiffOutput, LogOutput, ShowOutput, StatusOutput } from "./results.ts"

/**
 * A repository on disk: its working tree and its git directory, both
 * canonical real paths. Build one with {@link repository}; the tools build it
 * through the workspace, which also checks that both lie inside the root.
 *
 * @category models
 * @since 0.1.0
 */
export interface Repository {
  readonly workTree: string
  readonly gitDir: string
  /** The directory holding objects and refs: the git directory, or the main one for a linked worktree. */
  readonly commonDir: string
  /** The jail: nothing outside it is read (the workspace root; the working tree when opened alone). */
  readonly root: string
}

/**
 * How diffs are shaped, shared by `git.diff`, `git.show` and `git.log` with
 * `includeDiff`: context lines, whitespace, the byte budget of all hunks
 * together, the most files listed, and which paths must not show content.
 *
 * @category models
 * @since 0.1.0
 */
export interface DiffShape {
  readonly contextLines: number
  readonly ignoreWhitespace: boolean
  readonly maxDiffSize: number
  readonly maxFiles: number
  /** Paths (relative to the repository) whose content is never shown. */
  readonly redact: (path: string) => boolean
}

/**
 * @category models
 * @since 0.1.0
 */
export interface StatusQuery {
  readonly limit: number
}

/**
 * Revisions are checked strings (see `GitError.InvalidRevision`); paths are
 * relative to the repository, `/`-separated.
 *
 * @category models
 * @since 0.1.0
 */
export interface LogQuery {
  readonly rev: string | undefined
  readonly path: string | undefined
  readonly limit: number
  /** Unix seconds: commits whose committer date is older are left out. */
  readonly since: number | undefined
  /** Unix seconds: commits whose committer date is newer are left out. */
  readonly until: number | undefined
  readonly author: string | undefined
  readonly grep: string | undefined
  readonly includeDiff: boolean
  readonly diff: DiffShape
}

/**
 * @category models
 * @since 0.1.0
 */
export interface DiffQuery extends DiffShape {
  readonly base: string | undefined
  readonly compare: string | undefined
  readonly staged: boolean
  readonly paths: ReadonlyArray<string>
}

/**
 * @category models
 * @since 0.1.0
 */
export interface BlameQuery {
  readonly path: string
  /** `undefined`: the file in the working tree (uncommitted lines belong to no commit). */
  readonly rev: string | undefined
  /**
   * With `rev` undefined: the working-tree file's bytes, read through the
   * workspace (a link's own text for a link), so no backend opens a
   * working-tree path itself.
   */
  readonly contents: Uint8Array | undefined
  readonly startLine: number
  readonly endLine: number | undefined
  readonly maxLines: number
}

/**
 * @category models
 * @since 0.1.0
 */
export interface ShowQuery extends DiffShape {
  readonly rev: string
  readonly includeDiff: boolean
  readonly paths: ReadonlyArray<string>
}

/**
 * The failures of an operation that takes revisions.
 *
 * @category models
 * @since 0.1.0
 */
export type RevisionError = UnknownRevision | InvalidRevision | GitFailed

/**
 * What a backend does.
 *
 * @category models
 * @since 0.1.0
 */
export interface GitBackendShape {
  readonly kind: "native" | "isomorphic"
  readonly status: (repo: Repository, query: StatusQuery) => Effect.Effect<StatusOutput, GitFailed>
  readonly log: (repo: Repository, query: LogQuery) => Effect.Effect<LogOutput, RevisionError>
  /** Fails with `ConcurrentChange` when the working tree changed under git in a way that could show what is not there. */
  readonly diff: (repo: Repository, query: DiffQuery) => Effect.Effect<DiffOutput, RevisionError | ConcurrentChange>
  readonly blame: (
    repo: Repository,
    query: BlameQuery
  ) => Effect.Effect<BlameOutput, RevisionError | PathNotInRepository>
  readonly show: (repo: Repository, query: ShowQuery) => Effect.Effect<ShowOutput, RevisionError>
}
