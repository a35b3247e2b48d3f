/**
 * Threat 49: a shared limiter store (Redis) that is down or hangs. Calls answer within about a second
 * whatever Redis does: with `onStoreError: "fail"` they are refused with a typed `unavailable` error,
 * with `"allow"` they run uncounted, and the log says so once per outage, not once per call. The
 * servers here are the test's own: a closed port, a listener that never answers, and a proxy in
 * front of the real Redis (`UGENT_REDIS_URL`) that the test cuts and restores.
 */
import { createServer, type Server, Socket } from "node:net"
import { assert, describe, it } from "@effect/vitest"
import { Observer, Tool, ToolError, Trust } from "@ugent/core"
import { CircuitBreaker, OnStoreError, RateLimited, RateLimiterUnavailable, Stores } from "@ugent/wrappers"
import { Effect, Exit, Layer, Logger } from "effect"
import { RateLimiter } from "effect/persistence"
import { required, skipReason } from "./backends.ts"

const skip = skipReason("UGENT_REDIS_URL")

const freshPrefix = () => `ugent-test:${process.pid}:${Math.random().toString(36).slice(2, 10)}:`

/** A local listener; `close` ends it and every connection it holds. */
const listen = (onSocket: (socket: Socket) => void) =>
  Effect.acquireRelease(
    Effect.callback<{ readonly server: Server; readonly port: number; readonly sockets: Set<Socket> }>((resume) => {
      const sockets = new Set<Socket>()
      const server = createServer((socket) => {
        sockets.add(socket)
        socket.on("close", () => sockets.delete(socket))
        socket.on("error", () => {})
        onSocket(socket)
      })
      server.listen(0, "127.0.0.1", () => {
        const address = server.address()
        resume(Effect.succeed({ server, port: typeof address === "object" && address ? address.port : 0, sockets }))
      })
    }),
    ({ server, sockets }) =>
      Effect.callback<void>((resume) => {
        for (const s of sockets) s.destroy()
        server.close(() => resume(Effect.void))
      })
  )

/** A port nothing listens on: one the system gave a listener, now closed. */
const closedPort = Effect.scoped(
  Effect.map(
    listen(() => {}),
    ({ port }) => port
  )
)

/** Collects every log line at Info or above, as the default logger would print them. */
const collectLogs = () => {
  const lines: Array<{ readonly level: string; readonly text: string }> = []
  const logger = Logger.make(({ logLevel, message, cause }) => {
    if (logLevel === "Debug" || logLevel === "Trace") return
    const text = (Array.isArray(message) ? message : [message]).map(String).join(" ")
    lines.push({ level: logLevel, text: cause.reasons.length > 0 ? `${text} ${String(cause)}` : text })
  })
  return { lines, layer: Logger.layer([logger]) }
}

const ping = Tool.fromFunction({ name: "test.ping", f: () => "pong" })
/** The road's order: rate limits outside, the breaker around the run; 10 per minute with a burst of 3. */
const limited = ping.pipe(
  CircuitBreaker(),
  RateLimited({ observer: [{ limit: 10, window: "1 minute", burst: 3 }], global: false, tool: false })
)

const redisLayers = (url: string, prefix: string) => {
  const stores = Stores.layerRedis({ url, prefix })
  return Layer.mergeAll(RateLimiter.layer.pipe(Layer.provide(stores)), stores)
}

/** `n` calls at once as one observer, with how long the slowest took. */
const burst = (n: number) =>
  Effect.gen(function* () {
    const started = Date.now()
    const exits = yield* Effect.all(
      Array.from({ length: n }, () =>
        Effect.exit(limited.run(null)).pipe(Effect.provide(Observer.layer({ id: "agent", trust: 0 })))
      ),
      { concurrency: "unbounded" }
    )
    const failures = exits.flatMap((e) => (Exit.isFailure(e) ? [e.cause] : []))
    return {
      ran: exits.filter(Exit.isSuccess).length,
      errors: failures.map((cause) => {
        const error = cause.reasons.find((r) => r._tag === "Fail")
        return error?._tag === "Fail" ? error.error : cause
      }),
      millis: Date.now() - started
    }
  })

const outageLines = (lines: ReadonlyArray<{ readonly text: string }>) =>
  lines.filter((l) => /Redis at 127\.0\.0\.1:\d+ does not answer/.test(l.text))

