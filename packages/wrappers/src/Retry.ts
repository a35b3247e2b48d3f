/**
 * `Retry` runs a call again when it fails with an error that says a second try
 * may succeed (`ToolError.isRetryable`: a `retryable: true` field), waiting
 * longer each time: exponential backoff with jitter, capped, for a bounded
 * number of tries. Policy errors (`InvalidInput`, `TrustDenied`,
 * `ApprovalDenied`, `Forbidden`, `CircuitOpen`, `RateLimited`, …) are never
 * retried, and a server's `retryAfterMillis` hint is honoured up to the cap.
 * Built on Effect's `Schedule`.
 *
 * @since 0.1.0
 */
import { type Tool, ToolError, Tool as ToolModule } from "@ugent/core"
import { Context, Duration, Effect, Schedule } from "effect"
import { dual } from "effect/Function"

/**
 * The options of {@link Retry}.
 *
 * @category models
 * @since 0.1.0
 */
export interface RetryOptions<E = unknown> {
  /** How many times a failed call is tried again (default 3, so at most 4 runs). */
  readonly times?: number | undefined
  /** The first delay (default 100 ms); each next one is `factor` times longer. */
  readonly base?: Duration.Input | undefined
  /** Default 2. */
  readonly factor?: number | undefined
  /** The longest single wait, retry-after hints included (default 10 s). */
  readonly cap?: Duration.Input | undefined
  /** Scale each delay by a random factor in [0.8, 1.2] so that callers do not retry in step (default true). */
  readonly jitter?: boolean | undefined
  /** A further condition on the error; it can narrow what is retried, never widen it past `isRetryable`. */
  readonly while?: ((error: E) => boolean) | undefined
}

/**
 * The number of the attempt in progress (1 for the first run, 2 for the first
 * retry, …) inside a {@link Retry}; 1 outside any. `Traced` records it.
 *
 * @category references
 * @since 0.1.0
 */
export const RetryAttempt = Context.Reference<number>("ugent/wrappers/Retry/CurrentAttempt", {
  defaultValue: () => 1
})

/**
 * The retry policy of {@link Retry} as a `Schedule` fed with the errors:
 * `min(exponential(base, factor) jittered, spaced(cap))`, so no delay exceeds
 * the cap; a `retryAfterMillis` hint raises the delay to the hint (capped);
 * it stops after `times` retries, or at the first error that is not
 * retryable.
 *
 * @category schedules
 * @since 0.1.0
 */
export const retryPolicy = <E>(options?: RetryOptions<E>): Schedule.Schedule<Duration.Duration, E> => {
  const cap = Duration.fromInputUnsafe(options?.cap ?? "10 seconds")
  const capMillis = Duration.toMillis(cap)
  const backoff = Schedule.exponential(options?.base ?? "100 millis", options?.factor ?? 2)
  const extra = options?.while
  return Schedule.min([options?.jitter === false ? backoff : Schedule.jittered(backoff), Schedule.spaced(cap)]).pipe(
    Schedule.setInputType<E>(),
    Schedule.modifyDelay(({ input, duration }) => {
      const hint = ToolError.retryAfterMillis(input)
      return Effect.succeed(
        hint === undefined
          ? duration
          : Duration.millis(Math.max(Duration.toMillis(duration), Math.min(hint, capMillis)))
      )
    }),
    Schedule.upTo({ times: options?.times ?? 3 }),
    Schedule.while(({ input }) => ToolError.isRetryable(input) && (extra === undefined || extra(input)))
  )
}

// The wrapper itself; exported below with its policy and attempt reference attached.
const retry: {
  <E = unknown>(
    options?: RetryOptions<E>
  ): <A, B, E2 extends E, R>(self: Tool.Tool<A, B, E2, R>) => Tool.Tool<A, B, E2, R>
  <A, B, E, R>(self: Tool.Tool<A, B, E, R>, options?: RetryOptions<E>): Tool.Tool<A, B, E, R>
} = dual(
  (args) => ToolModule.isTool(args[0]),
  <A, B, E, R>(self: Tool.Tool<A, B, E, R>, options?: RetryOptions<E>): Tool.Tool<A, B, E, R> => {
    const schedule = retryPolicy<E>(options)
    const extra = options?.while
    return ToolModule.wrap(
      self,
      (run) => (a) =>
        // The first attempt runs outside the schedule: a call that succeeds pays for no retry machinery.
        Effect.catch(Effect.provideService(run(a), RetryAttempt, 1), (first) => {
          if (!ToolError.isRetryable(first) || (extra !== undefined && !extra(first))) return Effect.fail(first)
          let attempt = 1
          let replayed = false
          const again = Effect.suspend(() => {
            // The first failure is replayed into the schedule, so that its delay and its hint apply.
            if (!replayed) {
              replayed = true
              return Effect.fail(first)
            }
            attempt++
            return Effect.andThen(
              Effect.annotateCurrentSpan("ugent.retry.attempt", attempt),
              Effect.provideService(run(a), RetryAttempt, attempt)
            )
          })
          return Effect.retry(again, schedule)
        })
    )
  }
)

/**
 * Retries a tool's retryable failures with capped, jittered exponential
 * backoff (see {@link retryPolicy}). The result fails with the last error when the
 * tries run out, and at once with an error that is not retryable. Each attempt
 * runs with {@link RetryAttempt} set, and each retry annotates the current
 * span with `ugent.retry.attempt`; a call that succeeds the first time pays
 * for no schedule. Dual. The schedule is at hand as `Retry.policy`
 * and the attempt reference as `Retry.Attempt`.
 *
 * **Example** (A flaky call succeeds on the third try)
 * ```ts
 * import { Tool, Trust } from "@ugent/core"
 * import { Retry } from "@ugent/wrappers"
 * import { Effect, Schema } from "effect"
 * class Busy extends Schema.TaggedError<Busy>()("Busy", { retryable: Schema.Boolean }) {}
 * let calls = 0
 * const flaky = Tool.make({
 *   name: "api.get",
 *   description: "A busy server.",
 *   input: Schema.Struct({ id: Schema.String }),
 *   output: Schema.String,
 *   failure: Busy,
 *   run: ({ id }) => (++calls < 3 ? Effect.fail(new Busy({ retryable: true })) : Effect.succeed(`item ${id}`))
 * })
 * const robust = flaky.pipe(Retry({ times: 5, base: "1 millis" }))
 * const result = await Effect.runPromise(robust.run({ id: "7" }).pipe(Effect.provide(Trust.grant(0))))
 * console.log(result, calls)
 * // => item 7 3
 * ```
 *
 * @category wrappers
 * @since 0.1.0
 */
export const Retry: typeof retry & {
  readonly policy: typeof retryPolicy
  readonly Attempt: typeof RetryAttempt
} = Object.assign(retry, { policy: retryPolicy, Attempt: RetryAttempt })
