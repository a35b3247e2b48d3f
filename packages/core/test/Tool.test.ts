import { assert, describe, it } from "@effect/vitest"
import { Boundary, Tool, ToolError, Trust } from "@ugent/core"
import { Effect, Exit, Fiber, Ref, Schema } from "effect"
import { TestClock } from "effect/testing"

class Odd extends Schema.TaggedError<Odd>()("Odd", { n: Schema.Number }) {}
class Neg extends Schema.TaggedError<Neg>()("Neg", { n: Schema.Number }) {}

const inc = Tool.fromFunction({ name: "inc", input: Schema.Number, output: Schema.Number, f: (n: number) => n + 1 })
const double = Tool.fromFunction({
  name: "double",
  input: Schema.Number,
  output: Schema.Number,
  f: (n: number) => n * 2
})
const evenOnly = Tool.make({
  name: "evenOnly",
  description: "Fails on odd numbers.",
  input: Schema.Number,
  output: Schema.Number,
  failure: Odd,
  run: (n) => (n % 2 === 0 ? Effect.succeed(n) : Effect.fail(new Odd({ n })))
})
const positive = Tool.make({
  name: "positive",
  description: "Fails on negative numbers.",
  input: Schema.Number,
  output: Schema.Number,
  failure: Neg,
  run: (n) => (n >= 0 ? Effect.succeed(n) : Effect.fail(new Neg({ n })))
})
const grant0 = Effect.provide(Trust.grant(0))

