import { assert, describe, it } from "@effect/vitest"
import { Observer, Tool, ToolError, Trust } from "@ugent/core"
import { RateLimited, RateLimitedError, Retry } from "@ugent/wrappers"
import { Effect, Exit, Fiber, Layer, Schema } from "effect"
import { TestClock } from "effect/testing"

const counter = (name = "test.ping") => {
  let runs = 0
  const tool = Tool.make({
    name,
    description: "Counts its runs.",
    input: Schema.Struct({ n: Schema.Number }),
    output: Schema.Number,
    run: ({ n }) =>
      Effect.sync(() => {
        runs++
        return n
      })
  })
  return { tool, runs: () => runs }
}

const env = Layer.merge(Trust.grant(0), RateLimited.layerMemory)
const as = (id: string) => Effect.provide(Observer.layer({ id, trust: 0 }))

/** Runs `n` calls at once and counts the admitted ones and the refusals. */
const burst = <E, R>(n: number, call: () => Effect.Effect<unknown, E, R>) =>
  Effect.gen(function* () {
    const exits = yield* Effect.all(
      Array.from({ length: n }, () => Effect.exit(call())),
      { concurrency: "unbounded" }
    )
    const refused = exits.filter((e) => Exit.isFailure(e))
    return { admitted: exits.length - refused.length, refused: refused.length }
  })

