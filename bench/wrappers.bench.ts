/**
 * The cost of the wrappers of `@ugent/wrappers`: the overhead per call of
 * each wrapper on a trivial tool against the bare tool (calls run in a loop
 * inside one Effect, so the runtime's start-up is not counted); a Cached hit
 * against a call of a 1 ms tool; and Traced with the SQLite TraceStore, in
 * traced calls per second, checking that every trace is on disk after the
 * store's scope closes.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Tool, Trust } from "@ugent/core"
import {
  Audited,
  AuditStore,
  Cached,
  CircuitBreaker,
  MemoryStore,
  RateLimited,
  Retry,
  Sandboxed,
  Summarized,
  Timeout,
  Traced,
  TraceStore
} from "@ugent/wrappers"
import { Effect, Layer, Schema } from "effect"
import { type Bench, row, wallMs } from "./Bench.ts"

const Input = Schema.Struct({ path: Schema.String, n: Schema.Number })
const trivial = Tool.make({
  name: "bench.trivial",
  description: "Returns its input's number.",
  input: Input,
  output: Schema.Number,
  run: ({ n }) => Effect.succeed(n)
})
const input = { path: "src/a.ts", n: 1 }

type AnyTool = Tool.Tool<typeof Input.Type, unknown, unknown, unknown>

/** Nanoseconds per call of `tool`, median of 7 batches of `n` calls, each batch one Effect. */
const nsPerCall = async (tool: AnyTool, layer: Layer.Layer<never, unknown, never>, n: number): Promise<number> => {
  const program = Effect.gen(function* () {
    for (let i = 0; i < n; i++) yield* tool.run(input)
  }) as Effect.Effect<void, unknown, never>
  const runtime = Effect.provide(program, layer)
  const ms = await wallMs(() => Effect.runPromise(runtime), 7)
  return (ms * 1e6) / n
}

const unlimited = { global: false, observer: false, tool: [{ limit: 1e12, window: "1 minute" }] } as const

export default {
  name: "wrappers",
  description: "Overhead of each wrapper per call; a Cached hit against a 1 ms tool; Traced + SQLite throughput",
  run: async () => {
    const rows = []
    // Memory stores large enough never to evict during the run: this measures the wrappers, not eviction.
    const env = Layer.mergeAll(
      Trust.grant(0),
      TraceStore.layerMemory({ capacity: 1_000_000 }),
      AuditStore.layerMemory({ capacity: 1_000_000 }),
      MemoryStore.layerMemory({ capacity: 1_000_000 }),
      CircuitBreaker.layerMemory(),
      RateLimited.layerMemory
    )
    const n = 20_000
    const bare = await nsPerCall(trivial, env, n)
    // Budgets of overhead per call, in µs: what the wrapper adds to the bare call.
    const wrapped: ReadonlyArray<readonly [string, AnyTool, number]> = [
      ["Traced (memory store)", Traced(trivial), 25],
      ["Cached (hit)", Cached(trivial), 10],
      ["Retry", Retry(trivial), 3],
      ["Timeout", Timeout(trivial, "1 minute"), 5],
      ["CircuitBreaker (memory store)", CircuitBreaker(trivial), 25],
      ["RateLimited (memory store, 1 limit)", RateLimited(trivial, unlimited), 10],
      ["Sandboxed (no command)", Sandboxed(trivial), 15],
      ["Audited (memory store)", Audited(trivial), 30],
      // Summarized changes the output type; the loop only discards results, so the cast is harmless here.
      ["Summarized (memory store)", Summarized(trivial) as unknown as AnyTool, 30]
    ]
    for (const [name, tool, budget] of wrapped) {
      const ours = await nsPerCall(tool, env, n)
      rows.push(
        row(`${name}: per call`, bare, ours, "ns/call", {
          target: `overhead ≤ ${budget} µs`,
          note: `overhead ${((ours - bare) / 1000).toFixed(1)} µs/call`
        })
      )
    }

    // A Cached hit against the call it saves: a tool that takes 1 ms.
    const slow = Tool.make({
      name: "bench.slow",
      description: "Takes 1 ms.",
      input: Input,
      output: Schema.Number,
      run: ({ n }) => Effect.as(Effect.sleep("1 millis"), n)
    })
    const miss = await nsPerCall(slow, env, 300)
    const hit = await nsPerCall(Cached(slow), env, 20_000)
    rows.push(row("Cached hit vs a 1 ms tool", miss, hit, "ns/call", { target: "≤ 0.01 (100× faster)" }))

    // Traced with the SQLite store: traced calls per second, and every trace on disk after shutdown.
    const dir = mkdtempSync(join(tmpdir(), "ugent-bench-traced-"))
    try {
      const calls = 20_000
      const traced = Traced(trivial)
      const batch = Effect.gen(function* () {
        for (let i = 0; i < calls; i++) yield* traced.run(input)
      })
      const throughput = async (layer: Layer.Layer<TraceStore.TraceStore, unknown>) => {
        const start = process.hrtime.bigint()
        // The layer's scope closes when the program ends: the store flushes what is pending then.
        await Effect.runPromise(
          batch.pipe(Effect.provide(Layer.merge(layer, Trust.grant(0)))) as Effect.Effect<void, unknown>
        )
        return calls / (Number(process.hrtime.bigint() - start) / 1e9)
      }
      const memoryRate = await throughput(TraceStore.layerMemory({ capacity: calls }))
      const filename = join(dir, "traces.db")
      await throughput(TraceStore.layerSqlite({ filename })) // warm-up, and the schema is created
      const sqliteRate = await throughput(TraceStore.layerSqlite({ filename }))
      const stored = await Effect.runPromise(
        Effect.flatMap(TraceStore.TraceStore, (s) => s.recent({ limit: 3 * calls })).pipe(
          Effect.provide(TraceStore.layerSqlite({ filename }))
        )
      )
      rows.push(
        row(
          "Traced + SQLite TraceStore: traced calls per second (vs memory store)",
          memoryRate,
          sqliteRate,
          "calls/s",
          {
            target: "ours ≥ 10,000 calls/s",
            note: `${stored.length} of ${2 * calls} traces on disk after shutdown`
          }
        )
      )
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
    return rows
  }
} satisfies Bench
