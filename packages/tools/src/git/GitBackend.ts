/**
 * A `GitBackend` reads a git repository for the git tools. Two backends give
 * the same structured results: `native` runs the `git` binary (spawned with an
 * argument vector, never a shell; revisions checked and resolved before use;
 * paths after `--`; a scrubbed environment and configuration overrides so
 * values stored in the repository's config cannot run commands; no hooks),
 * and `isomorphic` reads the repository in JavaScript with isomorphic-git,
 * for machines without git (its line diff and blame are ours, built to
 * agree with git's). {@link layer} picks native when `git` runs, isomorphic
 * otherwise; the {@link Selection} reference overrides the choice.
 *
 * @since 0.1.0
 */
import { NodeServices } from "@effect/platform-node"
import { Context, Effect, Layer } from "effect"
import type { ChildProcessSpawner } from "effect/process"
import type * as Blame from "./Blame.ts"
import type * as Diff from "./Diff.ts"
import type { GitFailed, InvalidRevision, NotARepository, PathNotInRepository, UnknownRevision } from "./GitError.ts"
import { makeIsomorphic } from "./internal/iso.ts"
import { gitAvailable, makeNative } from "./internal/native.ts"
import { openRepository } from "./internal/repository.ts"
import { checkStore } from "./internal/store.ts"
import type * as Log from "./Log.ts"
import type * as Show from "./Show.ts"
import type * as Status from "./Status.ts"

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
 * Opens the repository whose working tree is `dir` (it must hold `.git`, a
 * directory or a `gitdir:` file). Parent directories are never searched.
 * Its git directory, common directory and object store must lie inside
 * `root` (by default the working tree itself), links and alternates followed.
 *
 * @category constructors
 * @since 0.1.0
 */
export const repository = (dir: string, root?: string): Effect.Effect<Repository, NotARepository> =>
  Effect.tap(openRepository(dir, root), (repo) => checkStore(repo, dir))

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
  readonly status: (repo: Repository, query: StatusQuery) => Effect.Effect<Status.Output, GitFailed>
  readonly log: (repo: Repository, query: LogQuery) => Effect.Effect<Log.Output, RevisionError>
  readonly diff: (repo: Repository, query: DiffQuery) => Effect.Effect<Diff.Output, RevisionError>
  readonly blame: (
    repo: Repository,
    query: BlameQuery
  ) => Effect.Effect<Blame.Output, RevisionError | PathNotInRepository>
  readonly show: (repo: Repository, query: ShowQuery) => Effect.Effect<Show.Output, RevisionError>
}

/**
 * The git backend service.
 *
 * @category services
 * @since 0.1.0
 */
export class GitBackend extends Context.Service<GitBackend, GitBackendShape>()("ugent/GitBackend") {}

/**
 * Which backend {@link layer} builds: `auto` (native when `git` runs, else
 * isomorphic), `native` or `isomorphic`.
 *
 * @category configuration
 * @since 0.1.0
 */
export const Selection = Context.Reference<"auto" | "native" | "isomorphic">("ugent/GitBackend/Selection", {
  defaultValue: () => "auto"
})

/**
 * The native backend, over a `ChildProcessSpawner`.
 *
 * @category layers
 * @since 0.1.0
 */
export const layerNativeWith: Layer.Layer<GitBackend, never, ChildProcessSpawner.ChildProcessSpawner> = Layer.effect(
  GitBackend,
  Effect.map(makeNative, (shape) => GitBackend.of(shape))
)

/**
 * The native backend, spawning `git` through Node.
 *
 * @category layers
 * @since 0.1.0
 */
export const layerNative: Layer.Layer<GitBackend> = layerNativeWith.pipe(Layer.provide(NodeServices.layer))

/**
 * The isomorphic-git backend. Each repository keeps its object cache across
 * calls; it is renewed when HEAD, refs, packs or the index change.
 *
 * **Example** (Choosing the backend explicitly)
 * ```ts
 * import { GitBackend } from "@ugent/tools"
 * import { Effect } from "effect"
 * const program = Effect.gen(function* () {
 *   const backend = yield* GitBackend.GitBackend
 *   return backend.kind
 * })
 * console.log(Effect.runSync(program.pipe(Effect.provide(GitBackend.layerIsomorphic))))
 * // => isomorphic
 * ```
 *
 * @category layers
 * @since 0.1.0
 */
export const layerIsomorphic: Layer.Layer<GitBackend> = Layer.sync(GitBackend, () => GitBackend.of(makeIsomorphic()))

/**
 * The backend chosen by {@link Selection}: by default native when the `git`
 * binary runs, isomorphic otherwise.
 *
 * @category layers
 * @since 0.1.0
 */
export const layer: Layer.Layer<GitBackend> = Layer.effect(
  GitBackend,
  Effect.gen(function* () {
    const selection = yield* Selection
    const useNative = selection === "native" || (selection === "auto" && (yield* gitAvailable))
    return GitBackend.of(useNative ? yield* makeNative : makeIsomorphic())
  })
).pipe(Layer.provide(NodeServices.layer))
