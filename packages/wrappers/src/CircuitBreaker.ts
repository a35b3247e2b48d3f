/**
 * `CircuitBreaker` stops calling a tool that keeps failing. After the trip
 * policy's failures (default: 5 in a row) the circuit opens and calls fail at
 * once with a typed {@link CircuitOpen} carrying when to try again; once the
 * open duration has passed, one trial call at a time is let through (half
 * open): its success closes the circuit, its failure opens it again.
 *
 * It is Effect's `effect/persistence` `CircuitBreaker`; the state lives in the
 * `CircuitBreakerStore` provided (in memory, or Redis to share it across
 * machines), keyed per tool: by the tool's name or an explicit key.
 *
 * @since 0.1.0
 */
import { Tool, ToolError } from "@ugent/core"
import { Cause, Context, Duration, Effect, Exit, Predicate, Schedule, Schema, Scope } from "effect"
import { dual } from "effect/Function"
import { CircuitBreaker as Breaker } from "effect/persistence"
import { OnStoreError, type OnStoreErrorPolicy } from "./OnStoreError.ts"

/**
 * The circuit of a tool is open (its recent calls failed) or half open (a
 * trial call is running), so the call was not made. Never retried by `Retry`;
 * `retryAfterMillis` says when the circuit lets a trial call through.
 *
 * **Example** (Reading the message)
 * ```ts
 * import { CircuitOpen } from "@ugent/wrappers"
 * console.log(new CircuitOpen({ tool: "web.fetch", key: "web.fetch", state: "open", retryAfterMillis: 30000 }).message)
 * // => web.fetch is paused: its recent calls failed, so its circuit breaker is open. Try again in 30 s, or use another tool meanwhile.
 * ```
 *
 * @category errors
 * @since 0.1.0
 */
export class CircuitOpen extends Schema.TaggedError<CircuitOpen>()("CircuitOpen", {
  tool: Schema.String,
  key: Schema.String,
  state: Schema.Literals(["open", "half-open", "unavailable"]),
  retryAfterMillis: Schema.Number
}) {
  static readonly kind: ToolError.Kind = "unavailable"
  /** Never retried: the caller should wait `retryAfterMillis`, not hammer an open circuit. */
  static readonly retryable = false
  override get message(): string {
    const seconds = Math.max(1, Math.ceil(this.retryAfterMillis / 1000))
    const messages: Record<typeof this.state, string> = {
      open: `${this.tool} is paused: its recent calls failed, so its circuit breaker is open. Try again in ${seconds} s, or use another tool meanwhile.`,
      "half-open": `${this.tool} is being tested with one trial call after recent failures. Try again in ${seconds} s.`,
      unavailable: `${this.tool} was not called: the circuit breaker's state store (Redis) does not answer, and calls it cannot record are refused. Try again in ${seconds} s. Operator: check that Redis is running and reachable, or run calls unrecorded while it is down (--on-store-error allow).`
    }
    return messages[this.state]
  }
}

/**
 * The options of {@link CircuitBreaker}.
 *
 * @category models
 * @since 0.1.0
 */
export interface CircuitBreakerOptions<E = unknown> {
  /** The circuit's key in the store: tools sharing a key share a circuit. Default: the tool's name. */
  readonly key?: string | undefined
  /** When a closed circuit opens. Default `consecutive(5)`. */
  readonly tripPolicy?: Breaker.TripPolicy | undefined
  /** How long the circuit stays open; a `Schedule` gives the n-th opening its n-th delay. Default 30 s. */
  readonly openDuration?: Duration.Input | Schedule.Schedule<unknown, number> | undefined
  /** The longest a `retryAfterMillis` hint may keep the circuit open (default 1 hour). */
  readonly maxOpenDuration?: Duration.Input | undefined
  /** Which typed failures count against the tool. Default: the tool's own faults (`ToolError.isToolFault`: kinds failed, unavailable, timeout), never a caller's mistake or a refusal. Defects always count. */
  readonly isFailure?: ((error: E) => boolean) | undefined
  /**
   * When the store cannot be reached: run the call unrecorded (`"allow"`) or refuse it (`"fail"`:
   * `CircuitOpen` with state `"unavailable"`). Default: the `OnStoreError` reference (`"allow"`).
   */
  readonly onStoreError?: OnStoreErrorPolicy | undefined
}

