/**
 * `RateLimited` admits a bounded number of calls per time window, at three
 * scopes at once: per observer (the caller, when an `Observer` is in
 * context), per tool, and global. A call that exceeds any of them fails
 * with a typed {@link RateLimitedError} (tag `"RateLimited"`) that says which
 * limit it hit and when to try again.
 *
 * Each limit is a token bucket (Effect's `effect/persistence` `RateLimiter`,
 * in memory or in Redis to share limits across machines): "`limit` per
 * `window`" refills one token every `window / limit`, and the bucket holds
 * `limit + burst` tokens: `burst` is an allowance above the steady rate (as
 * in nginx's `burst`), so "10 per minute with a burst allowance of 3" admits
 * 13 calls at once, then one every 6 s. A token bucket rather than a fixed
 * window because it has no window edge where twice the limit gets through.
 * A `limit` of 0 refuses every call. With `toolPerObserver`, the per-tool
 * limits are kept for each caller apart (a bucket per observer and tool),
 * so one caller's reads do not use up another's. The defaults are those of
 * the design documents: global 100/min and 2,000/h, per observer 10/min
 * (burst allowance 3) and 200/h, no per-tool limit.
 *
 * @since 0.1.0
 */
import { Observer, Tool, type ToolError } from "@ugent/core"
import { Context, Duration, Effect, Layer, Option, Schema } from "effect"
import { dual } from "effect/Function"
import { RateLimiter } from "effect/persistence"
import { OnStoreError, type OnStoreErrorPolicy } from "./OnStoreError.ts"

/**
 * One limit: `limit` calls per `window`, with an allowance of `burst` more
 * calls at once (default 0). `limit` 0 refuses every call.
 *
 * @category models
 * @since 0.1.0
 */
export interface Limit {
  readonly limit: number
  readonly window: Duration.Input
  readonly burst?: number | undefined
}

/**
 * The limits of each scope; an empty list (or `false`) means no limit at that
 * scope.
 *
 * @category models
 * @since 0.1.0
 */
export interface Limits {
  readonly global: ReadonlyArray<Limit>
  readonly observer: ReadonlyArray<Limit>
  readonly tool: ReadonlyArray<Limit>
}

/**
 * The defaults of the design documents.
 *
 * @category constants
 * @since 0.1.0
 */
export const defaultLimits: Limits = {
  global: [
    { limit: 100, window: "1 minute" },
    { limit: 2000, window: "1 hour" }
  ],
  observer: [
    { limit: 10, window: "1 minute", burst: 3 },
    { limit: 200, window: "1 hour" }
  ],
  tool: []
}

/**
 * The limits in force when a {@link RateLimited} tool is given none: a
 * reference, so a server can set them from its recipe for a whole call tree.
 *
 * @category references
 * @since 0.1.0
 */
export const CurrentLimits = Context.Reference<Limits>("ugent/wrappers/RateLimited/Limits", {
  defaultValue: () => defaultLimits
})

/**
 * A call exceeded a rate limit and was not made. Never retried by `Retry`
 * (the caller should slow down, not hammer); `retryAfterMillis` says when a
 * call at that scope will be admitted again.
 *
 * **Example** (Reading the message)
 * ```ts
 * import { RateLimitedError } from "@ugent/wrappers"
 * const e = new RateLimitedError({ tool: "search.grep", scope: "observer", limit: 10, windowMillis: 60000, retryAfterMillis: 6000 })
 * console.log(e.message)
 * // => search.grep was not run: the per-observer rate limit (10 calls per 60 s) is used up. Wait 6 s before calling again, and batch or narrow your calls.
 * ```
 *
 * @category errors
 * @since 0.1.0
 */
export class RateLimitedError extends Schema.TaggedError<RateLimitedError>()("RateLimited", {
  tool: Schema.String,
  scope: Schema.Literals(["global", "observer", "tool"]),
  limit: Schema.Number,
  windowMillis: Schema.Number,
  retryAfterMillis: Schema.Number
}) {
  static readonly kind: ToolError.Kind = "rate_limited"
  override get message(): string {
    const scope = this.scope === "global" ? "global" : `per-${this.scope}`
    const wait = Math.max(1, Math.ceil(this.retryAfterMillis / 1000))
    return `${this.tool} was not run: the ${scope} rate limit (${this.limit} calls per ${this.windowMillis / 1000} s) is used up. Wait ${wait} s before calling again, and batch or narrow your calls.`
  }
}

