/**
 * `Timeout` bounds the wall time of a call. When the limit passes, the call is
 * interrupted (so everything it acquired is released: scopes close, child
 * processes are killed with their process group, permits are returned) and
 * the tool fails with a typed {@link TimedOut} whose message tells the caller
 * what to do next.
 *
 * @since 0.1.0
 */
import { Tool, type ToolError } from "@ugent/core"
import { Duration, Effect, Schema } from "effect"
import { dual } from "effect/Function"

/**
 * A call took longer than its limit and was stopped. `retryable` is true by
 * default: a slow network or a busy machine may answer in time on a second
 * try (`Retry` reads it).
 *
 * **Example** (Reading the message)
 * ```ts
 * import { TimedOut } from "@ugent/wrappers"
 * console.log(new TimedOut({ tool: "search.grep", timeoutMillis: 5000, retryable: true }).message)
 * // => search.grep did not finish within 5000 ms and was stopped. Narrow the call (a smaller path, a tighter pattern, fewer files) or give it a longer timeout.
 * ```
 *
 * @category errors
 * @since 0.1.0
 */
export class TimedOut extends Schema.TaggedError<TimedOut>()("TimedOut", {
  tool: Schema.String,
  timeoutMillis: Schema.Number,
  retryable: Schema.Boolean
}) {
  static readonly kind: ToolError.Kind = "timeout"
  override get message(): string {
    return `${this.tool} did not finish within ${this.timeoutMillis} ms and was stopped. Narrow the call (a smaller path, a tighter pattern, fewer files) or give it a longer timeout.`
  }
}

/**
 * The options of {@link Timeout}: a duration, or a duration with whether the
 * resulting {@link TimedOut} may be retried.
 *
 * @category models
 * @since 0.1.0
 */
export type TimeoutOptions =
  | Duration.Input
  | {
      readonly duration: Duration.Input
      /** Default true. */
      readonly retryable?: boolean | undefined
    }

const isOptionsObject = (u: TimeoutOptions): u is Extract<TimeoutOptions, { readonly duration: Duration.Input }> =>
  typeof u === "object" && u !== null && "duration" in u

/**
 * Bounds each call to a duration. Past it, the call is interrupted (its
 * resources are released before the failure is reported) and fails with
 * {@link TimedOut}, which the tool's failure schema now includes. Dual.
 *
 * **Example** (A slow call is stopped)
 * ```ts
 * import { Tool } from "@ugent/core"
 * import { Timeout } from "@ugent/wrappers"
 * import { Effect, Schema } from "effect"
 * const slow = Tool.fromFunction({ name: "slow", input: Schema.Number, output: Schema.Number, f: (n: number) => n })
 * const sleepy = Tool.wrap(slow, (run) => (n) => Effect.delay(run(n), "1 second"))
 * const bounded = sleepy.pipe(Timeout("10 millis"))
 * const error = await Effect.runPromise(Effect.flip(bounded.run(1)))
 * console.log(error._tag, error.timeoutMillis)
 * // => TimedOut 10
 * ```
 *
 * @category wrappers
 * @since 0.1.0
 */
export const Timeout: {
  (options: TimeoutOptions): <A, B, E, R>(self: Tool.Tool<A, B, E, R>) => Tool.Tool<A, B, E | TimedOut, R>
  <A, B, E, R>(self: Tool.Tool<A, B, E, R>, options: TimeoutOptions): Tool.Tool<A, B, E | TimedOut, R>
} = dual(2, <A, B, E, R>(self: Tool.Tool<A, B, E, R>, options: TimeoutOptions): Tool.Tool<A, B, E | TimedOut, R> => {
  const duration = Duration.fromInputUnsafe(isOptionsObject(options) ? options.duration : options)
  const retryable = isOptionsObject(options) ? (options.retryable ?? true) : true
  const timeoutMillis = Duration.toMillis(duration)
  return Tool.wrap(
    self,
    (run) => (a) =>
      Effect.timeoutOrElse(run(a), {
        duration,
        orElse: () => Effect.fail(new TimedOut({ tool: self.name, timeoutMillis, retryable }))
      }),
    { failure: Tool.failureWith(self, TimedOut) }
  )
})
