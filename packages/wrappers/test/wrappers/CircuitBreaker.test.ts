import { assert, describe, it } from "@effect/vitest"
import { Tool, ToolError, Trust } from "@ugent/core"
import { CircuitBreaker, CircuitOpen, Retry } from "@ugent/wrappers"
import { Deferred, Effect, Exit, Fiber, Layer, Schedule, Schema, Scope } from "effect"
import { CircuitBreaker as Breaker } from "effect/persistence"
import { TestClock } from "effect/testing"

class Down extends Schema.TaggedError<Down>()("Down", {
  retryable: Schema.optionalKey(Schema.Boolean),
  retryAfterMillis: Schema.optionalKey(Schema.Number)
}) {}

type Behaviour = "ok" | "fail" | "die" | "caller" | Down | Deferred.Deferred<void>

/** A tool whose next answers are scripted: succeed, fail, die, fail with a caller error, or wait for a gate. */
const scripted = (name = "api.get") => {
  const plan: Array<Behaviour> = []
  let runs = 0
  const tool = Tool.make({
    name,
    description: "Answers as scripted.",
    input: Schema.Struct({ q: Schema.String }),
    output: Schema.String,
    failure: Schema.Union([Down, ToolError.InvalidInput]),
    run: ({ q }) =>
      Effect.suspend((): Effect.Effect<string, Down | ToolError.InvalidInput> => {
        runs++
        const next = plan.shift() ?? "ok"
        if (next === "ok") return Effect.succeed(`answer ${q}`)
        if (next === "fail") return Effect.fail(new Down({}))
        if (next === "die") return Effect.die(new Error("bug"))
        if (next === "caller") return Effect.fail(new ToolError.InvalidInput({ tool: name, issues: "bad" }))
        if (next instanceof Down) return Effect.fail(next)
        return Effect.as(Deferred.await(next), `answer ${q}`)
      })
  })
  return { tool, plan, runs: () => runs }
}

const env = Layer.merge(Trust.grant(0), CircuitBreaker.layerMemory())
const tagOf = <A, E extends { readonly _tag: string }>(exit: Exit.Exit<A, E>): string =>
  Exit.isSuccess(exit)
    ? "ok"
    : exit.cause.reasons[0]?._tag === "Fail"
      ? (exit.cause.reasons[0] as { readonly error: E }).error._tag
      : (exit.cause.reasons[0]?._tag ?? "?")

