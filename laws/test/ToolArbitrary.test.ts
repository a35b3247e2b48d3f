import { assert, describe, it } from "@effect/vitest"
import { Tool, Trust } from "@ugent/core"
import { EffectLog, Law, Observation, type Report, RuleSet, ToolArbitrary } from "@ugent/laws"
import { Arbitrary, Effect, Exit, Layer, Schema } from "effect"

const Point = Schema.Struct({ x: Schema.Int, y: Schema.Int })

describe("ToolArbitrary", () => {
  it.effect("draws from every family", () =>
    Effect.gen(function* () {
      const specs = yield* Arbitrary.sampleEffect(ToolArbitrary.spec(Arbitrary.schema(Point)), { count: 300, seed: 1 })
      assert.deepStrictEqual(new Set(specs.map((s) => s._tag)), new Set(ToolArbitrary.families))
    })
  )

  it.effect("draws only from the families asked for, and more often from one listed twice", () =>
    Effect.gen(function* () {
      const specs = yield* Arbitrary.sampleEffect(
        ToolArbitrary.spec(Arbitrary.schema(Point), { families: ["log", "failWhen", "failWhen"] }),
        { count: 300, seed: 2 }
      )
      const fails = specs.filter((s) => s._tag === "failWhen").length
      assert.deepStrictEqual(new Set(specs.map((s) => s._tag)), new Set(["log", "failWhen"]))
      assert.isAbove(fails, 150)
    })
  )

  it.effect("builds real tools over the given schema, with the trust asked for", () =>
    Effect.gen(function* () {
      const tools = yield* Arbitrary.sampleEffect(ToolArbitrary.endo(Point, { trust: 2 }), { count: 50, seed: 3 })
      for (const t of tools) {
        assert.isTrue(Tool.isTool(t))
        assert.strictEqual(t.input, Point)
        assert.strictEqual(t.trust, 2)
      }
    })
  )

  it.effect("a failWhen tool of modulus 1 always fails with a typed GeneratedFailure and logs nothing", () =>
    Effect.gen(function* () {
      const tool = ToolArbitrary.fromSpec({ _tag: "failWhen", modulus: 1, label: "a" }, Point)
      const o = yield* Observation.run(tool.run({ x: 1, y: 2 }))
      assert.isTrue(Exit.isFailure(o.exit))
      const failure = Exit.isFailure(o.exit) ? o.exit.cause.reasons[0] : undefined
      assert.instanceOf((failure as { readonly error: unknown }).error, ToolArbitrary.GeneratedFailure)
      assert.deepStrictEqual(o.log, [])
    })
  )

  it.effect("a table tool is a function of its input", () =>
    Effect.gen(function* () {
      const tool = ToolArbitrary.fromSpec(
        {
          _tag: "table",
          values: [
            { x: 0, y: 0 },
            { x: 1, y: 1 },
            { x: 2, y: 2 }
          ]
        },
        Point
      )
      const inputs = yield* Arbitrary.sampleEffect(Arbitrary.schema(Point), { count: 30, seed: 4 })
      for (const a of inputs) assert.deepStrictEqual(yield* tool.run(a), yield* tool.run({ ...a }))
      const outputs = new Set(yield* Effect.forEach(inputs, (a) => Effect.map(tool.run(a), (p) => p.x)))
      assert.isAbove(outputs.size, 1)
    }).pipe(Effect.provide(Layer.merge(Trust.grant(3), EffectLog.EffectLog.layer)))
  )

  it.effect("a sleep tool sleeps in virtual time, then logs", () =>
    Effect.gen(function* () {
      const tool = ToolArbitrary.fromSpec({ _tag: "sleep", millis: 250, label: "b" }, Point)
      const o = yield* Observation.run(tool.run({ x: 0, y: 0 }))
      assert.deepStrictEqual(o.log, [{ label: "b", at: 250 }])
    })
  )

  it.effect("shrinks a failing case to the simplest tools that still fail it", () =>
    Effect.gen(function* () {
      // A property that only an effectful tool breaks: "a tool logs nothing".
      const law = Law.make(
        "logs nothing",
        Arbitrary.all({
          tools: Arbitrary.array(ToolArbitrary.endo(Schema.Int), { minLength: 1, maxLength: 6 }),
          a: Arbitrary.schema(Schema.Int)
        }),
        ({ tools, a }) =>
          Law.holds(
            "the pipeline",
            Tool.pipeline(...(tools as unknown as readonly [Tool.Any])).run(a),
            "no effect",
            (o) => (o.log.length === 0 ? undefined : "it logged")
          )
      )
      const report = yield* RuleSet.checkLaw("tools", "shrinking", law, { seed: 5, runs: 200 })
      assert.strictEqual(report._tag, "Falsified")
      const shrunk = (report as Report.Falsified).shrunkInput as { readonly tools: ReadonlyArray<Tool.Any> }
      assert.strictEqual(shrunk.tools.length, 1)
      assert.match(shrunk.tools[0]!.name, /^log\(/)
    })
  )
})