/**
 * The call was not made because its rate limits could not be checked: the
 * limiter's store (a shared Redis) does not answer, and the policy is to
 * refuse what cannot be counted (`onStoreError: "fail"`). Kind
 * `unavailable`; never retried by `Retry` (the store is down, not the call).
 *
 * **Example** (Reading the message)
 * ```ts
 * import { RateLimiterUnavailable } from "@ugent/wrappers"
 * console.log(new RateLimiterUnavailable({ tool: "search.grep", retryAfterMillis: 1000 }).message)
 * // => search.grep was not run: its rate limits cannot be checked because the limiter's store (Redis) does not answer, and calls that cannot be counted are refused. Try again in 1 s. Operator: check that Redis is running and reachable, or admit calls uncounted while it is down (--on-store-error allow).
 * ```
 *
 * @category errors
 * @since 0.2.0
 */
export class RateLimiterUnavailable extends Schema.TaggedError<RateLimiterUnavailable>()("RateLimiterUnavailable", {
  tool: Schema.String,
  retryAfterMillis: Schema.Number
}) {
  static readonly kind: ToolError.Kind = "unavailable"
  static readonly retryable = false
  override get message(): string {
    const wait = Math.max(1, Math.ceil(this.retryAfterMillis / 1000))
    return `${this.tool} was not run: its rate limits cannot be checked because the limiter's store (Redis) does not answer, and calls that cannot be counted are refused. Try again in ${wait} s. Operator: check that Redis is running and reachable, or admit calls uncounted while it is down (--on-store-error allow).`
  }
}

/**
 * The options of {@link RateLimited}. A scope left out takes its limits from
 * {@link CurrentLimits} at call time; `false` turns a scope off.
 *
 * @category models
 * @since 0.1.0
 */
export interface RateLimitedOptions {
  readonly global?: ReadonlyArray<Limit> | false | undefined
  readonly observer?: ReadonlyArray<Limit> | false | undefined
  readonly tool?: ReadonlyArray<Limit> | false | undefined
  /** The per-tool key (default: the tool's name); tools sharing it share their per-tool limits. */
  readonly key?: string | undefined
  /**
   * Keep the per-tool limits per caller: the key includes the id of the
   * `Observer` in context, so each observer has its own bucket for each tool
   * (default `false`: one bucket per tool, shared by every caller). Callers
   * without an `Observer` share the tool's bucket.
   */
  readonly toolPerObserver?: boolean | undefined
  /** Prefix of every key in the store (default `"ugent:"`), to keep several deployments apart in one Redis. */
  readonly prefix?: string | undefined
  /**
   * When the store cannot be reached: admit the call uncounted (`"allow"`) or refuse it with
   * {@link RateLimiterUnavailable} (`"fail"`). Default: the {@link OnStoreError} reference (`"allow"`).
   */
  readonly onStoreError?: OnStoreErrorPolicy | undefined
}

/**
 * An in-memory `RateLimiter` for one process. For limits shared across
 * machines, provide `RateLimiter.layer` over `RateLimiter.layerStoreRedis()`
 * from `effect/persistence` instead.
 *
 * @category layers
 * @since 0.1.0
 */
export const layerMemory: Layer.Layer<RateLimiter.RateLimiter> = RateLimiter.layer.pipe(
  Layer.provide(RateLimiter.layerStoreMemory)
)

/**
 * A limit ready to check: everything but the key's id, worked out once per
 * list of limits.
 *
 * @category models
 * @since 0.2.0
 */
export interface Compiled {
  readonly scope: "global" | "observer" | "tool"
  /** The limit is part of the key: two configurations never share one bucket with different rules. */
  readonly suffix: string
  readonly limit: number
  readonly windowMillis: number
  readonly capacity: number
  /** The time to refill `capacity` tokens: the limiter's own window for a bucket of `capacity`. */
  readonly refillWindow: Duration.Duration
}

const compiledCache = new WeakMap<ReadonlyArray<Limit>, ReadonlyArray<Compiled>>()

const compile = (scope: Compiled["scope"], limits: ReadonlyArray<Limit>): ReadonlyArray<Compiled> =>
  limits.map((l) => {
    const windowMillis = Duration.toMillis(Duration.fromInputUnsafe(l.window))
    const capacity = l.limit === 0 ? 0 : l.limit + Math.max(0, l.burst ?? 0)
    return {
      scope,
      suffix: `${l.limit}/${windowMillis}/${capacity}`,
      limit: l.limit,
      windowMillis,
      capacity,
      refillWindow: Duration.millis(l.limit === 0 ? windowMillis : (windowMillis * capacity) / l.limit)
    }
  })

