import { assert, describe, it } from "@effect/vitest"
import { Tool, ToolError, Trust } from "@ugent/core"
import { CircuitOpen, RateLimitedError, Retry } from "@ugent/wrappers"
import { Clock, type Duration, Effect, Exit, Fiber, Schema } from "effect"
import { TestClock } from "effect/testing"

class Busy extends Schema.TaggedError<Busy>()("Busy", {
  retryable: Schema.Boolean,
  retryAfterMillis: Schema.optionalKey(Schema.Number)
}) {}

/** Fails with `errors[i]` on run i, then succeeds; records the virtual time and attempt of each run. */
const scripted = <E>(errors: ReadonlyArray<E>) => {
  const runs: Array<{ readonly at: number; readonly attempt: number }> = []
  const tool = Tool.make({
    name: "test.flaky",
    description: "Fails as scripted.",
    input: Schema.Struct({ id: Schema.Number }),
    output: Schema.Number,
    failure: Schema.Any,
    run: ({ id }) =>
      Effect.gen(function* () {
        runs.push({ at: yield* Clock.currentTimeMillis, attempt: yield* Retry.Attempt })
        const error = errors[runs.length - 1]
        return error === undefined ? id : yield* Effect.fail(error)
      })
  })
  return { tool: tool as Tool.Tool<{ readonly id: number }, number, E, Trust.L0>, runs }
}

const busy = (retryAfterMillis?: number) =>
  new Busy({ retryable: true, ...(retryAfterMillis === undefined ? {} : { retryAfterMillis }) })

const runFor = <A, E, R>(effect: Effect.Effect<A, E, R>, advance: Duration.Input) =>
  Effect.gen(function* () {
    const fiber = yield* Effect.forkChild(Effect.exit(effect))
    yield* TestClock.adjust(advance)
    return yield* Fiber.join(fiber)
  })