/**
 * A consecutive-failures trip policy (re-exported from `effect/persistence`).
 *
 * @category trip policies
 * @since 0.1.0
 */
export const consecutive: (failures: number) => Breaker.TripPolicy = Breaker.consecutive

/**
 * A failure-rate trip policy over the last `size` calls (re-exported from `effect/persistence`).
 *
 * @category trip policies
 * @since 0.1.0
 */
export const rate: (options: {
  readonly threshold?: number | undefined
  readonly size?: number | undefined
  readonly minimumCalls?: number | undefined
}) => Breaker.TripPolicy = Breaker.rate

/**
 * An in-memory circuit store, for one process (use `effect/persistence`'s
 * `CircuitBreaker.layerStoreRedis` to share circuits across machines).
 *
 * @category layers
 * @since 0.1.0
 */
export const layerMemory = Breaker.layerStoreMemory

const retryAfterOf = (e: unknown): Duration.Duration | undefined => {
  const ms = Predicate.hasProperty(e, "retryAfterMillis") ? e.retryAfterMillis : undefined
  return typeof ms === "number" && Number.isFinite(ms) && ms >= 0 ? Duration.millis(ms) : undefined
}

/**
 * The breaker's stage of one call, for a tool named `tool`: admitted by the
 * store (or refused, `CircuitOpen`), run, and its outcome recorded, as
 * Effect's `CircuitBreaker.execute` does; `onStoreError` says what to do when
 * the store does not answer. What the wrapper does around each call, and what
 * the AGENTESE road does in its place.
 *
 * @category stages
 * @since 0.2.0
 */
