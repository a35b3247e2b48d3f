import { afterEach, assert, describe, it } from "@effect/vitest"
import { ReadProof, Tool } from "@ugent/core"
import { ArrowTests, Law, Laws, Observation, Report, RuleSet } from "@ugent/laws"
import { Arbitrary, Context, Effect, Layer, Schema } from "effect"

const ints = Arbitrary.schema(Schema.Int)
const holds = Law.make("n = n", ints, (n) => Law.isEq("n", Effect.succeed(n), "n", Effect.succeed(n)))
// Falsified by every n > 3: shrinking must land on 4.
const small = Law.make("n is small", ints, (n) =>
  Law.isEq("n", Effect.succeed(Math.min(n, 3)), "min(n, 3)", Effect.succeed(n))
)

afterEach(() => {
  delete process.env.UGENT_LAWS_SEED
  delete process.env.UGENT_LAWS_REPLAY
})

describe("RuleSet", () => {
  it("lists inherited laws first, each once", () => {
    const base = RuleSet.make("base", [holds])
    const left = RuleSet.make("left", [small], [base])
    const right = RuleSet.make("right", [], [base])
    const both = RuleSet.make("both", [], [left, right])
    assert.deepStrictEqual(
      RuleSet.laws(both).map((l) => `${l.ruleSet}: ${l.law.name}`),
      ["base: n = n", "left: n is small"]
    )
  })

  it("arrow inherits category", () => {
    const names = RuleSet.laws(ArrowTests.arrow({ input: Schema.Int })).map((l) => l.ruleSet)
    assert.include(names, "category")
    assert.include(names, "arrow")
    assert.strictEqual(names.indexOf("category"), 0)
  })

  describe("check", () => {
    it.effect("reports a pass per law with its seed", () =>
      Effect.gen(function* () {
        const [report] = yield* RuleSet.check("ints", RuleSet.make("eq", [holds]), { seed: 17, runs: 25 })
        assert.deepStrictEqual(report, {
          _tag: "Passed",
          suite: "ints",
          ruleSet: "eq",
          law: "n = n",
          seed: 17,
          runs: 25
        })
      })
    )

    it.effect("shrinks a falsified law and is deterministic for a seed", () =>
      Effect.gen(function* () {
        const rs = RuleSet.make("ints", [small])
        const [a] = yield* RuleSet.check("ints", rs, { seed: 23 })
        const [b] = yield* RuleSet.check("ints", rs, { seed: 23 })
        assert.strictEqual(a!._tag, "Falsified")
        assert.strictEqual((a as Report.Falsified).shrunkInput, 4)
        assert.deepStrictEqual(b, a)
      })
    )

    it.effect("takes its seed from UGENT_LAWS_SEED when none is given", () =>
      Effect.gen(function* () {
        process.env.UGENT_LAWS_SEED = "4242"
        const [report] = yield* RuleSet.check("ints", RuleSet.make("eq", [holds]), { runs: 5 })
        assert.strictEqual(report!.seed, 4242)
      })
    )

    it.effect("replays the law named by UGENT_LAWS_REPLAY", () =>
      Effect.gen(function* () {
        const rs = RuleSet.make("ints", [small, holds])
        const [first] = yield* RuleSet.check("ints", rs, { seed: 31 })
        process.env.UGENT_LAWS_REPLAY = (first as Report.Falsified).replay
        const [replayed, other] = yield* RuleSet.check("ints", rs, { seed: 1 })
        assert.strictEqual(replayed!._tag, "Falsified")
        assert.strictEqual((replayed as Report.Falsified).runs, 1)
        assert.strictEqual((replayed as Report.Falsified).shrunkInput, 4)
        assert.deepStrictEqual([other!._tag, other!.seed], ["Passed", 1])
      })
    )

    it.effect("ignores a replay token printed for another suite", () =>
      Effect.gen(function* () {
        const rs = RuleSet.make("ints", [small])
        const [first] = yield* RuleSet.check("ints", rs, { seed: 31 })
        const [elsewhere] = yield* RuleSet.check("other suite", rs, {
          seed: 31,
          replay: (first as Report.Falsified).replay
        })
        assert.isAbove((elsewhere as Report.Falsified).runs, 1)
      })
    )

    it.effect("says the replay no longer reproduces when the law changed", () =>
      Effect.gen(function* () {
        const [first] = yield* RuleSet.check("ints", RuleSet.make("ints", [small]), { seed: 31 })
        const fixed = Law.make("n is small", ints, (n) => Law.isEq("n", Effect.succeed(n), "n", Effect.succeed(n)))
        const [again] = yield* RuleSet.check("ints", RuleSet.make("ints", [fixed]), {
          replay: (first as Report.Falsified).replay
        })
        assert.strictEqual(again!._tag, "ReplayMismatch")
        assert.include(Report.format(again!), "no longer reproduces")
      })
    )

    it.effect("reports a missing service as Errored, naming provide", () =>
      Effect.gen(function* () {
        class Clock2 extends Context.Service<Clock2, { readonly now: number }>()("test/Clock2") {}
        const stamp = Tool.make({
          name: "stamp",
          description: "Reads a service.",
          input: Schema.Int,
          output: Schema.Int,
          run: (n) => Clock2.use((c) => Effect.succeed(n + c.now))
        })
        const law = Law.make("runs", ints, (n) => Law.isEq("stamp", stamp.run(n), "stamp", stamp.run(n)))
        const [missing] = yield* RuleSet.check("stamp", RuleSet.make("s", [law]), { seed: 1, runs: 3 })
        assert.strictEqual(missing!._tag, "Errored")
        assert.include(Report.format(missing!), "provide")
        const [given] = yield* RuleSet.check("stamp", RuleSet.make("s", [law]), {
          seed: 1,
          runs: 3,
          provide: Layer.succeed(Clock2, { now: 1 })
        })
        assert.strictEqual(given!._tag, "Passed")
      })
    )

    it.effect("reports a tool above the granted trust as Errored, naming trust", () =>
      Effect.gen(function* () {
        const admin = Tool.make({
          name: "admin.op",
          description: "Needs L2.",
          trust: 2,
          input: Schema.Int,
          output: Schema.Int,
          run: (n) => Effect.succeed(n)
        })
        const law = Law.make("runs", ints, (n) => Law.isEq("op", admin.run(n), "n", Effect.succeed(n)))
        const [report] = yield* RuleSet.check("admin", RuleSet.make("s", [law]), { seed: 1, runs: 3, trust: 1 })
        assert.strictEqual(report!._tag, "Errored")
        assert.include(Report.format(report!), "needs trust L2, above the L1 the check grants")
      })
    )

    it.effect("uses the equivalence it is given", () =>
      Effect.gen(function* () {
        let calls = 0
        const stamped = Law.make("same id", ints, (n) =>
          Law.isEq(
            "first call",
            Effect.sync(() => ({ id: n, call: ++calls })),
            "second call",
            Effect.sync(() => ({ id: n, call: ++calls }))
          )
        )
        const rs = RuleSet.make("ids", [stamped])
        const [strict] = yield* RuleSet.check("ids", rs, { seed: 2, runs: 10 })
        const byId = Observation.byOutput((a, b) => (a as { id: number }).id === (b as { id: number }).id)
        const [loose] = yield* RuleSet.check("ids", rs, { seed: 2, runs: 10, equivalence: byId })
        assert.deepStrictEqual([strict!._tag, loose!._tag], ["Falsified", "Passed"])
      })
    )

    it.effect("counts a case whose precondition fails as a pass", () =>
      Effect.gen(function* () {
        const onlyEven = Law.make("even only", ints, (n) =>
          Law.isEq(
            "lhs",
            Effect.succeed("never equal"),
            "n",
            n % 2 === 0 ? Effect.fail(n) : Effect.succeed(n),
            (rhs) => rhs.exit._tag === "Failure"
          )
        )
        const [report] = yield* RuleSet.check("ints", RuleSet.make("cond", [onlyEven]), { seed: 3, runs: 50 })
        // lhs always succeeds, so every case where the precondition holds (n even) differs.
        assert.strictEqual(report!._tag, "Falsified")
        assert.strictEqual((report as Report.Falsified).shrunkInput, 0)
      })
    )
  })
})