/** The compiled form of a list of limits, kept per list (the lists in force rarely change). */
const compiled = (scope: Compiled["scope"], limits: ReadonlyArray<Limit>): ReadonlyArray<Compiled> => {
  let found = compiledCache.get(limits)
  if (found === undefined || found[0]?.scope !== scope) {
    found = compile(scope, limits)
    compiledCache.set(limits, found)
  }
  return found
}

/**
 * Limits compiled once: what {@link admit} checks.
 *
 * @category models
 * @since 0.2.0
 */
export interface Checks {
  readonly global: ReadonlyArray<Compiled>
  readonly observer: ReadonlyArray<Compiled>
  readonly tool: ReadonlyArray<Compiled>
}

/**
 * Compiles limits for {@link admit}.
 *
 * @category constructors
 * @since 0.2.0
 */
export const checks = (limits: Limits): Checks => ({
  global: compiled("global", limits.global),
  observer: compiled("observer", limits.observer),
  tool: compiled("tool", limits.tool)
})

/**
 * The limiter's stage of one call: a token of every bucket that applies,
 * narrow scopes first (the caller's, the tool's, then the global ones, so a
 * call refused per caller does not spend a global token), or the first
 * refusal. `ids` name the caller's and the tool's buckets. What the wrapper
 * does around each call, and what the AGENTESE road does in its place.
 *
 * @category stages
 * @since 0.2.0
 */
export const admit = (
  limiter: RateLimiter.RateLimiter,
  limits: Checks,
  ids: { readonly observer: string; readonly tool: string },
  options: { readonly tool: string; readonly prefix?: string | undefined; readonly onStoreError: OnStoreErrorPolicy }
): Effect.Effect<void, RateLimitedError | RateLimiterUnavailable> => {
  const prefix = options.prefix ?? "ugent:"
  const refused = (check: Compiled, retryAfterMillis: number) =>
    new RateLimitedError({
      tool: options.tool,
      scope: check.scope,
      limit: check.limit,
      windowMillis: check.windowMillis,
      retryAfterMillis
    })
  const consume = (check: Compiled, id: string): Effect.Effect<unknown, RateLimitedError | RateLimiterUnavailable> =>
    // A bucket of no tokens: nothing to ask the store.
    check.capacity === 0
      ? Effect.fail(refused(check, check.windowMillis))
      : limiter
          .consume({
            key: `${prefix}${check.scope}:${id}:${check.suffix}`,
            algorithm: "token-bucket",
            onExceeded: "fail",
            // A bucket of `capacity` tokens refilled at `limit` per window.
            limit: check.capacity,
            window: check.refillWindow
          })
          .pipe(
            Effect.catchTag("RateLimiterError", (e): Effect.Effect<void, RateLimitedError | RateLimiterUnavailable> => {
              const reason = e.reason
              if (reason._tag === "RateLimitExceeded") {
                return Effect.fail(refused(check, Math.max(1, Math.ceil(Duration.toMillis(reason.retryAfter)))))
              }
              // The store's outage is logged once by its connection (see Stores.layerRedis), not per call.
              return options.onStoreError === "allow"
                ? Effect.logDebug(`RateLimited: the limiter's store does not answer; ${options.tool} runs uncounted`)
                : Effect.fail(new RateLimiterUnavailable({ tool: options.tool, retryAfterMillis: 1000 }))
            })
          )
  let effect: Effect.Effect<unknown, RateLimitedError | RateLimiterUnavailable> = Effect.void
  for (const check of limits.observer) effect = Effect.andThen(effect, consume(check, ids.observer))
  for (const check of limits.tool) effect = Effect.andThen(effect, consume(check, ids.tool))
  for (const check of limits.global) effect = Effect.andThen(effect, consume(check, "all"))
  return Effect.asVoid(effect)
}

