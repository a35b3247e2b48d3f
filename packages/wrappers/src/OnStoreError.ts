/**
 * What `RateLimited` and `CircuitBreaker` do with a call when their store (a
 * shared Redis) cannot be reached: admit it uncounted (`"allow"`, the
 * default: the tool stays usable while Redis is down) or refuse it with a
 * typed `unavailable` error (`"fail"`: no call the limits cannot count). A
 * wrapper's own `onStoreError` option wins; without one it reads this
 * reference at call time, so a server sets the policy once for every path.
 *
 * **Example** (Refusing calls the limiter cannot count)
 * ```ts
 * import { Observer, Tool, ToolError, Trust } from "@ugent/core"
 * import { OnStoreError, RateLimited } from "@ugent/wrappers"
 * import { Effect, Layer } from "effect"
 * import { RateLimiter } from "effect/persistence"
 * const down = Layer.succeed(RateLimiter.RateLimiter, {
 *   consume: () => Effect.fail(new RateLimiter.RateLimiterError({ reason: new RateLimiter.RateLimitStoreError({ message: "down" }) }))
 * } as unknown as RateLimiter.RateLimiter["Service"])
 * const ping = RateLimited(Tool.fromFunction({ name: "ping", f: () => "pong" }))
 * const env = Layer.mergeAll(down, Trust.grant(0), Observer.layer({ id: "agent", trust: 0 }))
 * const run = ping.run(null).pipe(Effect.match({ onFailure: (e) => ToolError.kindOf(e), onSuccess: (s) => s }), Effect.provide(env))
 * console.log(Effect.runSync(run), Effect.runSync(run.pipe(Effect.provideService(OnStoreError, "fail"))))
 * // => pong unavailable
 * ```
 *
 * @since 0.2.0
 */
import { Context } from "effect"

/**
 * `"allow"`: run the call uncounted; `"fail"`: refuse it.
 *
 * @category models
 * @since 0.2.0
 */
export type OnStoreErrorPolicy = "allow" | "fail"

/**
 * The policy in force where a wrapper's `onStoreError` option is not given.
 *
 * @category references
 * @since 0.2.0
 */
export const OnStoreError = Context.Reference<OnStoreErrorPolicy>("ugent/wrappers/OnStoreError", {
  defaultValue: () => "allow"
})
