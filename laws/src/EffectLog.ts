/**
 * The `EffectLog` records, in order, the effects that generated tools perform
 * during one run of a law's side, each with the virtual time at which it
 * happened. Two sides are equal only if they performed the same effects in
 * the same order at the same times, so a combinator that reorders, drops or
 * repeats effects is caught even when its outputs agree.
 *
 * @since 0.1.0
 */
import { Clock, Context, Effect, Layer } from "effect"

/**
 * One recorded effect: what happened and when (virtual milliseconds).
 *
 * @category models
 * @since 0.1.0
 */
export interface Entry {
  readonly label: string
  readonly at: number
}

/**
 * @category models
 * @since 0.1.0
 */
export interface EffectLogShape {
  readonly append: (label: string) => Effect.Effect<void>
  readonly entries: Effect.Effect<ReadonlyArray<Entry>>
}

/**
 * The log of the run in progress. The law runner provides a fresh one to each
 * side; a tool under test may append to it too, to make its own effects part
 * of what the laws compare.
 *
 * **Example** (Recording two effects)
 * ```ts
 * import { EffectLog } from "@ugent/laws"
 * import { Effect } from "effect"
 * const program = Effect.gen(function* () {
 *   yield* EffectLog.append("read")
 *   yield* EffectLog.append("write")
 *   return yield* EffectLog.entries
 * })
 * const entries = Effect.runSync(program.pipe(Effect.provide(EffectLog.EffectLog.layer)))
 * console.log(entries.map((e) => e.label))
 * // => [ 'read', 'write' ]
 * ```
 *
 * @category services
 * @since 0.1.0
 */
export class EffectLog extends Context.Service<EffectLog, EffectLogShape>()("ugent/laws/EffectLog") {
  /** A fresh, empty log each time the layer is built. */
  static readonly layer: Layer.Layer<EffectLog> = Layer.sync(EffectLog, () => make())
}

/**
 * A fresh, empty log.
 *
 * **Example** (A log of its own)
 * ```ts
 * import { EffectLog } from "@ugent/laws"
 * import { Effect } from "effect"
 * const log = EffectLog.make()
 * Effect.runSync(log.append("first"))
 * console.log(Effect.runSync(log.entries).length)
 * // => 1
 * ```
 *
 * @category constructors
 * @since 0.1.0
 */
export const make = (): EffectLogShape => {
  const entries: Array<Entry> = []
  return {
    append: (label) =>
      Effect.map(Clock.currentTimeMillis, (at) => {
        entries.push({ label, at })
      }),
    entries: Effect.sync(() => entries.slice())
  }
}

/**
 * Appends an entry, stamped with the current (virtual) time, to the current log.
 *
 * **Example** (Stamped with virtual time)
 * ```ts
 * import { EffectLog, Observation } from "@ugent/laws"
 * import { Effect } from "effect"
 * const seen = await Effect.runPromise(Observation.run(Effect.sleep("1 second").pipe(Effect.andThen(EffectLog.append("tick")))))
 * console.log(seen.log)
 * // => [ { label: 'tick', at: 1000 } ]
 * ```
 *
 * @category combinators
 * @since 0.1.0
 */
export const append = (label: string): Effect.Effect<void, never, EffectLog> =>
  EffectLog.use((log) => log.append(label))

/**
 * The entries of the current log, oldest first.
 *
 * **Example** (Reading the current log)
 * ```ts
 * import { EffectLog } from "@ugent/laws"
 * import { Effect } from "effect"
 * const program = Effect.andThen(EffectLog.append("x"), EffectLog.entries)
 * console.log(Effect.runSync(program.pipe(Effect.provide(EffectLog.EffectLog.layer))).map((e) => e.label))
 * // => [ 'x' ]
 * ```
 *
 * @category getters
 * @since 0.1.0
 */
export const entries: Effect.Effect<ReadonlyArray<Entry>, never, EffectLog> = EffectLog.use((log) => log.entries)