describe("Retry", () => {
  it.effect("retries retryable failures until the call succeeds", () =>
    Effect.gen(function* () {
      const { tool, runs } = scripted([busy(), busy()])
      const exit = yield* runFor(Retry(tool).run({ id: 7 }), "1 minute")
      assert.deepStrictEqual(exit, Exit.succeed(7))
      assert.deepStrictEqual(
        runs.map((r) => r.attempt),
        [1, 2, 3]
      )
    }).pipe(Effect.provide(Trust.grant(0)))
  )

  it.effect("gives up after `times` retries with the last error", () =>
    Effect.gen(function* () {
      const last = busy(1)
      const { tool, runs } = scripted([busy(), busy(), last, busy()])
      const exit = yield* runFor(Retry(tool, { times: 2 }).run({ id: 1 }), "1 minute")
      assert.deepStrictEqual(exit, Exit.fail(last))
      assert.strictEqual(runs.length, 3)
    }).pipe(Effect.provide(Trust.grant(0)))
  )

  it.effect("does not retry an error that is not marked retryable", () =>
    Effect.gen(function* () {
      const fatal = new Busy({ retryable: false })
      const { tool, runs } = scripted([fatal])
      const exit = yield* runFor(Retry(tool).run({ id: 1 }), "1 minute")
      assert.deepStrictEqual(exit, Exit.fail(fatal))
      assert.strictEqual(runs.length, 1)
    }).pipe(Effect.provide(Trust.grant(0)))
  )

  const refusals: ReadonlyArray<readonly [string, () => object]> = [
    ["CircuitOpen", () => new CircuitOpen({ tool: "t", key: "t", state: "open", retryAfterMillis: 10 })],
    ["TrustDenied", () => new ToolError.TrustDenied({ tool: "t", required: 1, actual: 0 })],
    ["InvalidInput", () => new ToolError.InvalidInput({ tool: "t", issues: "x" })],
    [
      "RateLimited",
      () => new RateLimitedError({ tool: "t", scope: "tool", limit: 1, windowMillis: 1000, retryAfterMillis: 10 })
    ],
    ["Forbidden", () => new ToolError.Forbidden({ tool: "t", rule: "r", detail: "d" })],
    ["ApprovalDenied", () => new ToolError.ApprovalDenied({ tool: "t", reason: "denied" })]
  ]
  for (const [tag, make] of refusals) {
    it.effect(`never retries ${tag}, even marked retryable`, () =>
      Effect.gen(function* () {
        const policyError = Object.assign(make(), { retryable: true, retryAfterMillis: 10 })
        const { tool, runs } = scripted([policyError])
        yield* runFor(Retry(tool).run({ id: 1 }), "1 minute")
        assert.strictEqual(runs.length, 1)
      }).pipe(Effect.provide(Trust.grant(0)))
    )
  }

  it.effect("does not retry defects", () =>
    Effect.gen(function* () {
      let runs = 0
      const buggy = Tool.make({
        name: "test.buggy",
        description: "Dies.",
        input: Schema.Number,
        output: Schema.Number,
        run: () => Effect.suspend(() => (++runs > 0 ? Effect.die(new Error("bug")) : Effect.succeed(1)))
      })
      const exit = yield* runFor(Retry(buggy).run(1), "1 minute")
      assert.isTrue(Exit.isFailure(exit))
      assert.strictEqual(runs, 1)
    }).pipe(Effect.provide(Trust.grant(0)))
  )

  it.effect("waits base, base·factor, base·factor² without jitter", () =>
    Effect.gen(function* () {
      const { tool, runs } = scripted([busy(), busy(), busy()])
      yield* runFor(Retry(tool, { base: "100 millis", jitter: false }).run({ id: 1 }), "1 minute")
      assert.deepStrictEqual(
        runs.map((r) => r.at),
        [0, 100, 300, 700]
      )
    }).pipe(Effect.provide(Trust.grant(0)))
  )

  it.effect("caps every wait", () =>
    Effect.gen(function* () {
      const { tool, runs } = scripted([busy(), busy(), busy()])
      yield* runFor(
        Retry(tool, { base: "1 second", factor: 10, cap: "2 seconds", jitter: false }).run({ id: 1 }),
        "1 hour"
      )
      assert.deepStrictEqual(
        runs.map((r) => r.at),
        [0, 1000, 3000, 5000]
      )
    }).pipe(Effect.provide(Trust.grant(0)))
  )

  it.effect("jitters each wait within [0.8, 1.2] of the backoff, never past the cap", () =>
    Effect.gen(function* () {
      const { tool, runs } = scripted(Array.from({ length: 6 }, () => busy()))
      yield* runFor(Retry(tool, { times: 6, base: "100 millis", cap: "1 second" }).run({ id: 1 }), "1 hour")
      const waits = runs.slice(1).map((r, i) => r.at - runs[i]!.at)
      waits.forEach((w, i) => {
        const nominal = 100 * 2 ** i
        assert.isAtLeast(w, Math.min(nominal * 0.8, 1000) - 1)
        assert.isAtMost(w, Math.min(nominal * 1.2, 1000) + 1)
      })
    }).pipe(Effect.provide(Trust.grant(0)))
  )

  it.effect("honours a retry-after hint, up to the cap", () =>
    Effect.gen(function* () {
      const { tool, runs } = scripted([busy(5000), busy(60_000)])
      yield* runFor(Retry(tool, { base: "100 millis", cap: "10 seconds", jitter: false }).run({ id: 1 }), "1 hour")
      assert.deepStrictEqual(
        runs.map((r) => r.at),
        [0, 5000, 15_000]
      )
    }).pipe(Effect.provide(Trust.grant(0)))
  )

  it.effect("narrows what is retried with `while`", () =>
    Effect.gen(function* () {
      const { tool, runs } = scripted([busy(1), busy()])
      yield* runFor(Retry(tool, { while: (e) => (e as Busy).retryAfterMillis === undefined }).run({ id: 1 }), "1 hour")
      assert.strictEqual(runs.length, 1)
    }).pipe(Effect.provide(Trust.grant(0)))
  )

  it.effect.prop("of a pure tool is the tool", { n: Schema.Int }, ({ n }) =>
    Effect.gen(function* () {
      const inc = Tool.fromFunction({
        name: "inc",
        input: Schema.Number,
        output: Schema.Number,
        f: (x: number) => x + 1
      })
      const retried = Retry(inc)
      assert.deepStrictEqual(yield* Effect.exit(retried.run(n)), yield* Effect.exit(inc.run(n)))
      assert.strictEqual(retried.name, inc.name)
      assert.isFalse(ToolError.isRetryable(undefined))
    })
  )
})