describe("Tool", () => {
  describe("constructors", () => {
    it("make - holds its metadata", () => {
      assert.strictEqual(evenOnly.name, "evenOnly")
      assert.strictEqual(evenOnly.trust, 0)
      assert.strictEqual(evenOnly.version, "1")
      assert.isTrue(evenOnly.effects.idempotent)
      assert.isFalse(evenOnly.effects.writesFs)
      assert.isTrue(Tool.isTool(evenOnly))
      assert.isFalse(Tool.isTool({ name: "x", run: () => null }))
    })

    it("make - refuses a read-only tool that declares writes", () => {
      assert.throws(
        () =>
          Tool.make({
            name: "sneaky",
            description: "d",
            effects: { writesFs: true },
            input: Schema.String,
            output: Schema.String,
            run: Effect.succeed
          }),
        /cannot be L0/
      )
    })

    it.effect("make - requires its capability at run time too", () =>
      Effect.gen(function* () {
        const exit = yield* Effect.exit(
          // Bypassing the type check on purpose: the runtime check must still hold.
          evenOnly.run(2) as unknown as Effect.Effect<number, Odd>
        )
        assert.isTrue(Exit.isFailure(exit) && Exit.hasDies(exit))
      })
    )

    it.effect("fromFunction - a throwing function is a defect, not a typed failure", () =>
      Effect.gen(function* () {
        const boom = Tool.fromFunction({
          name: "boom",
          f: (_: number): number => {
            throw new Error("bug")
          }
        })
        const exit = yield* Effect.exit(boom.run(1))
        assert.isTrue(Exit.hasDies(exit))
      })
    )

    it("is inspectable and pipeable", () => {
      const json = JSON.parse(JSON.stringify(evenOnly))
      assert.deepStrictEqual(json._id, "Tool")
      assert.strictEqual(json.name, "evenOnly")
      assert.strictEqual(String(inc), "Tool(inc)")
      assert.strictEqual(inc.pipe(Tool.andThen(double)).name, "inc >> double")
    })
  })

  describe("composition", () => {
    it.effect("andThen - runs left then right, data-first and data-last", () =>
      Effect.gen(function* () {
        assert.strictEqual(yield* Tool.andThen(inc, double).run(1), 4)
        assert.strictEqual(yield* inc.pipe(Tool.andThen(double)).run(1), 4)
        assert.strictEqual(yield* Tool.andThen(double, inc).run(1), 3)
      })
    )

    it("identity is absorbed on both sides", () => {
      const id = Tool.identity(Schema.Number)
      assert.strictEqual(Tool.andThen(id, inc), inc)
      assert.strictEqual(Tool.andThen(inc, id), inc)
      assert.strictEqual(Tool.pipeline(id, inc, id).name, "inc")
    })

    it("nested compositions flatten to one list of steps", () => {
      const left = Tool.andThen(Tool.andThen(inc, double), inc)
      const right = Tool.andThen(inc, Tool.andThen(double, inc))
      assert.strictEqual(left.name, "inc >> double >> inc")
      assert.strictEqual(right.name, left.name)
      assert.deepStrictEqual(
        Tool.steps(Tool.andThen(left, right)).map((s) => s.name),
        ["inc", "double", "inc", "inc", "double", "inc"]
      )
    })

    it("a composition takes the highest trust and merges effects and failures", () => {
      const writer = Tool.make({
        name: "writer",
        description: "d",
        trust: 1,
        effects: { writesFs: true, idempotent: false },
        input: Schema.Number,
        output: Schema.Number,
        run: Effect.succeed
      })
      const p = Tool.pipeline(evenOnly, writer, positive)
      assert.strictEqual(p.trust, 1)
      assert.isTrue(p.effects.writesFs)
      assert.isFalse(p.effects.idempotent)
      const schemas = Boundary.jsonSchemas(p)
      assert.match(JSON.stringify(schemas.failure), /Odd/)
      assert.match(JSON.stringify(schemas.failure), /Neg/)
    })

    it.effect("the first failure stops the pipeline", () =>
      Effect.gen(function* () {
        const seen = yield* Ref.make<Array<number>>([])
        const record = Tool.make({
          name: "record",
          description: "d",
          input: Schema.Number,
          output: Schema.Number,
          run: (n) =>
            Effect.as(
              Ref.update(seen, (xs) => [...xs, n]),
              n
            )
        })
        const exit = yield* Effect.exit(Tool.pipeline(record, evenOnly, record).run(3))
        assert.deepStrictEqual(exit, Exit.fail(new Odd({ n: 3 })))
        assert.deepStrictEqual(yield* Ref.get(seen), [3])
      }).pipe(grant0)
    )

    it.effect("a 10,000-step pipeline runs without growing the stack", () =>
      Effect.gen(function* () {
        const pure = Tool.pipeline(inc, ...Array.from({ length: 9_999 }, () => inc))
        assert.strictEqual(yield* pure.run(0), 10_000)
        const effectful = Tool.make({
          name: "incE",
          description: "d",
          input: Schema.Number,
          output: Schema.Number,
          run: (n) => Effect.succeed(n + 1)
        })
        const mixed = Tool.pipeline(inc, ...Array.from({ length: 9_999 }, (_, i) => (i % 3 === 0 ? effectful : inc)))
        assert.strictEqual(yield* mixed.run(0), 10_000)
      }).pipe(grant0)
    )

    it.effect("a left fold of 10,000 andThen calls is flattened once and runs", () =>
      Effect.gen(function* () {
        let t: Tool.Tool<number, number> = inc
        for (let i = 1; i < 10_000; i++) t = Tool.andThen(t, inc)
        assert.strictEqual(Tool.steps(t).length, 10_000)
        assert.strictEqual(yield* t.run(0), 10_000)
      })
    )
  })

  describe("arrows", () => {
    it.effect("map and contramap", () =>
      Effect.gen(function* () {
        assert.strictEqual(yield* inc.pipe(Tool.map((n) => `${n}`)).run(1), "2")
        assert.strictEqual(yield* inc.pipe(Tool.contramap((s: string) => s.length)).run("abc"), 4)
      })
    )

    it.effect("first and second pass the other component through", () =>
      Effect.gen(function* () {
        assert.deepStrictEqual(yield* Tool.first<number, number, never, never, string>(inc).run([1, "a"]), [2, "a"])
        assert.deepStrictEqual(yield* Tool.second<number, number, never, never, string>(inc).run(["a", 1]), ["a", 2])
      })
    )

    it.effect("split runs left before right and stops at the first failure", () =>
      Effect.gen(function* () {
        assert.deepStrictEqual(yield* Tool.split(inc, double).run([1, 5]), [2, 10])
        const exit = yield* Effect.exit(Tool.split(evenOnly, positive).run([1, -1]))
        assert.deepStrictEqual(exit, Exit.fail(new Odd({ n: 1 })))
      }).pipe(grant0)
    )

    it.effect("fanout feeds one input to both", () =>
      Effect.gen(function* () {
        assert.deepStrictEqual(yield* Tool.fanout(inc, double).run(3), [4, 6])
      })
    )

    it.effect("all (collect-all) reports every failure with its key", () =>
      Effect.gen(function* () {
        const t = Tool.all({ even: evenOnly, pos: positive, inc })
        assert.deepStrictEqual(yield* t.run(2), { even: 2, pos: 2, inc: 3 })
        const error = yield* Effect.flip(t.run(-3))
        assert.isTrue(ToolError.isAllFailed(error))
        assert.deepStrictEqual(
          error.failures.map((f) => f.key),
          ["even", "pos"]
        )
        assert.match(error.message, /2 branch\(es\) failed/)
      }).pipe(grant0)
    )

    it("all over struct inputs takes every field of every branch", () => {
      const byPath = Tool.fromFunction({
        name: "byPath",
        input: Schema.Struct({ path: Schema.String }),
        f: (i: { readonly path: string }) => i.path
      })
      const byLimit = Tool.fromFunction({
        name: "byLimit",
        input: Schema.Struct({ path: Schema.String, limit: Schema.Number }),
        f: (i: { readonly path: string; readonly limit: number }) => i.limit
      })
      const input = Boundary.jsonSchemas(Tool.all({ byPath, byLimit })).input as { readonly required: Array<string> }
      assert.deepStrictEqual([...input.required].sort(), ["limit", "path"])
    })

    it.effect("all over a tuple keeps the tuple shape", () =>
      Effect.gen(function* () {
        assert.deepStrictEqual(yield* Tool.all([inc, double]).run(3), [4, 6])
      })
    )

    it.effect("all (fail-fast) fails with the first failure and interrupts the rest", () =>
      Effect.gen(function* () {
        const slow = Tool.make({
          name: "slow",
          description: "d",
          input: Schema.Number,
          output: Schema.Number,
          run: (n) => Effect.as(Effect.sleep("1 minute"), n)
        })
        const fiber = yield* Effect.forkChild(
          Effect.exit(Tool.all({ slow, even: evenOnly }, { mode: "fail-fast" }).run(1))
        )
        yield* TestClock.adjust("1 second")
        const exit = yield* Fiber.join(fiber)
        assert.deepStrictEqual(exit, Exit.fail(new Odd({ n: 1 })))
      }).pipe(grant0)
    )

    it.effect("all runs branches concurrently by default", () =>
      Effect.gen(function* () {
        const sleepy = Tool.make({
          name: "sleepy",
          description: "d",
          input: Schema.Number,
          output: Schema.Number,
          run: (n) => Effect.as(Effect.sleep("10 seconds"), n)
        })
        const fiber = yield* Effect.forkChild(Tool.all([sleepy, sleepy, sleepy]).run(1))
        yield* TestClock.adjust("10 seconds")
        assert.deepStrictEqual(yield* Fiber.join(fiber), [1, 1, 1])
      }).pipe(grant0)
    )

    it.effect("orElse falls back on failure only", () =>
      Effect.gen(function* () {
        const t = Tool.orElse(evenOnly, double)
        assert.strictEqual(yield* t.run(2), 2)
        assert.strictEqual(yield* t.run(3), 6)
      }).pipe(grant0)
    )

    it.effect("choice dispatches on _tag", () =>
      Effect.gen(function* () {
        const t = Tool.choice({
          Inc: Tool.fromFunction({ name: "i", f: (x: { readonly _tag: "Inc"; readonly n: number }) => x.n + 1 }),
          Neg: Tool.fromFunction({ name: "n", f: (x: { readonly _tag: "Neg"; readonly n: number }) => -x.n })
        })
        assert.strictEqual(yield* t.run({ _tag: "Inc", n: 1 }), 2)
        assert.strictEqual(yield* t.run({ _tag: "Neg", n: 1 }), -1)
      })
    )
  })

  describe("wrap", () => {
    it.effect("replaces run and keeps the metadata", () =>
      Effect.gen(function* () {
        const t = Tool.wrap(inc, (run) => (n: number) => Effect.map(run(n), (x) => x * 100), { name: "inc100" })
        assert.strictEqual(t.name, "inc100")
        assert.strictEqual(t.input, inc.input)
        assert.strictEqual(yield* t.run(1), 200)
      })
    )

    it("withName renames", () => {
      assert.strictEqual(Tool.withName(inc, "plus.one").name, "plus.one")
      assert.strictEqual(inc.pipe(Tool.withName("plus.one")).name, "plus.one")
    })
  })
})