export const stage = <E = unknown>(
  tool: string,
  options?: CircuitBreakerOptions<E>
): (<B, E2 extends E, R>(
  store: Breaker.CircuitBreakerStore["Service"],
  effect: Effect.Effect<B, E2, R>,
  onStoreError: OnStoreErrorPolicy
) => Effect.Effect<B, E2 | CircuitOpen, R>) => {
  const key = options?.key ?? tool
  const isFailure = options?.isFailure ?? ToolError.isToolFault
  const breakerOptions = {
    tripPolicy: options?.tripPolicy ?? Breaker.consecutive(5),
    openDuration: options?.openDuration ?? "30 seconds",
    maxOpenDuration: options?.maxOpenDuration
  }
  const fixedPolicy = options?.onStoreError
  // One breaker (policy + transition stream) per store and store-error policy; the circuit state lives in the store.
  const breakers = new WeakMap<
    Breaker.CircuitBreakerStore["Service"],
    Map<OnStoreErrorPolicy, Breaker.CircuitBreaker>
  >()
  const breakerFor = (store: Breaker.CircuitBreakerStore["Service"], onStoreError: OnStoreErrorPolicy) => {
    const known = breakers.get(store)?.get(onStoreError)
    if (known !== undefined) return Effect.succeed(known)
    return Breaker.make({ ...breakerOptions, onStoreError }).pipe(
      // The breaker's only resource is its transition stream, kept as long as the store is.
      Effect.provideService(Scope.Scope, Scope.makeUnsafe()),
      Effect.provideService(Breaker.CircuitBreakerStore, store),
      Effect.tap((made) =>
        Effect.sync(() => {
          const byPolicy = breakers.get(store) ?? new Map<OnStoreErrorPolicy, Breaker.CircuitBreaker>()
          byPolicy.set(onStoreError, made)
          breakers.set(store, byPolicy)
        })
      )
    )
  }
  const classify = (exit: Exit.Exit<unknown, unknown>): Breaker.Outcome => {
    if (Exit.isSuccess(exit)) return Breaker.success
    const error = Cause.findErrorOption(exit.cause)
    if (error._tag === "None") return Breaker.failure()
    // The errors of a guarded effect are the E the options were given for.
    if (!isFailure(error.value as E)) return Breaker.ignored
    return Breaker.failure({ retryAfter: retryAfterOf(error.value) })
  }
  const toCircuitOpen = (e: Breaker.CircuitBreakerError): CircuitOpen => {
    const reason = e.reason
    switch (reason._tag) {
      case "CircuitOpen":
        return new CircuitOpen({
          tool,
          key,
          state: "open",
          retryAfterMillis: Duration.toMillis(reason.retryAfter)
        })
      case "CircuitHalfOpen":
        // The trial call's length is unknown; a second is a reasonable pause before asking again.
        return new CircuitOpen({ tool, key, state: "half-open", retryAfterMillis: 1000 })
      case "CircuitBreakerStoreError":
        return new CircuitOpen({ tool, key, state: "unavailable", retryAfterMillis: 1000 })
    }
  }
  const fixedOpen = Schedule.isSchedule(breakerOptions.openDuration)
    ? undefined
    : Duration.fromInputUnsafe(breakerOptions.openDuration)
  const maxOpen = Duration.fromInputUnsafe(breakerOptions.maxOpenDuration ?? "1 hour")
  // What `record` is told to open the circuit for, as `CircuitBreaker.execute` works it out for a fixed duration.
  const openFor = (outcome: Breaker.Outcome, admission: Breaker.Admission, open: Duration.Duration) =>
    outcome._tag === "Ignored" ||
    (outcome._tag === "Success" && (admission.probe || breakerOptions.tripPolicy._tag === "Consecutive"))
      ? Duration.zero
      : outcome._tag === "Failure" && outcome.retryAfter !== undefined
        ? Duration.max(open, Duration.min(outcome.retryAfter, maxOpen))
        : open
  const rejected = (e: Breaker.CircuitBreakerError) => Effect.fail(toCircuitOpen(e))
  // The store's own admit and record around the call: `CircuitBreaker.execute` adds a transition stream and more
  // steps, and a guarded call cost 15 µs through it against 6 µs here (in a loop), on every call of the road.
  const direct = <B, E2, R>(
    store: Breaker.CircuitBreakerStore["Service"],
    effect: Effect.Effect<B, E2, R>,
    open: Duration.Duration,
    onStoreError: OnStoreErrorPolicy
  ): Effect.Effect<B, E2 | CircuitOpen, R> =>
    Effect.uninterruptibleMask((restore) => {
      // The admission's scope (a half-open probe's turn) closes however the call ends, as `execute`'s does.
      const scope = Scope.makeUnsafe()
      const call = Effect.flatMap(
        Effect.exit(Scope.provide(store.admit(key), scope)),
        (admitted): Effect.Effect<B, E2 | CircuitOpen, R> => {
          if (Exit.isFailure(admitted)) {
            const error = Cause.findErrorOption(admitted.cause)
            // No typed error: a defect or an interruption, passed on as it is.
            if (error._tag === "None") return Effect.failCause(admitted.cause as Cause.Cause<never>)
            if (error.value.reason._tag !== "CircuitBreakerStoreError" || onStoreError === "fail") {
              return rejected(error.value)
            }
            // The store's outage is logged once by its connection (see Stores.layerRedis), not per call.
            return Effect.andThen(
              Effect.logDebug(`CircuitBreaker: the breaker's store does not answer; ${tool} runs unrecorded`),
              restore(effect)
            )
          }
          const admission = admitted.value
          return Effect.flatMap(Effect.exit(restore(effect)), (exit) => {
            const outcome =
              Exit.isFailure(exit) && Cause.hasInterruptsOnly(exit.cause) ? Breaker.ignored : classify(exit)
            const record = store
              .record({
                key,
                generation: admission.generation,
                outcome: outcome._tag,
                tripPolicy: breakerOptions.tripPolicy,
                openFor: openFor(outcome, admission, open)
              })
              .pipe(
                Effect.catch(() =>
                  Effect.logDebug(`CircuitBreaker: the breaker's store did not record the outcome of ${tool}`)
                )
              )
            return Effect.andThen(record, exit)
          })
        }
      )
      return Effect.onExit(call, (exit) => Scope.close(scope, exit))
    })
  return <B, E2 extends E, R>(
    store: Breaker.CircuitBreakerStore["Service"],
    effect: Effect.Effect<B, E2, R>,
    policy: OnStoreErrorPolicy
  ): Effect.Effect<B, E2 | CircuitOpen, R> => {
    const onStoreError = fixedPolicy ?? policy
    if (fixedOpen !== undefined) return direct(store, effect, fixedOpen, onStoreError)
    return Effect.flatMap(breakerFor(store, onStoreError), (breaker) =>
      breaker
        .execute(effect, { key, classify })
        .pipe(
          Effect.catchIf((e): e is Breaker.CircuitBreakerError => e instanceof Breaker.CircuitBreakerError, rejected)
        )
    )
  }
}

