/**
 * A `GitBackend` reads a git repository for the git tools. Two backends give
 * the same structured results: `native` runs the `git` binary (spawned with an
 * argument vector, never a shell; revisions checked and resolved before use;
 * paths after `--`; a scrubbed environment and configuration overrides so
 * values stored in the repository's config cannot run commands; reads run
 * no hooks, writes only those in the repository's `.git`),
 * and `isomorphic` reads the repository in JavaScript with isomorphic-git,
 * for machines without git (its line diff and blame are ours, built to
 * agree with git's). {@link layer} picks native when `git` runs, isomorphic
 * otherwise; the {@link Selection} reference overrides the choice.
 *
 * @since 0.1.0
 */
import * as NodeServices from "@effect/platform-node/NodeServices"
import { Context, Effect, Layer } from "effect"
import type { ChildProcessSpawner } from "effect/process"
import type { NotARepository } from "./GitError.ts"
import type * as Model from "./internal/model.ts"
import { gitAvailable, makeNative, makeNativeWithSpawner, nodeExec } from "./internal/native.ts"
import { openRepository } from "./internal/repository.ts"
import { checkStore } from "./internal/store.ts"

/**
 * A repository on disk: its working tree and its git directory, both
 * canonical real paths. Build one with {@link repository}; the tools build it
 * through the workspace, which also checks that both lie inside the root.
 *
 * @category models
 * @since 0.1.0
 */
export type Repository = Model.Repository

/**
 * How diffs are shaped, shared by `git.diff`, `git.show` and `git.log` with
 * `includeDiff`: context lines, whitespace, the byte budget of all hunks
 * together, the most files listed, and which paths must not show content.
 *
 * @category models
 * @since 0.1.0
 */
export type DiffShape = Model.DiffShape

/**
 * @category models
 * @since 0.1.0
 */
export type StatusQuery = Model.StatusQuery

/**
 * Revisions are checked strings (see `GitError.InvalidRevision`); paths are
 * relative to the repository, `/`-separated.
 *
 * @category models
 * @since 0.1.0
 */
export type LogQuery = Model.LogQuery

/**
 * @category models
 * @since 0.1.0
 */
export type DiffQuery = Model.DiffQuery

/**
 * @category models
 * @since 0.1.0
 */
export type BlameQuery = Model.BlameQuery

/**
 * @category models
 * @since 0.1.0
 */
export type ShowQuery = Model.ShowQuery

/**
 * The failures of an operation that takes revisions.
 *
 * @category models
 * @since 0.1.0
 */
export type RevisionError = Model.RevisionError

/**
 * What a backend does.
 *
 * @category models
 * @since 0.1.0
 */
export type GitBackendShape = Model.GitBackendShape

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

// isomorphic-git (and our JavaScript git over it) is imported only when this backend is chosen.
const makeIsomorphic = Effect.promise(() => import("./internal/iso.ts")).pipe(Effect.map((iso) => iso.makeIsomorphic()))

/**
 * The native backend, over a `ChildProcessSpawner`.
 *
 * @category layers
 * @since 0.1.0
 */
export const layerNativeWith: Layer.Layer<GitBackend, never, ChildProcessSpawner.ChildProcessSpawner> = Layer.effect(
  GitBackend,
  Effect.map(makeNativeWithSpawner, (shape) => GitBackend.of(shape))
)

/**
 * The native backend, spawning `git` with Node's own `child_process` (its
 * output is read whole, so the spawner's streams would only add time).
 *
 * @category layers
 * @since 0.1.0
 */
export const layerNative: Layer.Layer<GitBackend> = Layer.effect(
  GitBackend,
  Effect.map(makeNative(nodeExec), (shape) => GitBackend.of(shape))
)

/**
 * The isomorphic-git backend. Each repository keeps its object cache across
 * calls; it is renewed when HEAD, refs, packs or the index change.
 * isomorphic-git is loaded when this layer is built, not before.
 *
 * **Example** (Choosing the backend explicitly)
 * ```ts
 * import { GitBackend } from "@ugent/tools"
 * import { Effect } from "effect"
 * const program = Effect.gen(function* () {
 *   const backend = yield* GitBackend.GitBackend
 *   return backend.kind
 * })
 * console.log(await Effect.runPromise(program.pipe(Effect.provide(GitBackend.layerIsomorphic))))
 * // => isomorphic
 * ```
 *
 * @category layers
 * @since 0.1.0
 */
export const layerIsomorphic: Layer.Layer<GitBackend> = Layer.effect(
  GitBackend,
  Effect.map(makeIsomorphic, (shape) => GitBackend.of(shape))
)

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
    return GitBackend.of(useNative ? yield* makeNative(nodeExec) : yield* makeIsomorphic)
  })
).pipe(Layer.provide(NodeServices.layer))