describe("RateLimited", () => {
  it.effect("passes a call within its limits through", () =>
    Effect.gen(function* () {
      const { tool } = counter()
      assert.strictEqual(yield* RateLimited(tool).run({ n: 4 }), 4)
    }).pipe(Effect.provide(env))
  )

  describe("1,000 concurrent calls", () => {
    it.effect("admit exactly the limit of an explicit per-tool limit", () =>
      Effect.gen(function* () {
        const { tool, runs } = counter()
        const limited = RateLimited(tool, { global: false, observer: false, tool: [{ limit: 50, window: "1 minute" }] })
        const result = yield* burst(1000, () => limited.run({ n: 1 }))
        assert.deepStrictEqual(result, { admitted: 50, refused: 950 })
        assert.strictEqual(runs(), 50)
      }).pipe(Effect.provide(env))
    )

    it.effect("admit exactly the global default (100 per minute) without an observer", () =>
      Effect.gen(function* () {
        const { tool, runs } = counter()
        const result = yield* burst(1000, () => RateLimited(tool).run({ n: 1 }))
        assert.deepStrictEqual(result, { admitted: 100, refused: 900 })
        assert.strictEqual(runs(), 100)
      }).pipe(Effect.provide(env))
    )

    it.effect("admit exactly the observer's limit plus its burst allowance (10 + 3) for one observer", () =>
      Effect.gen(function* () {
        const { tool, runs } = counter()
        const limited = RateLimited(tool)
        const result = yield* burst(1000, () => limited.run({ n: 1 }).pipe(as("agent")))
        assert.deepStrictEqual(result, { admitted: 13, refused: 987 })
        assert.strictEqual(runs(), 13)
      }).pipe(Effect.provide(env))
    )
  })

  it.effect("refills at the limit's rate: one more call every window / limit (virtual time)", () =>
    Effect.gen(function* () {
      const { tool } = counter()
      const limited = RateLimited(tool)
      const call = () => Effect.exit(limited.run({ n: 1 }).pipe(as("agent")))
      for (let i = 0; i < 13; i++) assert.isTrue(Exit.isSuccess(yield* call()))
      assert.isTrue(Exit.isFailure(yield* call()))
      yield* TestClock.adjust("5 seconds")
      assert.isTrue(Exit.isFailure(yield* call()))
      yield* TestClock.adjust("1 second") // 10 per minute: one token every 6 s
      assert.isTrue(Exit.isSuccess(yield* call()))
      assert.isTrue(Exit.isFailure(yield* call()))
    }).pipe(Effect.provide(env))
  )

  it.effect("sustains the per-observer rate of 10 per minute, not more", () =>
    Effect.gen(function* () {
      const { tool } = counter()
      const limited = RateLimited(tool)
      let admitted = 0
      // One attempt per second for ten minutes.
      for (let s = 0; s < 600; s++) {
        if (Exit.isSuccess(yield* Effect.exit(limited.run({ n: 1 }).pipe(as("agent"))))) admitted++
        yield* TestClock.adjust("1 second")
      }
      // 13 at once, then one per 6 s.
      assert.isAtMost(admitted, 13 + 100)
      assert.isAtLeast(admitted, 100)
    }).pipe(Effect.provide(env))
  )

  it.effect("keeps observers apart", () =>
    Effect.gen(function* () {
      const { tool } = counter()
      const limited = RateLimited(tool)
      yield* burst(13, () => limited.run({ n: 1 }).pipe(as("alice")))
      assert.strictEqual(yield* limited.run({ n: 2 }).pipe(as("bob")), 2)
      const error = yield* Effect.flip(limited.run({ n: 3 }).pipe(as("alice")))
      assert.strictEqual(error._tag, "RateLimited")
    }).pipe(Effect.provide(env))
  )

  it.effect("shares the global limit between tools, and keeps per-tool limits apart", () =>
    Effect.gen(function* () {
      const a = counter("svc.a")
      const b = counter("svc.b")
      const options = {
        observer: false,
        global: [{ limit: 5, window: "1 minute" }],
        tool: [{ limit: 3, window: "1 minute" }]
      } as const
      const la = RateLimited(a.tool, options)
      const lb = RateLimited(b.tool, options)
      assert.deepStrictEqual(yield* burst(10, () => la.run({ n: 1 })), { admitted: 3, refused: 7 })
      assert.deepStrictEqual(yield* burst(10, () => lb.run({ n: 1 })), { admitted: 2, refused: 8 })
    }).pipe(Effect.provide(env))
  )

  describe("toolPerObserver", () => {
    const perTool = { observer: false, global: false, tool: [{ limit: 3, window: "1 minute" }] } as const

    it.effect("keeps a per-tool bucket for each caller", () =>
      Effect.gen(function* () {
        const { tool, runs } = counter("file.read")
        const limited = RateLimited(tool, { ...perTool, toolPerObserver: true })
        assert.deepStrictEqual(yield* burst(10, () => limited.run({ n: 1 }).pipe(as("alice"))), {
          admitted: 3,
          refused: 7
        })
        assert.deepStrictEqual(yield* burst(10, () => limited.run({ n: 1 }).pipe(as("bob"))), {
          admitted: 3,
          refused: 7
        })
        const error = yield* Effect.flip(limited.run({ n: 1 }).pipe(as("alice")))
        assert.strictEqual(error._tag === "RateLimited" ? error.scope : error._tag, "tool")
        assert.strictEqual(runs(), 6)
      }).pipe(Effect.provide(env))
    )

    it.effect("without it, every caller shares the tool's bucket", () =>
      Effect.gen(function* () {
        const { tool } = counter("file.read")
        const limited = RateLimited(tool, perTool)
        assert.strictEqual((yield* burst(10, () => limited.run({ n: 1 }).pipe(as("alice")))).admitted, 3)
        assert.strictEqual((yield* burst(10, () => limited.run({ n: 1 }).pipe(as("bob")))).admitted, 0)
      }).pipe(Effect.provide(env))
    )

    it.effect("keeps tools apart for one caller, and callers without an Observer share the tool's bucket", () =>
      Effect.gen(function* () {
        const a = RateLimited(counter("svc.a").tool, { ...perTool, toolPerObserver: true })
        const b = RateLimited(counter("svc.b").tool, { ...perTool, toolPerObserver: true })
        assert.strictEqual((yield* burst(10, () => a.run({ n: 1 }).pipe(as("alice")))).admitted, 3)
        assert.strictEqual((yield* burst(10, () => b.run({ n: 1 }).pipe(as("alice")))).admitted, 3)
        assert.strictEqual((yield* burst(10, () => a.run({ n: 1 }))).admitted, 3)
        assert.strictEqual((yield* burst(10, () => a.run({ n: 1 }))).admitted, 0)
      }).pipe(Effect.provide(env))
    )

    it.effect("an observer id cannot reach another caller's bucket by spelling (keys are unambiguous)", () =>
      Effect.gen(function* () {
        // With a naive "tool:observer" key, tool "x" for observer "y:z" and tool "x:y" for observer "z" would collide.
        const x = RateLimited(counter("x").tool, { ...perTool, toolPerObserver: true })
        const xy = RateLimited(counter("x:y").tool, { ...perTool, toolPerObserver: true })
        assert.strictEqual((yield* burst(10, () => x.run({ n: 1 }).pipe(as("y:z")))).admitted, 3)
        assert.strictEqual((yield* burst(10, () => xy.run({ n: 1 }).pipe(as("z")))).admitted, 3)
      }).pipe(Effect.provide(env))
    )
  })

  it.effect("a limit of 0 refuses every call without asking the store (0 is a value, not 'unset')", () =>
    Effect.gen(function* () {
      const { tool, runs } = counter()
      const limited = RateLimited(tool, { observer: false, global: false, tool: [{ limit: 0, window: "1 minute" }] })
      const error = yield* Effect.flip(limited.run({ n: 1 }))
      assert.strictEqual(error._tag, "RateLimited")
      assert.strictEqual(runs(), 0)
    }).pipe(Effect.provide(env))
  )

  it.effect("reports the scope, the limit and when to try again", () =>
    Effect.gen(function* () {
      const { tool } = counter()
      const limited = RateLimited(tool, { global: false, observer: false, tool: [{ limit: 2, window: "1 minute" }] })
      yield* limited.run({ n: 1 })
      yield* limited.run({ n: 1 })
      const error = yield* Effect.flip(limited.run({ n: 1 }))
      assert.instanceOf(error, RateLimitedError)
      assert.strictEqual(error.scope, "tool")
      assert.strictEqual(error.limit, 2)
      assert.strictEqual(error.windowMillis, 60_000)
      assert.strictEqual(error.retryAfterMillis, 30_000)
      assert.match(error.message, /Wait 30 s/)
      assert.isFalse(ToolError.isRetryable(error))
      assert.strictEqual(ToolError.retryAfterMillis(error), 30_000)
    }).pipe(Effect.provide(env))
  )

  it.effect("takes its limits from RateLimited.Limits when given none", () =>
    Effect.gen(function* () {
      const { tool } = counter()
      const limited = RateLimited(tool)
      const result = yield* burst(20, () => limited.run({ n: 1 })).pipe(
        Effect.provideService(RateLimited.Limits, {
          global: [{ limit: 7, window: "1 hour" }],
          observer: [],
          tool: []
        })
      )
      assert.deepStrictEqual(result, { admitted: 7, refused: 13 })
    }).pipe(Effect.provide(env))
  )

  it.effect("is not retried by Retry", () =>
    Effect.gen(function* () {
      const { tool, runs } = counter()
      const limited = tool.pipe(
        RateLimited({ global: false, observer: false, tool: [{ limit: 1, window: "1 hour" }] }),
        Retry({ times: 5, base: "1 millis" })
      )
      yield* limited.run({ n: 1 })
      const fiber = yield* Effect.forkChild(Effect.flip(limited.run({ n: 1 })))
      yield* TestClock.adjust("1 minute")
      assert.strictEqual((yield* Fiber.join(fiber))._tag, "RateLimited")
      assert.strictEqual(runs(), 1)
    }).pipe(Effect.provide(env))
  )

  it.effect("an interrupted call holds nothing: later calls are admitted as before", () =>
    Effect.gen(function* () {
      const slow = Tool.make({
        name: "test.slow",
        description: "Never finishes.",
        input: Schema.Struct({ n: Schema.Number }),
        output: Schema.Number,
        run: () => Effect.never
      })
      const options = { global: false, observer: false, tool: [{ limit: 2, window: "1 minute" }] } as const
      const fiber = yield* Effect.forkChild(RateLimited(slow, options).run({ n: 1 }))
      yield* Effect.yieldNow
      yield* Fiber.interrupt(fiber)
      // One token was spent by the admitted call; the other is still there.
      assert.deepStrictEqual(
        yield* burst(5, () => RateLimited(counter().tool, { ...options, key: "test.slow" }).run({ n: 1 })),
        {
          admitted: 1,
          refused: 4
        }
      )
    }).pipe(Effect.provide(env))
  )

  it("adds RateLimited to the failure schema", () => {
    const error = new RateLimitedError({ tool: "t", scope: "global", limit: 1, windowMillis: 1, retryAfterMillis: 1 })
    assert.isTrue(Schema.is(RateLimited(counter().tool).failure)(error))
  })
})