// Type-level: `provide` is required exactly when the tool needs a service of its own.
class Dictionary extends Context.Service<Dictionary, { readonly size: number }>()("test/Dictionary") {}
const needsDictionary = Tool.make({
  name: "dict.size",
  description: "Reads the dictionary.",
  input: Schema.Int,
  output: Schema.Int,
  run: (n) => Dictionary.use((d) => Effect.succeed(n + d.size))
})
const typeChecks = () => {
  // @ts-expect-error: the tool needs Dictionary, and no layer provides it
  Laws.category("dict.size", { tool: needsDictionary })
  Laws.category("dict.size", { tool: needsDictionary, provide: Layer.succeed(Dictionary, { size: 1 }) })
  Laws.category("inc", {
    tool: Tool.fromFunction({ name: "inc", input: Schema.Int, output: Schema.Int, f: (n: number) => n + 1 })
  })
  const fixture = {
    makeFile: () => Dictionary.use((d) => Effect.succeed(`file-${d.size}`)),
    read: (path: string) => ReadProof.issue({ path, content: "", coverage: { _tag: "Whole" } }),
    write: () => Effect.void
  }
  // @ts-expect-error: makeFile needs Dictionary, and no layer provides it
  Laws.causal("dict files", fixture)
  Laws.causal("dict files", { ...fixture, provide: Layer.succeed(Dictionary, { size: 1 }) })
}
// Checked by tsc, never run: running it would register tests.
void typeChecks
