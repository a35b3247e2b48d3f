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
import type { GitFailed, GitWriteRefused, InvalidRevision, PathNotInRepository, UnknownRevision } from "../GitError.ts"
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
 * Who a commit names: a name and an email address.
 *
 * @category models
 * @since 0.2.0
 */
export interface Identity {
  readonly name: string
  readonly email: string
}

/**
 * A commit's author or committer line: who, and when (Unix seconds, and the
 * zone as minutes east of UTC).
 *
 * @category models
 * @since 0.2.0
 */
export interface Signature extends Identity {
  readonly timestamp: number
  readonly zoneMinutes: number
}

/**
 * What the git writes read from the repository's own configuration: the
 * configured user and where its hooks are (`core.hooksPath`, as written).
 *
 * @category models
 * @since 0.2.0
 */
export interface WriteConfig {
  readonly name: string | undefined
  readonly email: string | undefined
  readonly hooksPath: string | undefined
}

/**
 * A commit to make: the message (already cleaned: no carriage returns, no
 * blank lines around it, one final newline), whether it replaces HEAD
 * (`amend` keeps HEAD's author, as git does), the author of a new commit and
 * the committer.
 *
 * @category models
 * @since 0.2.0
 */
export interface CommitQuery {
  readonly message: string
  readonly amend: boolean
  readonly author: Signature
  readonly committer: Signature
}

/**
 * One stash entry, newest first (`index` 0 is `stash@{0}`).
 *
 * @category models
 * @since 0.2.0
 */
export interface StashEntry {
  readonly index: number
  readonly message: string
}

/**
 * The writes a backend does. Each refuses (never skips) a hook the
 * repository would run that it cannot run safely (see `GitWriteRefused`).
 *
 * @category models
 * @since 0.2.0
 */
export interface GitWrites {
  readonly config: (repo: Repository) => Effect.Effect<WriteConfig, GitFailed>
  /** Stages these repository paths (new, changed and removed files; a directory stages what is under it). */
  readonly add: (
    repo: Repository,
    paths: ReadonlyArray<string>
  ) => Effect.Effect<void, GitFailed | GitWriteRefused | PathNotInRepository>
  /** Makes the commit of what is staged; its hash. */
  readonly commit: (repo: Repository, query: CommitQuery) => Effect.Effect<string, GitFailed | GitWriteRefused>
  /** The local branch names, sorted. */
  readonly branches: (repo: Repository) => Effect.Effect<ReadonlyArray<string>, GitFailed>
  /** The remote-tracking refs (`refs/remotes/...`) whose history holds the commit. */
  readonly remoteContaining: (repo: Repository, oid: string) => Effect.Effect<ReadonlyArray<string>, GitFailed>
  /** Creates a branch at a commit (never moves an existing one). */
  readonly branch: (repo: Repository, name: string, oid: string) => Effect.Effect<void, GitFailed | GitWriteRefused>
  /** Checks out a local branch (the tool has checked that nothing tracked is changed). */
  readonly switchTo: (repo: Repository, name: string) => Effect.Effect<void, GitFailed | GitWriteRefused>
  readonly stashPush: (
    repo: Repository,
    message: string | undefined
  ) => Effect.Effect<void, GitFailed | GitWriteRefused>
  readonly stashPop: (repo: Repository) => Effect.Effect<void, GitFailed | GitWriteRefused>
  readonly stashList: (repo: Repository) => Effect.Effect<ReadonlyArray<StashEntry>, GitFailed>
}

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
  readonly writes: GitWrites
}
