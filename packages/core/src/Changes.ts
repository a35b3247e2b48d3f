/**
 * `Changes` carries the news that a file changed through the workspace, from
 * the tools that write to the wrappers that must forget what they knew
 * (`Cached` drops cached reads of that path). Delivery is synchronous: when
 * `publish` returns, every listener has run, so a read that follows a write
 * can never see a stale cache entry.
 *
 * @since 0.1.0
 */
import { Context, Effect, Layer, type Scope } from "effect"

/**
 * A change of one file.
 *
 * @category models
 * @since 0.1.0
 */
export interface FileChange {
  /** Canonical (real) absolute path. */
  readonly path: string
  /** Path relative to the workspace root, with `/` separators. */
  readonly relative: string
  readonly kind: "created" | "modified" | "deleted"
}

/**
 * @category models
 * @since 0.1.0
 */
export interface ChangesShape {
  readonly publish: (change: FileChange) => Effect.Effect<void>
  /** Registers a listener until the scope closes. */
  readonly listen: (listener: (change: FileChange) => void) => Effect.Effect<void, never, Scope.Scope>
}

/**
 * A fresh hub.
 *
 * **Example** (Listening to changes)
 * ```ts
 * import { Changes } from "@ugent/core"
 * import { Effect } from "effect"
 * const hub = Changes.make()
 * const seen: Array<string> = []
 * Effect.runSync(Effect.scoped(Effect.gen(function* () {
 *   yield* hub.listen((c) => seen.push(c.relative))
 *   yield* hub.publish({ path: "/ws/a.txt", relative: "a.txt", kind: "modified" })
 * })))
 * console.log(seen)
 * // => [ 'a.txt' ]
 * ```
 *
 * @category constructors
 * @since 0.1.0
 */
export const make = (): ChangesShape => {
  const listeners = new Set<(change: FileChange) => void>()
  return {
    publish: (change) =>
      Effect.sync(() => {
        for (const listener of listeners) listener(change)
      }),
    listen: (listener) =>
      Effect.acquireRelease(
        Effect.sync(() => listeners.add(listener)),
        () => Effect.sync(() => listeners.delete(listener))
      ).pipe(Effect.asVoid)
  }
}

/**
 * The hub in force: one per process unless a layer provides another.
 *
 * @category services
 * @since 0.1.0
 */
export const Changes = Context.Reference<ChangesShape>("ugent/Changes", { defaultValue: make })

/**
 * A layer with a fresh hub (isolates tests and servers).
 *
 * @category layers
 * @since 0.1.0
 */
export const layer: Layer.Layer<never> = Layer.sync(Changes, make)

/**
 * Publishes a change on the hub in force.
 *
 * @category publishing
 * @since 0.1.0
 */
export const publish = (change: FileChange): Effect.Effect<void> =>
  Effect.flatMap(Changes, (hub) => hub.publish(change))