describe("CircuitBreaker", () => {
  it.effect("passes results through while closed", () =>
    Effect.gen(function* () {
      const { tool } = scripted()
      assert.strictEqual(yield* CircuitBreaker(tool).run({ q: "x" }), "answer x")
    }).pipe(Effect.provide(env))
  )

  it.effect("opens after the trip policy's failures and then fails fast with CircuitOpen", () =>
    Effect.gen(function* () {
      const { tool, plan, runs } = scripted()
      plan.push("fail", "fail")
      const guarded = CircuitBreaker(tool, { tripPolicy: CircuitBreaker.consecutive(2), openDuration: "30 seconds" })
      const tags: Array<string> = []
      for (let i = 0; i < 4; i++) tags.push(tagOf(yield* Effect.exit(guarded.run({ q: "x" }))))
      assert.deepStrictEqual(tags, ["Down", "Down", "CircuitOpen", "CircuitOpen"])
      assert.strictEqual(runs(), 2)
      const error = yield* Effect.flip(guarded.run({ q: "x" }))
      assert.instanceOf(error, CircuitOpen)
      const open = error as CircuitOpen
      assert.strictEqual(open.state, "open")
      assert.strictEqual(open.retryAfterMillis, 30_000)
      assert.strictEqual(open.key, "api.get")
      assert.isFalse(ToolError.isRetryable(open))
      assert.match(open.message, /Try again in 30 s/)
    }).pipe(Effect.provide(env))
  )

  it.effect("lets one trial through after the open duration: success closes the circuit", () =>
    Effect.gen(function* () {
      const { tool, plan } = scripted()
      plan.push("fail", "fail")
      const guarded = CircuitBreaker(tool, { tripPolicy: CircuitBreaker.consecutive(2), openDuration: "1 minute" })
      yield* Effect.exit(guarded.run({ q: "x" }))
      yield* Effect.exit(guarded.run({ q: "x" }))
      yield* TestClock.adjust("59 seconds")
      assert.strictEqual(tagOf(yield* Effect.exit(guarded.run({ q: "x" }))), "CircuitOpen")
      yield* TestClock.adjust("1 second")
      assert.strictEqual(yield* guarded.run({ q: "x" }), "answer x")
      assert.strictEqual(yield* guarded.run({ q: "y" }), "answer y")
    }).pipe(Effect.provide(env))
  )

  it.effect("a failed trial opens the circuit again", () =>
    Effect.gen(function* () {
      const { tool, plan } = scripted()
      plan.push("fail", "fail", "fail")
      const guarded = CircuitBreaker(tool, { tripPolicy: CircuitBreaker.consecutive(2), openDuration: "1 minute" })
      yield* Effect.exit(guarded.run({ q: "x" }))
      yield* Effect.exit(guarded.run({ q: "x" }))
      yield* TestClock.adjust("1 minute")
      assert.strictEqual(tagOf(yield* Effect.exit(guarded.run({ q: "x" }))), "Down")
      assert.strictEqual(tagOf(yield* Effect.exit(guarded.run({ q: "x" }))), "CircuitOpen")
    }).pipe(Effect.provide(env))
  )

  it.effect("admits one trial at a time when half open", () =>
    Effect.gen(function* () {
      const { tool, plan, runs } = scripted()
      const gate = yield* Deferred.make<void>()
      plan.push("fail", gate)
      const guarded = CircuitBreaker(tool, { tripPolicy: CircuitBreaker.consecutive(1), openDuration: "1 second" })
      yield* Effect.exit(guarded.run({ q: "x" }))
      yield* TestClock.adjust("1 second")
      const trial = yield* Effect.forkChild(guarded.run({ q: "trial" }))
      yield* Effect.yieldNow
      const others = yield* Effect.all(
        Array.from({ length: 5 }, () => Effect.flip(guarded.run({ q: "x" }))),
        { concurrency: "unbounded" }
      )
      assert.deepStrictEqual(
        others.map((e) => (e as CircuitOpen).state),
        ["half-open", "half-open", "half-open", "half-open", "half-open"]
      )
      yield* Deferred.succeed(gate, undefined)
      assert.strictEqual(yield* Fiber.join(trial), "answer trial")
      assert.strictEqual(runs(), 2)
    }).pipe(Effect.provide(env))
  )

  it.effect("gives the trial's turn back when the trial is interrupted", () =>
    Effect.gen(function* () {
      const { tool, plan } = scripted()
      const never = yield* Deferred.make<void>()
      plan.push("fail", never)
      const guarded = CircuitBreaker(tool, { tripPolicy: CircuitBreaker.consecutive(1), openDuration: "1 second" })
      yield* Effect.exit(guarded.run({ q: "x" }))
      yield* TestClock.adjust("1 second")
      const trial = yield* Effect.forkChild(guarded.run({ q: "trial" }))
      yield* Effect.yieldNow
      yield* Fiber.interrupt(trial)
      assert.strictEqual(yield* guarded.run({ q: "next" }), "answer next")
    }).pipe(Effect.provide(env))
  )

  it.effect("keeps one circuit per key: the tool's name, or an explicit key", () =>
    Effect.gen(function* () {
      const a = scripted("svc.a")
      const b = scripted("svc.b")
      a.plan.push("fail")
      const policy = { tripPolicy: CircuitBreaker.consecutive(1), openDuration: "1 minute" } as const
      yield* Effect.exit(CircuitBreaker(a.tool, policy).run({ q: "x" }))
      assert.strictEqual(tagOf(yield* Effect.exit(CircuitBreaker(a.tool, policy).run({ q: "x" }))), "CircuitOpen")
      assert.strictEqual(yield* CircuitBreaker(b.tool, policy).run({ q: "x" }), "answer x")
      // b shares a's circuit when given its key.
      assert.strictEqual(
        tagOf(yield* Effect.exit(CircuitBreaker(b.tool, { ...policy, key: "svc.a" }).run({ q: "x" }))),
        "CircuitOpen"
      )
    }).pipe(Effect.provide(env))
  )

  it.effect("does not count the caller's errors against the tool", () =>
    Effect.gen(function* () {
      const { tool, plan } = scripted()
      plan.push("caller", "caller", "caller")
      const guarded = CircuitBreaker(tool, { tripPolicy: CircuitBreaker.consecutive(2) })
      for (let i = 0; i < 3; i++) assert.strictEqual(tagOf(yield* Effect.exit(guarded.run({ q: "x" }))), "InvalidInput")
      assert.strictEqual(yield* guarded.run({ q: "x" }), "answer x")
    }).pipe(Effect.provide(env))
  )

  it.effect("counts defects", () =>
    Effect.gen(function* () {
      const { tool, plan } = scripted()
      plan.push("die", "die")
      const guarded = CircuitBreaker(tool, { tripPolicy: CircuitBreaker.consecutive(2) })
      yield* Effect.exit(guarded.run({ q: "x" }))
      yield* Effect.exit(guarded.run({ q: "x" }))
      assert.strictEqual(tagOf(yield* Effect.exit(guarded.run({ q: "x" }))), "CircuitOpen")
    }).pipe(Effect.provide(env))
  )

  it.effect("stays open at least as long as a failure's retry-after hint", () =>
    Effect.gen(function* () {
      const { tool, plan } = scripted()
      plan.push(new Down({ retryAfterMillis: 120_000 }))
      const guarded = CircuitBreaker(tool, { tripPolicy: CircuitBreaker.consecutive(1), openDuration: "10 seconds" })
      yield* Effect.exit(guarded.run({ q: "x" }))
      const error = (yield* Effect.flip(guarded.run({ q: "x" }))) as CircuitOpen
      assert.strictEqual(error.retryAfterMillis, 120_000)
    }).pipe(Effect.provide(env))
  )

  it.effect("is not retried by Retry", () =>
    Effect.gen(function* () {
      const { tool, plan, runs } = scripted()
      plan.push(new Down({ retryable: true }), new Down({ retryable: true }))
      const guarded = tool.pipe(
        CircuitBreaker({ tripPolicy: CircuitBreaker.consecutive(1), openDuration: "1 hour" }),
        Retry({ times: 5, base: "1 millis" })
      )
      const fiber = yield* Effect.forkChild(Effect.exit(guarded.run({ q: "x" })))
      yield* TestClock.adjust("1 minute")
      assert.strictEqual(tagOf(yield* Fiber.join(fiber)), "CircuitOpen")
      assert.strictEqual(runs(), 1)
    }).pipe(Effect.provide(env))
  )

  it("adds CircuitOpen to the failure schema", () => {
    const { tool } = scripted()
    const open = new CircuitOpen({ tool: "api.get", key: "api.get", state: "open", retryAfterMillis: 5 })
    assert.isTrue(Schema.is(CircuitBreaker(tool).failure)(open))
    assert.isFalse(Schema.is(tool.failure)(open))
  })
  it.effect(
    "a store that cannot admit: the call runs unrecorded, or is refused with onStoreError fail; its scope closes",
    () =>
      Effect.gen(function* () {
        let released = 0
        // A store whose admission takes a resource on its scope and then fails, as a store that lost its server might.
        const failing = Layer.succeed(Breaker.CircuitBreakerStore, {
          admit: () =>
            Effect.flatMap(
              Effect.flatMap(Effect.scope, (scope) =>
                Scope.addFinalizer(
                  scope,
                  Effect.sync(() => released++)
                )
              ),
              () =>
                Effect.fail(
                  new Breaker.CircuitBreakerError({
                    reason: new Breaker.CircuitBreakerStoreError({ message: "store down" })
                  })
                )
            ),
          record: () => Effect.die(new Error("not recorded: the call was not admitted")),
          state: (key) => Effect.succeed({ _tag: "Closed" as const, key })
        })
        const { tool, runs } = scripted()
        const allowed = CircuitBreaker(tool).run({ q: "x" })
        assert.strictEqual(yield* Effect.provide(allowed, failing), "answer x")
        assert.strictEqual(runs(), 1)
        assert.strictEqual(released, 1)
        const refused = yield* Effect.flip(
          Effect.provide(CircuitBreaker(tool, { onStoreError: "fail" }).run({ q: "x" }), failing)
        )
        assert.instanceOf(refused, CircuitOpen)
        assert.strictEqual((refused as CircuitOpen).state, "unavailable")
        assert.strictEqual(runs(), 1)
        assert.strictEqual(released, 2)
      }).pipe(Effect.provide(Trust.grant(0)))
  )

  it.effect.prop(
    "answers every script of outcomes and pauses as Effect's own CircuitBreaker.execute does",
    {
      steps: Schema.Array(Schema.Literals(["ok", "fail", "die", "caller", "hint", "wait"])).check(
        Schema.isMaxLength(30)
      ),
      failures: Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 3 })),
      // Both trip policies: the direct road treats a success differently under each.
      byRate: Schema.Boolean
    },
    ({ steps, failures, byRate }) =>
      Effect.gen(function* () {
        const tripPolicy = byRate
          ? CircuitBreaker.rate({ threshold: 0.5, size: failures + 1, minimumCalls: failures })
          : CircuitBreaker.consecutive(failures)
        // A fixed open duration takes the wrapper's direct road; the same duration as a schedule takes `execute`.
        const run = (openDuration: "20 seconds" | Schedule.Schedule<unknown, number>) =>
          Effect.gen(function* () {
            const { tool, plan } = scripted()
            const guarded = CircuitBreaker(tool, { tripPolicy, openDuration })
            const seen: Array<string> = []
            for (const step of steps) {
              if (step === "wait") {
                yield* TestClock.adjust("15 seconds")
                continue
              }
              plan.push(step === "hint" ? new Down({ retryAfterMillis: 40_000 }) : step)
              const exit = yield* Effect.exit(guarded.run({ q: "x" }))
              const error = Exit.isFailure(exit) ? exit.cause.reasons[0] : undefined
              const open = error?._tag === "Fail" && error.error instanceof CircuitOpen ? error.error : undefined
              seen.push(open === undefined ? tagOf(exit) : `${open.state}:${open.retryAfterMillis}`)
            }
            return seen
          }).pipe(Effect.provide(CircuitBreaker.layerMemory()))
        const direct = yield* run("20 seconds")
        const library = yield* run(Schedule.spaced("20 seconds"))
        assert.deepStrictEqual(direct, library)
      }).pipe(Effect.provide(Trust.grant(0)))
  )
})
