/**
 * The meta-test: the kit must catch deliberately broken instances. Each
 * broken instance differs from ugent's `Tool` in one operation; checking the
 * combinator rule set (which inherits arrow and category) must report the
 * law that pins that operation as falsified, with a message that names the
 * sides that differed, the shrunk input, the seed and a replay token.
 */
import { assert, describe, it } from "@effect/vitest"
import { Tool, ToolError } from "@ugent/core"
import { CombinatorTests, Instance, Report, RuleSet } from "@ugent/laws"
import { Effect, Schema } from "effect"

const checkInstance = (name: string, instance: Instance.Instance) =>
  RuleSet.check(name, CombinatorTests.combinators({ input: Schema.Int, instance }), { seed: 11, runs: 100 })

const verdicts = (reports: ReadonlyArray<Report.Report>) =>
  Object.fromEntries(reports.map((r) => [Report.lawName(r), r._tag]))

const falsified = (reports: ReadonlyArray<Report.Report>, law: string): Report.Falsified => {
  const report = reports.find((r) => Report.lawName(r) === law)
  assert.isDefined(report, `no report for ${law}`)
  assert.strictEqual(report!._tag, "Falsified", `${law} should be falsified:\n${Report.format(report!)}`)
  return report as Report.Falsified
}

const swappedComposition: Instance.Instance = {
  ...Instance.tool,
  name: "swapped andThen",
  andThen: (f, g) => Tool.andThen(g, f)
}

const recoveringComposition: Instance.Instance = {
  ...Instance.tool,
  name: "andThen that drops f's failure",
  // A typed failure of f is swallowed: its input passes on as if f had succeeded.
  andThen: (f, g) =>
    Tool.andThen(
      Tool.wrap(f, (run) => (a) => Effect.catch(run(a), () => Effect.succeed(a))),
      g
    )
}

const alteringIdentity: Instance.Instance = {
  ...Instance.tool,
  name: "identity that alters its input",
  identity: (schema) =>
    Tool.fromFunction({
      name: "identity",
      input: schema,
      output: schema,
      f: (a: unknown) => (typeof a === "number" ? a + 1 : a)
    })
}

const swappingFirst: Instance.Instance = {
  ...Instance.tool,
  name: "first that swaps the components",
  first: (f) =>
    Tool.wrap(
      Tool.first(f),
      (run) => (pair) =>
        Effect.map(
          run(pair),
          (out) => [(out as readonly [unknown, unknown])[1], (out as readonly [unknown, unknown])[0]] as const
        )
    )
}

const droppingCollectAll: Instance.Instance = {
  ...Instance.tool,
  name: "collect-all that drops a failure",
  all: (tools, options) =>
    Tool.wrap(
      Instance.tool.all(tools, options),
      (run) => (a) =>
        Effect.mapError(run(a), (e) =>
          options.mode === "collect-all" && ToolError.isAllFailed(e) ? ToolError.allFailed(e.failures.slice(0, 1)) : e
        )
    )
}

describe("the kit catches broken instances", () => {
  it.effect("ugent's Tool passes every law (the control)", () =>
    Effect.gen(function* () {
      const reports = yield* checkInstance("Tool", Instance.tool)
      assert.deepStrictEqual(reports.filter((r) => !Report.isPassed(r)).map(Report.format), [])
    })
  )

  it.effect("composition with the order swapped", () =>
    Effect.gen(function* () {
      const reports = yield* checkInstance("swapped", swappedComposition)
      falsified(reports, "category: composition runs f then g")
      // The opposite category is a category: the structural laws alone cannot see the swap.
      assert.strictEqual(verdicts(reports)["category: left identity"], "Passed")
    })
  )

  it.effect("composition that drops an error (recovers silently)", () =>
    Effect.gen(function* () {
      const reports = yield* checkInstance("recovering", recoveringComposition)
      falsified(reports, "category: right identity")
      falsified(reports, "category: composition runs f then g")
    })
  )

  it.effect("an identity that alters its input", () =>
    Effect.gen(function* () {
      const reports = yield* checkInstance("altering identity", alteringIdentity)
      falsified(reports, "category: identity returns its input")
      falsified(reports, "category: left identity")
      falsified(reports, "arrow: arr id = id")
    })
  )

  it.effect("a first that swaps the components", () =>
    Effect.gen(function* () {
      const reports = yield* checkInstance("swapping first", swappingFirst)
      falsified(reports, "arrow: first (arr k) = arr (first k)")
      falsified(reports, "arrow: first f >> arr fst = arr fst >> f")
    })
  )

  it.effect("a collect-all that drops a failure", () =>
    Effect.gen(function* () {
      const reports = yield* checkInstance("dropping collect-all", droppingCollectAll)
      const report = falsified(reports, "combinators: all collect-all reports every failure")
      // Only an input on which both branches fail can show it; the shrunk input is one.
      assert.include(Report.format(report), "AllFailed")
      assert.strictEqual(verdicts(reports)["combinators: all over one tool = map (collect-all)"], "Passed")
    })
  )
})

describe("a falsified law's message", () => {
  it.effect("names the sides that differed, the shrunk input, the seed and a replay token", () =>
    Effect.gen(function* () {
      const reports = yield* checkInstance("swapped", swappedComposition)
      const report = falsified(reports, "category: composition runs f then g")
      const message = Report.format(report)
      assert.include(message, "swapped / category: composition runs f then g: falsified after")
      assert.include(message, "f >> g  <->  f(a).flatMap(g)")
      assert.match(message, /the (exits|effect logs)( and the (exits|effect logs))? differ/)
      assert.include(message, "shrunk input: { f: Tool(")
      assert.include(message, "seed: 11")
      assert.include(message, `replay: ${report.replay}`)
      assert.include(message, "UGENT_LAWS_REPLAY")
      assert.match(message, /f >> g => (Success|Failure)\(/)
    })
  )

  it.effect("shrinks the generated tools towards the simplest that still break the law", () =>
    Effect.gen(function* () {
      const reports = yield* checkInstance("recovering", recoveringComposition)
      const report = falsified(reports, "category: right identity")
      // The only tool that shows a dropped failure is a failing one; it shrinks to "fails always".
      assert.include(Report.format(report), "failWhen(%1)")
    })
  )
})

describe("replay", () => {
  it.effect("a replay token reruns exactly the failure it was printed for", () =>
    Effect.gen(function* () {
      const first = falsified(
        yield* checkInstance("swapped", swappedComposition),
        "category: composition runs f then g"
      )
      const again = yield* RuleSet.check(
        "swapped",
        CombinatorTests.combinators({ input: Schema.Int, instance: swappedComposition }),
        { seed: 999, runs: 100, replay: first.replay }
      )
      const replayed = falsified(again, "category: composition runs f then g")
      assert.strictEqual(replayed.runs, 1)
      assert.strictEqual(Report.format(replayed).split("\n")[2], Report.format(first).split("\n")[2])
      // The other laws are not replayed: they run with the given seed.
      assert.strictEqual(again.find((r) => r.law === "left identity")!.seed, 999)
    })
  )
})
