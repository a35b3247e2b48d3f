/**
 * Type-level guarantees of the wrappers, checked by `tsc`: each wrapper adds
 * exactly its own errors to `E` and its own services to `R`, in both the
 * data-first and the data-last style, and composes with the others in any
 * order.
 */
import { Tool, type Trust } from "@ugent/core"
import {
  Audited,
  type AuditStore,
  CircuitBreaker,
  type CircuitOpen,
  type CommandDenied,
  type MemoryStore,
  type OutputTooLarge,
  type OutsideWorkspace,
  RateLimited,
  type RateLimitedError,
  type RateLimiterUnavailable,
  Retry,
  Sandboxed,
  type StoreError,
  Summarized,
  type Summary,
  type TimedOut,
  Timeout,
  Traced,
  type TraceStore
} from "@ugent/wrappers"
import { Effect, Schema } from "effect"
import type { CircuitBreaker as Breaker, RateLimiter } from "effect/persistence"

type Equals<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false
const assertType = <T extends true>(_: T) => {}

class Down extends Schema.TaggedError<Down>()("Down", {}) {}
const api = Tool.make({
  name: "api.get",
  description: "Gets.",
  input: Schema.Struct({ id: Schema.String }),
  output: Schema.Number,
  failure: Down,
  run: () => Effect.succeed(1)
})

const timed = Timeout(api, "1 second")
assertType<Equals<Tool.Failure<typeof timed>, Down | TimedOut>>(true)
assertType<Equals<Tool.Requirements<typeof timed>, Trust.L0>>(true)

const retried = api.pipe(Retry({ times: 2 }))
assertType<Equals<Tool.Failure<typeof retried>, Down>>(true)

const guarded = api.pipe(CircuitBreaker())
assertType<Equals<Tool.Failure<typeof guarded>, Down | CircuitOpen>>(true)
assertType<Equals<Tool.Requirements<typeof guarded>, Trust.L0 | Breaker.CircuitBreakerStore>>(true)

const limited = RateLimited(api)
assertType<Equals<Tool.Failure<typeof limited>, Down | RateLimitedError | RateLimiterUnavailable>>(true)
assertType<Equals<Tool.Requirements<typeof limited>, Trust.L0 | RateLimiter.RateLimiter>>(true)

const sandboxed = api.pipe(Sandboxed())
assertType<Equals<Tool.Failure<typeof sandboxed>, Down | CommandDenied | OutsideWorkspace | OutputTooLarge | TimedOut>>(
  true
)

const traced = Traced(api)
assertType<Equals<Tool.Requirements<typeof traced>, Trust.L0 | TraceStore.TraceStore>>(true)
assertType<Equals<Tool.Output<typeof traced>, number>>(true)

const audited = api.pipe(Audited())
assertType<Equals<Tool.Failure<typeof audited>, Down | StoreError.StoreError>>(true)
assertType<Equals<Tool.Requirements<typeof audited>, Trust.L0 | AuditStore.AuditStore>>(true)

const summarized = Summarized(api)
assertType<Equals<Tool.Output<typeof summarized>, Summary>>(true)
assertType<Equals<Tool.Requirements<typeof summarized>, Trust.L0 | MemoryStore.MemoryStore>>(true)

// Any order composes, and the errors and services accumulate.
const stack = api.pipe(Timeout("1 second"), Retry(), CircuitBreaker(), Traced())
assertType<Equals<Tool.Failure<typeof stack>, Down | TimedOut | CircuitOpen>>(true)
assertType<Equals<Tool.Requirements<typeof stack>, Trust.L0 | Breaker.CircuitBreakerStore | TraceStore.TraceStore>>(
  true
)
assertType<Equals<Tool.Input<typeof stack>, { readonly id: string }>>(true)

// @ts-expect-error Timeout needs a duration
Timeout(api)