describe("threat 49: Redis down or hanging", () => {
  for (const policy of ["allow", "fail"] as const) {
    it.live(
      `threat 49: Redis on a closed port: 30 parallel calls answer at once (${policy === "allow" ? "run uncounted" : "refused as unavailable"}), one log line for the outage`,
      () =>
        Effect.gen(function* () {
          const port = yield* closedPort
          const logs = collectLogs()
          const result = yield* Effect.scoped(
            Effect.gen(function* () {
              const context = yield* Layer.build(redisLayers(`redis://127.0.0.1:${port}`, freshPrefix()))
              return yield* burst(30).pipe(Effect.provideContext(context))
            })
          ).pipe(
            Effect.provide(Layer.mergeAll(logs.layer, Trust.grant(0))),
            Effect.provideService(OnStoreError, policy)
          )
          assert.isBelow(result.millis, 1500, "every call answers at once, without waiting for Redis")
          if (policy === "allow") {
            assert.strictEqual(result.ran, 30)
          } else {
            assert.strictEqual(result.ran, 0)
            for (const error of result.errors) {
              assert.instanceOf(error, RateLimiterUnavailable)
              assert.strictEqual(ToolError.kindOf(error), "unavailable")
              assert.match((error as RateLimiterUnavailable).message, /Redis.*running and reachable/)
            }
          }
          assert.lengthOf(outageLines(logs.lines), 1, JSON.stringify(logs.lines))
          assert.lengthOf(logs.lines, 1, "nothing is logged per call")
          assert.notMatch(logs.lines[0]!.text, /\n\s+at /, "no stack trace")
        })
    )
  }

  it.live("threat 49: a Redis that accepts and never answers: calls are refused within a second or two", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const silent = yield* listen(() => {})
        const logs = collectLogs()
        const started = Date.now()
        const result = yield* Effect.scoped(
          Effect.gen(function* () {
            const context = yield* Layer.build(redisLayers(`redis://127.0.0.1:${silent.port}`, freshPrefix()))
            const first = yield* burst(30).pipe(Effect.provideContext(context))
            const second = yield* burst(30).pipe(Effect.provideContext(context))
            return { first, second }
          })
        ).pipe(Effect.provide(Layer.mergeAll(logs.layer, Trust.grant(0))), Effect.provideService(OnStoreError, "fail"))
        assert.isBelow(Date.now() - started, 3000, "start-up and the first calls wait a bounded time")
        assert.isBelow(result.second.millis, 500, "once the outage is known, calls do not wait at all")
        assert.strictEqual(result.first.ran + result.second.ran, 0)
        assert.isTrue(result.second.errors.every((e) => e instanceof RateLimiterUnavailable))
        assert.lengthOf(outageLines(logs.lines), 1, JSON.stringify(logs.lines))
        assert.lengthOf(logs.lines, 1, "nothing is logged per call")
      })
    )
  )

  describe.skipIf(skip !== undefined)(`through a proxy to the real Redis${skip ? ` ${skip}` : ""}`, () => {
    it.live(
      "threat 49: Redis cut mid-run, then hanging, then back: limits hold while it answers, calls are refused fast while it does not, one line when the outage starts and one when it ends",
      () =>
        Effect.scoped(
          Effect.gen(function* () {
            const target = new URL(required("UGENT_REDIS_URL"))
            // The proxy forwards while `mode` is "forward", swallows bytes while "hang", refuses while "cut".
            let mode: "forward" | "hang" | "cut" = "forward"
            const proxy = yield* listen((client) => {
              if (mode === "cut") return client.destroy()
              const upstream = new Socket()
              upstream.on("error", () => client.destroy())
              client.on("close", () => upstream.destroy())
              upstream.on("close", () => client.destroy())
              upstream.connect(Number(target.port || 6379), target.hostname)
              client.on("data", (chunk) => {
                if (mode === "forward") upstream.write(chunk)
              })
              upstream.on("data", (chunk) => {
                if (mode === "forward") client.write(chunk)
              })
            })
            const logs = collectLogs()
            const env = Layer.mergeAll(logs.layer, Trust.grant(0))
            const context = yield* Layer.build(
              redisLayers(`redis://127.0.0.1:${proxy.port}`, freshPrefix()).pipe(Layer.provideMerge(env))
            )
            const run = (n: number) =>
              burst(n).pipe(Effect.provideContext(context), Effect.provideService(OnStoreError, "fail"))

            // Up: the limit holds (10 per minute with a burst of 3).
            const up = yield* run(10)
            assert.strictEqual(up.ran, 10)

            // Hanging: answered within the command timeout, then at once.
            mode = "hang"
            const hanging = yield* run(30)
            assert.strictEqual(hanging.ran, 0)
            assert.isBelow(hanging.millis, 2000)
            assert.isTrue(hanging.errors.every((e) => e instanceof RateLimiterUnavailable))

            // Cut: every connection dropped, new ones refused.
            mode = "cut"
            for (const socket of proxy.sockets) socket.destroy()
            const cut = yield* run(30)
            assert.strictEqual(cut.ran, 0)
            assert.isBelow(cut.millis, 500)

            // Back: within a few seconds the limiter counts again, from where it was.
            mode = "forward"
            let back = yield* run(1)
            for (let i = 0; i < 50 && back.ran === 0; i++) {
              yield* Effect.sleep("200 millis")
              back = yield* run(1)
            }
            assert.strictEqual(back.ran, 1, "counted again once Redis answers")
            const after = yield* run(10)
            assert.strictEqual(after.ran, 2, "10 + 1 of 13 were used before: 2 remain")

            assert.lengthOf(outageLines(logs.lines), 1, JSON.stringify(logs.lines))
            assert.lengthOf(
              logs.lines.filter((l) => /answers again/.test(l.text)),
              1,
              JSON.stringify(logs.lines)
            )
            assert.lengthOf(logs.lines, 2, "one line when the outage starts, one when it ends")
          })
        ),
      30_000
    )
  })
})
