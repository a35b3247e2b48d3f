import { assert, describe, it } from "@effect/vitest"
import { Boundary, Tool, ToolError, Trust } from "@ugent/core"
import { TimedOut, Timeout } from "@ugent/wrappers"
import { Effect, Exit, Fiber, Schema } from "effect"
import { TestClock } from "effect/testing"

const sleeper = (log?: Array<string>) =>
  Tool.make({
    name: "test.sleep",
    description: "Sleeps for the given milliseconds, holding a resource.",
    input: Schema.Struct({ millis: Schema.Number }),
    output: Schema.Number,
    run: ({ millis }) =>
      Effect.acquireUseRelease(
        Effect.sync(() => log?.push("acquired")),
        () => Effect.as(Effect.sleep(millis), millis),
        () => Effect.sync(() => log?.push("released"))
      )
  })

describe("Timeout", () => {
  it.effect("returns the result of a call that finishes in time", () =>
    Effect.gen(function* () {
      const fiber = yield* Effect.forkChild(Timeout(sleeper(), "1 second").run({ millis: 999 }))
      yield* TestClock.adjust("999 millis")
      assert.strictEqual(yield* Fiber.join(fiber), 999)
    }).pipe(Effect.provide(Trust.grant(0)))
  )

  it.effect("fails with TimedOut past the limit (virtual time)", () =>
    Effect.gen(function* () {
      const bounded = sleeper().pipe(Timeout("1 second"))
      const fiber = yield* Effect.forkChild(Effect.flip(bounded.run({ millis: 5000 })))
      yield* TestClock.adjust("1 second")
      const error = yield* Fiber.join(fiber)
      assert.instanceOf(error, TimedOut)
      assert.strictEqual(error.tool, "test.sleep")
      assert.strictEqual(error.timeoutMillis, 1000)
      assert.isTrue(ToolError.isRetryable(error))
      assert.match(error.message, /longer timeout/)
    }).pipe(Effect.provide(Trust.grant(0)))
  )

  it.effect("releases what the call held before reporting the timeout", () =>
    Effect.gen(function* () {
      const log: Array<string> = []
      const fiber = yield* Effect.forkChild(Effect.exit(Timeout(sleeper(log), "10 millis").run({ millis: 60_000 })))
      yield* TestClock.adjust("10 millis")
      const exit = yield* Fiber.join(fiber)
      assert.isTrue(Exit.isFailure(exit))
      assert.deepStrictEqual(log, ["acquired", "released"])
    }).pipe(Effect.provide(Trust.grant(0)))
  )

  it.effect("can mark its timeouts as not retryable", () =>
    Effect.gen(function* () {
      const fiber = yield* Effect.forkChild(
        Effect.flip(Timeout(sleeper(), { duration: "1 second", retryable: false }).run({ millis: 5000 }))
      )
      yield* TestClock.adjust("1 second")
      assert.isFalse(ToolError.isRetryable(yield* Fiber.join(fiber)))
    }).pipe(Effect.provide(Trust.grant(0)))
  )

  it.effect("adds TimedOut to the failure schema, so it encodes at a boundary", () =>
    Effect.gen(function* () {
      const bounded = Timeout(sleeper(), "1 second")
      const json = yield* Boundary.encodeFailure(
        bounded,
        new TimedOut({ tool: "x", timeoutMillis: 5, retryable: true })
      )
      assert.deepStrictEqual(
        { ...json, message: undefined },
        { _tag: "TimedOut", tool: "x", timeoutMillis: 5, retryable: true, message: undefined }
      )
      assert.isTrue(Schema.is(bounded.failure)(new TimedOut({ tool: "x", timeoutMillis: 5, retryable: true })))
    })
  )
})
