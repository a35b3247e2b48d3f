import { assert, describe, it } from "@effect/vitest"
import { Stores } from "@ugent/wrappers"
import { Context, Effect, Layer, Schema } from "effect"
import { CircuitBreaker, RateLimiter } from "effect/persistence"
import { required, skipReason } from "./backends.ts"

const skip = skipReason("UGENT_REDIS_URL")

/** A prefix of its own per test, so runs never see each other's keys. */
const freshPrefix = () => `ugent-test:${process.pid}:${Math.random().toString(36).slice(2, 10)}:`

class Boom extends Schema.TaggedError<Boom>()("Boom", {}) {}

/** Two limiters that share nothing but their store layer's target: separate layers, connections and state. */
const twoLimiters = (store: () => Layer.Layer<RateLimiter.RateLimiterStore, unknown>) =>
  Effect.gen(function* () {
    const a = yield* Layer.build(RateLimiter.layer.pipe(Layer.provide(store())))
    const b = yield* Layer.build(RateLimiter.layer.pipe(Layer.provide(store())))
    return [Context.get(a, RateLimiter.RateLimiter), Context.get(b, RateLimiter.RateLimiter)] as const
  })

const consume = (limiter: RateLimiter.RateLimiter, key: string) =>
  limiter.consume({ key, limit: 5, window: "1 minute" }).pipe(
    Effect.map((r) => `ok, ${r.remaining} left`),
    Effect.catchTag("RateLimiterError", (e) => Effect.succeed(e.reason._tag))
  )

const breakers = (store: () => Layer.Layer<CircuitBreaker.CircuitBreakerStore, unknown>) =>
  Effect.gen(function* () {
    const make = () =>
      Layer.build(
        CircuitBreaker.layer({ tripPolicy: CircuitBreaker.consecutive(2), openDuration: "1 minute" }).pipe(
          Layer.provide(store())
        )
      )
    const a = yield* make()
    const b = yield* make()
    return [Context.get(a, CircuitBreaker.CircuitBreaker), Context.get(b, CircuitBreaker.CircuitBreaker)] as const
  })

describe.skipIf(skip !== undefined)(`Redis stores${skip ? ` ${skip}` : ""}`, () => {
  describe("RateLimiter", () => {
    it.live("two limiters on one Redis share one limit", () =>
      Effect.gen(function* () {
        const url = required("UGENT_REDIS_URL")
        const prefix = freshPrefix()
        const [a, b] = yield* twoLimiters(() => Stores.layerRateLimiterRedis({ url, prefix }))
        const results = [
          yield* consume(a, "world.tools.web.fetch"),
          yield* consume(b, "world.tools.web.fetch"),
          yield* consume(a, "world.tools.web.fetch"),
          yield* consume(b, "world.tools.web.fetch"),
          yield* consume(a, "world.tools.web.fetch"),
          yield* consume(b, "world.tools.web.fetch"),
          yield* consume(a, "world.tools.web.fetch")
        ]
        assert.deepStrictEqual(results, [
          "ok, 4 left",
          "ok, 3 left",
          "ok, 2 left",
          "ok, 1 left",
          "ok, 0 left",
          "RateLimitExceeded",
          "RateLimitExceeded"
        ])
      }).pipe(Effect.scoped)
    )

    it.live("concurrent callers on two limiters get exactly the limit between them", () =>
      Effect.gen(function* () {
        const url = required("UGENT_REDIS_URL")
        const prefix = freshPrefix()
        const [a, b] = yield* twoLimiters(() => Stores.layerRateLimiterRedis({ url, prefix }))
        const results = yield* Effect.all(
          Array.from({ length: 40 }, (_, i) => consume(i % 2 ? a : b, "global")),
          { concurrency: "unbounded" }
        )
        assert.strictEqual(results.filter((r) => r.startsWith("ok")).length, 5)
        assert.strictEqual(results.filter((r) => r === "RateLimitExceeded").length, 35)
      }).pipe(Effect.scoped)
    )

    it.live("separate memory stores do not share a limit (the contrast)", () =>
      Effect.gen(function* () {
        const [a, b] = yield* twoLimiters(() => RateLimiter.layerStoreMemory)
        for (let i = 0; i < 5; i++) yield* consume(a, "k")
        assert.strictEqual(yield* consume(b, "k"), "ok, 4 left")
      }).pipe(Effect.scoped)
    )
  })

  describe("CircuitBreaker", () => {
    it.live("a breaker opened by one instance is open for another", () =>
      Effect.gen(function* () {
        const url = required("UGENT_REDIS_URL")
        const prefix = freshPrefix()
        const [a, b] = yield* breakers(() =>
          Stores.layerCircuitBreakerRedis({ url, prefix, idleTimeToLive: "1 minute" })
        )
        for (let i = 0; i < 2; i++) yield* Effect.ignore(a.execute(Effect.fail(new Boom()), { key: "web.fetch" }))
        assert.strictEqual((yield* b.state("web.fetch"))._tag, "Open")
        const error = yield* Effect.flip(b.execute(Effect.succeed("never runs"), { key: "web.fetch" }))
        assert.strictEqual(error._tag === "CircuitBreakerError" ? error.reason._tag : error._tag, "CircuitOpen")
      }).pipe(Effect.scoped)
    )

    it.live("layerRedis provides both stores, under the same keys as the single-store layers", () =>
      Effect.gen(function* () {
        const url = required("UGENT_REDIS_URL")
        const prefix = freshPrefix()
        const both = yield* Layer.build(
          Layer.mergeAll(
            RateLimiter.layer,
            CircuitBreaker.layer({ tripPolicy: CircuitBreaker.consecutive(1), openDuration: "1 minute" })
          ).pipe(Layer.provide(Stores.layerRedis({ url, prefix })))
        )
        const [, limiter] = yield* twoLimiters(() => Stores.layerRateLimiterRedis({ url, prefix }))
        const [, breaker] = yield* breakers(() => Stores.layerCircuitBreakerRedis({ url, prefix }))
        for (let i = 0; i < 5; i++) yield* consume(Context.get(both, RateLimiter.RateLimiter), "shared")
        assert.strictEqual(yield* consume(limiter, "shared"), "RateLimitExceeded")
        yield* Effect.ignore(
          Context.get(both, CircuitBreaker.CircuitBreaker).execute(Effect.fail(new Boom()), { key: "b" })
        )
        yield* Effect.ignore(breaker.execute(Effect.fail(new Boom()), { key: "b" }))
        assert.strictEqual((yield* breaker.state("b"))._tag, "Open")
      }).pipe(Effect.scoped)
    )

    it.live("separate memory stores keep separate breakers (the contrast)", () =>
      Effect.gen(function* () {
        const [a, b] = yield* breakers(() => CircuitBreaker.layerStoreMemory())
        for (let i = 0; i < 2; i++) yield* Effect.ignore(a.execute(Effect.fail(new Boom()), { key: "k" }))
        assert.strictEqual((yield* a.state("k"))._tag, "Open")
        assert.strictEqual(yield* b.execute(Effect.succeed("ran"), { key: "k" }), "ran")
      }).pipe(Effect.scoped)
    )
  })
})
