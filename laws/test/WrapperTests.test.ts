/**
 * The wrapper rule set on core's own wrappers (`Tool.withName`, `Trust.gate`)
 * and on deliberately broken wrappers, which it must catch.
 */
import { assert, describe, it } from "@effect/vitest"
import { Observer, Tool, ToolError, Trust } from "@ugent/core"
import { Laws, Report, RuleSet, WrapperTests } from "@ugent/laws"
import { Effect, Predicate } from "effect"

Laws.wrapper("Tool.withName", { wrap: (t) => Tool.withName(t, `renamed(${t.name})`), failures: true, idempotent: true })

// Trust.gate: an L3 observer is let through everything (allow-all is the identity); an L0 observer is refused
// every call to an L1 tool, and the tool never runs.
Laws.wrapper("Trust.gate", {
  wrap: (t) => Trust.gate(t),
  tools: { trust: 1 },
  failures: true,
  provide: Observer.layer({ id: "admin", trust: 3 }),
  allow: Observer.layer({ id: "admin", trust: 3 }),
  deny: Observer.layer({ id: "guest", trust: 0 }),
  denied: (e) => Predicate.isTagged(e, "TrustDenied")
})

const verdict = (reports: ReadonlyArray<Report.Report>, law: string) =>
  reports.find((r) => Report.lawName(r) === `wrapper: ${law}`)?._tag

describe("the wrapper rule set catches broken wrappers", () => {
  it.effect("a wrapper that swallows failures is not transparent", () =>
    Effect.gen(function* () {
      const swallow = (t: Tool.Any) => Tool.wrap(t, (run) => (a) => Effect.catch(run(a), () => Effect.succeed(a)))
      const reports = yield* RuleSet.check("swallow", WrapperTests.wrapper({ wrap: swallow, failures: true }), {
        seed: 1
      })
      assert.strictEqual(verdict(reports, "transparency"), "Falsified")
    })
  )

  it.effect("a wrapper that delays the call changes the timing of effects", () =>
    Effect.gen(function* () {
      const slow = (t: Tool.Any) => Tool.wrap(t, (run) => (a) => Effect.delay(run(a), "5 millis"))
      const reports = yield* RuleSet.check("slow", WrapperTests.wrapper({ wrap: slow }), { seed: 1 })
      assert.strictEqual(verdict(reports, "transparency"), "Falsified")
      assert.include(Report.format(reports[0]!), "the effect logs differ")
    })
  )

  it.effect("a wrapper that runs the tool twice is not idempotent-transparent", () =>
    Effect.gen(function* () {
      const twice = (t: Tool.Any) => Tool.wrap(t, (run) => (a) => Effect.andThen(run(a), run(a)))
      const reports = yield* RuleSet.check("twice", WrapperTests.wrapper({ wrap: twice }), { seed: 1 })
      assert.strictEqual(verdict(reports, "transparency"), "Falsified")
    })
  )

  it.effect("a gate that runs the tool before refusing is caught by deny-all", () =>
    Effect.gen(function* () {
      const leaky = (t: Tool.Any) =>
        Tool.wrap(
          t,
          (run) => (a) =>
            Effect.gen(function* () {
              const observer = yield* Observer.Observer
              const out = yield* run(a)
              if (observer.trust < t.trust) {
                return yield* new ToolError.TrustDenied({ tool: t.name, required: 1, actual: 0 })
              }
              return out
            })
        )
      const reports = yield* RuleSet.check(
        "leaky gate",
        WrapperTests.gate({
          wrap: leaky,
          tools: { trust: 1, families: ["log", "sleep"] },
          allow: Observer.layer({ id: "admin", trust: 3 }),
          deny: Observer.layer({ id: "guest", trust: 0 })
        }),
        { seed: 1 }
      )
      const denied = reports.find((r) => r.law === "deny-all fails")!
      assert.strictEqual(denied._tag, "Falsified")
      assert.include(Report.format(denied), "the tool ran anyway")
    })
  )
})