// The wrapper itself; exported below with its trip policies and store layer attached.
const circuitBreaker: {
  <E = unknown>(
    options?: CircuitBreakerOptions<E>
  ): <A, B, E2 extends E, R>(
    self: Tool.Tool<A, B, E2, R>
  ) => Tool.Tool<A, B, E2 | CircuitOpen, R | Breaker.CircuitBreakerStore>
  <A, B, E, R>(
    self: Tool.Tool<A, B, E, R>,
    options?: CircuitBreakerOptions<E>
  ): Tool.Tool<A, B, E | CircuitOpen, R | Breaker.CircuitBreakerStore>
} = dual(
  (args) => Tool.isTool(args[0]),
  <A, B, E, R>(
    self: Tool.Tool<A, B, E, R>,
    options?: CircuitBreakerOptions<E>
  ): Tool.Tool<A, B, E | CircuitOpen, R | Breaker.CircuitBreakerStore> => {
    const guard = stage(self.name, options)
    return Tool.wrap(
      self,
      (run) => (a) =>
        Effect.contextWith((context: Context.Context<Breaker.CircuitBreakerStore>) =>
          guard(Context.get(context, Breaker.CircuitBreakerStore), run(a), Context.get(context, OnStoreError))
        ) as Effect.Effect<B, E | CircuitOpen, R | Breaker.CircuitBreakerStore>,
      { failure: Tool.failureWith(self, CircuitOpen) }
    )
  }
)

/**
 * Guards a tool with a circuit breaker. Calls are admitted and recorded by
 * the `CircuitBreakerStore` in context (see {@link layerMemory}), by the
 * rules of Effect's `CircuitBreaker` (whose `execute` runs them when the open
 * duration is a `Schedule`): when the circuit is open the call fails at once with
 * {@link CircuitOpen}; when half open only one trial call runs at a time, and
 * an interrupted trial gives its turn back. A failure's `retryAfterMillis`
 * hint keeps the circuit open at least that long (up to `maxOpenDuration`).
 * Dual. The trip policies and the memory store are at hand as
 * `CircuitBreaker.consecutive`, `CircuitBreaker.rate` and
 * `CircuitBreaker.layerMemory`.
 *
 * **Example** (Two failures open the circuit)
 * ```ts
 * import { Tool, Trust } from "@ugent/core"
 * import { CircuitBreaker } from "@ugent/wrappers"
 * import { Effect, Layer, Schema } from "effect"
 * class Down extends Schema.TaggedError<Down>()("Down", {}) {}
 * const api = Tool.make({ name: "api.get", description: "A service that is down.", input: Schema.String, output: Schema.String, failure: Down, run: () => Effect.fail(new Down()) })
 * const guarded = api.pipe(CircuitBreaker({ tripPolicy: CircuitBreaker.consecutive(2), openDuration: "1 minute" }))
 * const tags = Effect.forEach([1, 2, 3], () => Effect.flip(guarded.run("x")).pipe(Effect.map((e) => e._tag)))
 * console.log(Effect.runSync(tags.pipe(Effect.provide(Layer.merge(Trust.grant(0), CircuitBreaker.layerMemory())))))
 * // => [ 'Down', 'Down', 'CircuitOpen' ]
 * ```
 *
 * @category wrappers
 * @since 0.1.0
 */
export const CircuitBreaker: typeof circuitBreaker & {
  readonly consecutive: typeof consecutive
  readonly rate: typeof rate
  readonly layerMemory: typeof layerMemory
  readonly OnStoreError: typeof OnStoreError
  readonly stage: typeof stage
} = Object.assign(circuitBreaker, { consecutive, rate, layerMemory, OnStoreError, stage })
