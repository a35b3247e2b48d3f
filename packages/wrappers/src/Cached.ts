/**
 * `Cached` memoizes a read-only tool. Entries are keyed by the tool's name,
 * version and canonical encoded input, bounded in number (least recently used
 * first out) and in age, and only successes are kept. Concurrent calls with the
 * same input share one run. A write through the workspace (published on core's
 * `Changes` hub) drops every entry whose input or output names the changed
 * path, before the write returns, so a read after a write never sees stale
 * content.
 *
 * Only read-only (L0) tools are accepted: caching a write or a shell call
 * would skip its effect. This is a compile error, and a runtime check.
 *
 * @since 0.1.0
 */
import { Changes, Tool, Trust } from "@ugent/core"
import { Duration, Effect, Predicate } from "effect"
import { dual } from "effect/Function"
import { CachedStore } from "./internal/cachedStore.ts"

/**
 * @category type IDs
 * @since 0.1.0
 */
export const TypeId: "~ugent/wrappers/Cached" = "~ugent/wrappers/Cached"

/**
 * The options of {@link Cached}.
 *
 * @category models
 * @since 0.1.0
 */
export interface CachedOptions {
  /** How many entries are kept (per `Changes` hub); the least recently used goes first. Default 1,000. */
  readonly capacity?: number | undefined
  /** How long a success is kept. Default 5 minutes. */
  readonly timeToLive?: Duration.Input | undefined
}

/**
 * The tool `Cached` returns: the same types as the tool it wraps.
 *
 * @category models
 * @since 0.1.0
 */
export type CachedTool<T> = Tool.Tool<Tool.Input<T>, Tool.Output<T>, Tool.Failure<T>, Tool.Requirements<T>>

/**
 * Whether a tool is already cached (so {@link Cached} leaves it as is).
 *
 * @category guards
 * @since 0.1.0
 */
export const isCached = (tool: Tool.Any): boolean => Predicate.hasProperty(tool, TypeId)

const make = <T extends Tool.Any>(self: T, options?: CachedOptions): CachedTool<T> => {
  Trust.assertReadOnly(self)
  // Cached(Cached(f)) is Cached(f): a second layer would only hold copies.
  if (isCached(self)) return self as CachedTool<T>
  const store = new CachedStore(
    {
      name: self.name,
      version: self.version,
      input: self.input,
      output: self.output,
      readsFs: self.effects.readsFs,
      run: self.run
    },
    {
      capacity: options?.capacity ?? 1000,
      timeToLive: Duration.fromInputUnsafe(options?.timeToLive ?? "5 minutes")
    }
  )
  const cached = Tool.wrap(
    self,
    () => (a) =>
      // The store runs `self.run` itself, with the services of the caller that missed.
      Effect.flatMap(Changes.Changes, (hub) => store.get(hub, a)) as ReturnType<T["run"]>
  )
  Object.defineProperty(cached, TypeId, { value: TypeId, enumerable: false })
  return cached as CachedTool<T>
}

/**
 * Memoizes a read-only tool. Dual: `Cached(tool, options?)` or
 * `tool.pipe(Cached(options?))`.
 *
 * - Key: `name@version:` + the input encoded by the tool's input schema, as
 *   canonical JSON (sorted keys), so `{ a, b }` and `{ b, a }` share an entry.
 *   An input that does not encode to JSON runs uncached.
 * - Bounded: `capacity` entries per `Changes` hub (LRU) and a `timeToLive`;
 *   failures are never stored. Concurrent misses share one run; when every
 *   caller waiting on it is interrupted, the run is interrupted too.
 * - Invalidation: a change published on the `Changes` hub in force drops the
 *   entries whose input names the path or a directory above it (or a glob
 *   rooted above it), whose output contains the path, or which read the file
 *   system without naming any path. A change that lands while a read is
 *   running drops that read's result too.
 * - `Cached(Cached(f))` is `Cached(f)`.
 *
 * **Example** (A second call is served from the cache)
 * ```ts
 * import { Tool, Trust } from "@ugent/core"
 * import { Cached } from "@ugent/wrappers"
 * import { Effect, Schema } from "effect"
 * let runs = 0
 * const lookup = Tool.make({
 *   name: "dict.lookup",
 *   description: "Looks a word up.",
 *   input: Schema.Struct({ word: Schema.String }),
 *   output: Schema.String,
 *   run: ({ word }) => Effect.sync(() => { runs++; return word.toUpperCase() })
 * })
 * const cached = lookup.pipe(Cached({ timeToLive: "1 minute" }))
 * const program = Effect.gen(function* () {
 *   yield* cached.run({ word: "cat" })
 *   return yield* cached.run({ word: "cat" })
 * })
 * console.log(Effect.runSync(program.pipe(Effect.provide(Trust.grant(0)))), runs)
 * // => CAT 1
 * ```
 *
 * @category wrappers
 * @since 0.1.0
 */
export const Cached: {
  (options?: CachedOptions): <T extends Tool.Any>(self: T & Trust.ReadOnly<T>) => CachedTool<T>
  <T extends Tool.Any>(self: T & Trust.ReadOnly<T>, options?: CachedOptions): CachedTool<T>
} = dual((args) => Tool.isTool(args[0]), make)
