import { assert, describe, it } from "@effect/vitest"
import { EffectLog, Observation } from "@ugent/laws"
import { Context, Effect, Exit, Fiber, Schema } from "effect"

class Needed extends Context.Service<Needed, { readonly n: number }>()("test/Needed") {}

class Boom extends Schema.TaggedError<Boom>()("Boom", { n: Schema.Number }) {}

const seen = (
  exit: Exit.Exit<unknown, unknown>,
  log: ReadonlyArray<EffectLog.Entry> = []
): Observation.Observation => ({
  exit,
  log,
  completed: true
})

describe("Observation", () => {
  describe("run", () => {
    it.effect("runs every sleep of a side under its own test clock and stamps the log with virtual time", () =>
      Effect.gen(function* () {
        const side = Effect.gen(function* () {
          yield* Effect.sleep("30 millis")
          yield* EffectLog.append("a")
          yield* Effect.sleep("2 seconds")
          yield* EffectLog.append("b")
          return "done"
        })
        const o = yield* Observation.run(side)
        assert.deepStrictEqual(o.log, [
          { label: "a", at: 30 },
          { label: "b", at: 2030 }
        ])
        assert.isTrue(Exit.isSuccess(o.exit))
      })
    )

    it.effect("orders the effects of concurrent fibers by their virtual time", () =>
      Effect.gen(function* () {
        const branch = (label: string, ms: number) => Effect.sleep(ms).pipe(Effect.andThen(EffectLog.append(label)))
        const o = yield* Observation.run(
          Effect.all([branch("slow", 50), branch("fast", 10)], { concurrency: "unbounded" })
        )
        assert.deepStrictEqual(
          o.log.map((e) => `${e.label}@${e.at}`),
          ["fast@10", "slow@50"]
        )
      })
    )

    it.effect("keeps exact virtual times when a side waits on real I/O between its sleeps", () =>
      Effect.gen(function* () {
        const io = Effect.promise(() => new Promise<void>((resolve) => setTimeout(resolve, 15)))
        const side = Effect.gen(function* () {
          yield* io
          yield* Effect.sleep("10 millis")
          yield* EffectLog.append("a")
          yield* io
          yield* Effect.sleep("5 millis")
          yield* EffectLog.append("b")
        })
        const o = yield* Observation.run(side)
        assert.deepStrictEqual(
          o.log.map((e) => `${e.label}@${e.at}`),
          ["a@10", "b@15"]
        )
      })
    )

    it.effect("gives each side a fresh log and a clock that starts at zero", () =>
      Effect.gen(function* () {
        const side = Effect.sleep("5 millis").pipe(Effect.andThen(EffectLog.append("x")))
        const first = yield* Observation.run(side)
        const second = yield* Observation.run(side)
        assert.deepStrictEqual(first.log, second.log)
        assert.deepStrictEqual(second.log, [{ label: "x", at: 5 }])
      })
    )

    it.effect("reports a side that never completes instead of hanging", () =>
      Effect.gen(function* () {
        const o = yield* Observation.run(Effect.never, { timeout: "50 millis" })
        assert.isFalse(o.completed)
        assert.isTrue(Exit.hasInterrupts(o.exit))
      })
    )

    it.effect("turns a missing service into a SetupError that says to use provide", () =>
      Effect.gen(function* () {
        const exit = yield* Effect.exit(Observation.run(Needed.use((s) => Effect.succeed(s.n))))
        assert.isTrue(Exit.isFailure(exit))
        const defect = Exit.isFailure(exit) ? exit.cause.reasons[0] : undefined
        assert.instanceOf((defect as { readonly defect: unknown }).defect, Observation.SetupError)
        assert.include(String((defect as { readonly defect: Error }).defect.message), "provide")
      })
    )

    it.effect("is not disturbed by the test clock of the surrounding test", () =>
      Effect.gen(function* () {
        const fiber = yield* Effect.forkChild(Observation.run(Effect.sleep("1 hour").pipe(Effect.as(1))))
        const o = yield* Fiber.join(fiber)
        assert.deepStrictEqual(o.exit, Exit.succeed(1))
      })
    )
  })

  describe("equivalence", () => {
    it("compares typed failures structurally", () => {
      assert.isTrue(Observation.equivalence(seen(Exit.fail(new Boom({ n: 1 }))), seen(Exit.fail(new Boom({ n: 1 })))))
      assert.isFalse(Observation.equivalence(seen(Exit.fail(new Boom({ n: 1 }))), seen(Exit.fail(new Boom({ n: 2 })))))
    })

    it("compares defects by message", () => {
      assert.isTrue(Observation.equivalence(seen(Exit.die(new Error("bug"))), seen(Exit.die(new Error("bug")))))
      assert.isFalse(Observation.equivalence(seen(Exit.die(new Error("bug"))), seen(Exit.die(new Error("other")))))
    })

    it("treats interruption as interruption, whoever interrupted", () => {
      assert.isTrue(Observation.equivalence(seen(Exit.interrupt(1)), seen(Exit.interrupt(2))))
      assert.isFalse(Observation.equivalence(seen(Exit.interrupt(1)), seen(Exit.die(new Error("x")))))
    })

    it("compares successes structurally and a success never equals a failure", () => {
      assert.isTrue(Observation.equivalence(seen(Exit.succeed([1, { a: "x" }])), seen(Exit.succeed([1, { a: "x" }]))))
      assert.isFalse(Observation.equivalence(seen(Exit.succeed(1)), seen(Exit.fail(1))))
    })

    it("compares logs with their times by default, in order only with log: ordered", () => {
      const early = seen(Exit.void, [{ label: "a", at: 1 }])
      const late = seen(Exit.void, [{ label: "a", at: 9 }])
      assert.isFalse(Observation.equivalence(early, late))
      assert.isTrue(Observation.byExit(Observation.exitEquivalence(), { log: "ordered" })(early, late))
      assert.isFalse(
        Observation.byExit(Observation.exitEquivalence(), { log: "ordered" })(
          early,
          seen(Exit.void, [{ label: "b", at: 1 }])
        )
      )
    })

    it("takes an equality of outputs", () => {
      const eq = Observation.byOutput((a, b) => (a as { id: number }).id === (b as { id: number }).id)
      assert.isTrue(eq(seen(Exit.succeed({ id: 1, at: 5 })), seen(Exit.succeed({ id: 1, at: 6 }))))
      assert.isFalse(eq(seen(Exit.succeed({ id: 1 })), seen(Exit.succeed({ id: 2 }))))
    })

    it("never equates a side that did not complete", () => {
      const done = seen(Exit.interrupt(1))
      assert.isFalse(Observation.equivalence(done, { ...done, completed: false }))
      assert.deepStrictEqual(Observation.differences(done, { ...done, completed: false }), ["completion"])
    })
  })
})
