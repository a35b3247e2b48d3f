/**
 * The `Observer` is who calls a tool: an id, a trust level, a session. It is
 * supplied by the server's configuration of the caller, never by a request
 * body, and `Trust.gate` reads its level at run time.
 *
 * @since 0.1.0
 */
import { Context, Layer } from "effect"
import type { TrustLevel } from "./internal/level.ts"

/**
 * The caller of a tool.
 *
 * @category models
 * @since 0.1.0
 */
export interface ObserverShape {
  readonly id: string
  readonly trust: TrustLevel
  readonly session?: string | undefined
}

/**
 * The current caller, as a service.
 *
 * **Example** (Providing an observer)
 * ```ts
 * import { Observer } from "@ugent/core"
 * import { Effect } from "effect"
 * const program = Effect.map(Observer.Observer, (o) => `${o.id}@L${o.trust}`)
 * console.log(Effect.runSync(Effect.provide(program, Observer.layer({ id: "ci", trust: 1 }))))
 * // => ci@L1
 * ```
 *
 * @category services
 * @since 0.1.0
 */
export class Observer extends Context.Service<Observer, ObserverShape>()("ugent/Observer") {}

/**
 * A layer that provides a fixed observer.
 *
 * @category layers
 * @since 0.1.0
 */
export const layer = (observer: ObserverShape): Layer.Layer<Observer> => Layer.succeed(Observer, Observer.of(observer))