// The wrapper itself; exported below with its layer and references attached.
const rateLimited: {
  (
    options?: RateLimitedOptions
  ): <A, B, E, R>(
    self: Tool.Tool<A, B, E, R>
  ) => Tool.Tool<A, B, E | RateLimitedError | RateLimiterUnavailable, R | RateLimiter.RateLimiter>
  <A, B, E, R>(
    self: Tool.Tool<A, B, E, R>,
    options?: RateLimitedOptions
  ): Tool.Tool<A, B, E | RateLimitedError | RateLimiterUnavailable, R | RateLimiter.RateLimiter>
} = dual(
  (args) => Tool.isTool(args[0]),
  <A, B, E, R>(
    self: Tool.Tool<A, B, E, R>,
    options?: RateLimitedOptions
  ): Tool.Tool<A, B, E | RateLimitedError | RateLimiterUnavailable, R | RateLimiter.RateLimiter> => {
    const stage = { tool: self.name, prefix: options?.prefix }
    const toolKey = options?.key ?? self.name
    const toolPerObserver = options?.toolPerObserver ?? false
    const fixedPolicy = options?.onStoreError

    // Limits given as options are compiled once; those read from the reference, once per list.
    const fixed = {
      observer: options?.observer === undefined ? undefined : compile("observer", options.observer || []),
      tool: options?.tool === undefined ? undefined : compile("tool", options.tool || []),
      global: options?.global === undefined ? undefined : compile("global", options.global || [])
    }

    return Tool.wrap(
      self,
      (run) => (a) =>
        // One read of the context instead of one effect per service: this runs on every call.
        Effect.contextWith((context: Context.Context<RateLimiter.RateLimiter>) => {
          const limiter = Context.get(context, RateLimiter.RateLimiter)
          const current = Context.get(context, CurrentLimits)
          const observer = Context.getOption(context, Observer.Observer)
          const policy = fixedPolicy ?? Context.get(context, OnStoreError)
          // JSON keeps the pair apart whatever characters the tool key and the observer id hold.
          const toolId =
            toolPerObserver && Option.isSome(observer) ? JSON.stringify([toolKey, observer.value.id]) : toolKey
          const effect = admit(
            limiter,
            {
              observer: Option.isSome(observer) ? (fixed.observer ?? compiled("observer", current.observer)) : [],
              tool: fixed.tool ?? compiled("tool", current.tool),
              global: fixed.global ?? compiled("global", current.global)
            },
            { observer: Option.isSome(observer) ? observer.value.id : "", tool: toolId },
            { ...stage, onStoreError: policy }
          )
          return Effect.andThen(effect, run(a))
        }) as Effect.Effect<B, E | RateLimitedError | RateLimiterUnavailable, R | RateLimiter.RateLimiter>,
      { failure: Tool.failureWith(self, RateLimitedError, RateLimiterUnavailable) }
    )
  }
)

/**
 * Rate-limits a tool per observer, per tool and globally (see the module
 * documentation for the algorithm and defaults). Limits are checked narrow
 * first (observer, tool, global), each consuming one token; a call refused at
 * one scope has spent the tokens of the scopes checked before it, so under
 * contention the limits err on the side of refusing. Needs a `RateLimiter`
 * (see `RateLimited.layerMemory`). Dual. At hand: `RateLimited.layerMemory`,
 * `RateLimited.defaults`, `RateLimited.Limits` (the reference of the limits
 * in force).
 *
 * **Example** (Three calls a minute, no burst allowance: the fourth is refused)
 * ```ts
 * import { Observer, Tool, Trust } from "@ugent/core"
 * import { RateLimited } from "@ugent/wrappers"
 * import { Effect, Layer } from "effect"
 * const ping = Tool.fromFunction({ name: "ping", f: () => "pong" })
 * const limited = ping.pipe(RateLimited({ observer: [{ limit: 3, window: "1 minute" }] }))
 * const results = Effect.forEach([1, 2, 3, 4], () => Effect.match(limited.run(null), { onFailure: (e) => e._tag, onSuccess: (s) => s }))
 * const env = Layer.mergeAll(Trust.grant(0), RateLimited.layerMemory, Observer.layer({ id: "agent-1", trust: 0 }))
 * console.log(Effect.runSync(results.pipe(Effect.provide(env))))
 * // => [ 'pong', 'pong', 'pong', 'RateLimited' ]
 * ```
 *
 * @category wrappers
 * @since 0.1.0
 */
export const RateLimited: typeof rateLimited & {
  readonly layerMemory: typeof layerMemory
  readonly defaults: typeof defaultLimits
  readonly Limits: typeof CurrentLimits
  readonly OnStoreError: typeof OnStoreError
  readonly admit: typeof admit
  readonly checks: typeof checks
} = Object.assign(rateLimited, {
  layerMemory,
  defaults: defaultLimits,
  Limits: CurrentLimits,
  OnStoreError,
  admit,
  checks
})
