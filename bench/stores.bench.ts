/**
 * The trace store's write path, as `Traced` uses it: one `append` of one
 * record per traced call, then a `flush`. Measured in microseconds per record
 * (records per second in the note), for SQLite batched (the default) against
 * one INSERT per record, and against the in-memory store; PostgreSQL too when
 * `UGENT_PG_URL` is set. Each SQL run uses a fresh database.
 *
 * And what the stores cost on disk (threat 50): 10,000 reads of an 85 KB file
 * through the road (`Server.layer` on a SQLite workspace, traces and audit),
 * with whole payloads kept for ever (what the stores did before) against the
 * defaults (heads, sizes and hashes; 7 days, 200 MB); the machine's load
 * averages in the note, as `uptime` gives them.
 */
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs"
import { loadavg, tmpdir } from "node:os"
import { join } from "node:path"
import { PgClient } from "@effect/sql-pg"
import { Invoke, Server } from "@ugent/agentese"
import { type Stores, TraceStore } from "@ugent/wrappers"
import { Effect, type Layer, Redacted } from "effect"
import { type Bench, type Row, row } from "./Bench.ts"

const record = (i: number): TraceStore.TraceRecord => ({
  id: `t${i}`,
  rootId: `t${i - (i % 20)}`,
  ...(i % 20 === 0 ? {} : { parentId: `t${i - (i % 20)}` }),
  path: i % 3 === 0 ? "file.read" : "search.grep",
  input: { path: `src/file${i % 100}.ts`, limit: 200 },
  output: { lines: i % 500, truncated: false },
  status: "success",
  startedAt: 1_795_000_000_000 + i,
  durationMillis: (i % 37) / 3,
  alternatives: i % 5 === 0 ? ["file.head"] : [],
  observerId: "bench",
  sessionId: "s1"
})

/** Microseconds per record: `n` sequential appends of one record each, then a flush, all inside the store's life. */
const appendOneByOne = (layer: Layer.Layer<TraceStore.TraceStore, unknown>, n: number, concurrency = 1) =>
  Effect.runPromise(
    Effect.gen(function* () {
      const store = yield* TraceStore.TraceStore
      const start = process.hrtime.bigint()
      yield* Effect.forEach(
        Array.from({ length: concurrency }, (_, fiber) => fiber),
        (fiber) =>
          Effect.gen(function* () {
            for (let i = fiber; i < n; i += concurrency) yield* store.append([record(i)])
          }),
        { concurrency: "unbounded", discard: true }
      )
      yield* store.flush
      return Number(process.hrtime.bigint() - start) / 1000 / n
    }).pipe(Effect.provide(layer))
  )

const median = async (f: () => Promise<number>, samples = 3): Promise<number> => {
  await f()
  const xs: Array<number> = []
  for (let i = 0; i < samples; i++) xs.push(await f())
  xs.sort((a, b) => a - b)
  return xs[Math.floor(xs.length / 2)] as number
}

const sqlite = async (n: number, options: Stores.BatchOptions, concurrency = 1): Promise<number> => {
  const dir = mkdtempSync(join(tmpdir(), "ugent-bench-"))
  try {
    return await appendOneByOne(TraceStore.layerSqlite({ ...options, filename: join(dir, "ugent.db") }), n, concurrency)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

const postgres = async (url: string, n: number, options: Stores.BatchOptions): Promise<number> => {
  const schema = `ugent_bench_${process.pid}_${Math.random().toString(36).slice(2, 8)}`
  const admin = (f: (sql: PgClient.PgClient) => Effect.Effect<unknown, unknown>) =>
    Effect.runPromise(Effect.provide(PgClient.PgClient.use(f), PgClient.layer({ url: Redacted.make(url) })))
  await admin((sql) => sql`CREATE SCHEMA ${sql(schema)}`)
  try {
    return await appendOneByOne(TraceStore.layerPg({ ...options, url, startupParameters: { search_path: schema } }), n)
  } finally {
    await admin((sql) => sql`DROP SCHEMA ${sql(schema)} CASCADE`)
  }
}

/** Bytes under a directory. */
const sizeOf = (dir: string): number =>
  readdirSync(dir).reduce((total, name) => {
    const path = join(dir, name)
    const stat = statSync(path)
    return total + (stat.isDirectory() ? sizeOf(path) : stat.size)
  }, 0)

/** MB that `n` reads of an 85 KB file add to `.ugent/` through the road, with what traces keep. */
const readsOnDisk = async (n: number, traces: TraceStore.TraceOptions): Promise<number> => {
  const root = mkdtempSync(join(tmpdir(), "ugent-bench-disk-"))
  try {
    writeFileSync(join(root, "big.txt"), `${"x".repeat(84)}\n`.repeat(1000))
    await Effect.runPromise(
      Effect.gen(function* () {
        for (let i = 0; i < n; i++) {
          const outcome = yield* Invoke.invoke({ path: "world.tools.file.read", input: { path: "big.txt" } })
          if (!outcome.ok) throw new Error(`read ${i} failed: ${outcome.error.message}`)
        }
      }).pipe(Effect.provide(Server.layer({ root, stores: "sqlite", loop: false, traces })))
    )
    return sizeOf(join(root, ".ugent")) / 1024 / 1024
  } finally {
    rmSync(root, { recursive: true, force: true })
  }
}

const load = () =>
  `load average ${loadavg()
    .map((l) => l.toFixed(2))
    .join(", ")}`

const perSecond = (microsPerRecord: number) => `${Math.round(1e6 / microsPerRecord).toLocaleString("en-US")} records/s`
const oneByOne: Stores.BatchOptions = { batchSize: 1, lingerMillis: 0 }

const bench: Bench = {
  name: "stores",
  description: "TraceStore.append throughput (µs per record, one record per append, then flush)",
  run: async () => {
    const n = 20_000
    const rows: Array<Row> = []
    const batched = await median(() => sqlite(n, {}))
    const single = await median(() => sqlite(2_000, oneByOne))
    rows.push(
      row("SQLite: batched vs one INSERT per record", single, batched, "µs/record", {
        target: "≤ 0.2",
        note: `batched ${perSecond(batched)}; one per record ${perSecond(single)}`
      })
    )
    const memory = await median(() => appendOneByOne(TraceStore.layerMemory(), n))
    rows.push(
      row("SQLite batched vs in-memory store", memory, batched, "µs/record", {
        target: "≥ 10,000 records/s",
        note: `memory ${perSecond(memory)}; SQLite ${perSecond(batched)}`
      })
    )
    const concurrent = await median(() => sqlite(n, {}, 16))
    rows.push(
      row("SQLite batched: 16 concurrent appenders vs 1", batched, concurrent, "µs/record", {
        note: `16 fibers ${perSecond(concurrent)}`
      })
    )
    const before = load()
    const whole = await readsOnDisk(10_000, { payloads: "full", retention: false })
    const bounded = await readsOnDisk(10_000, {})
    rows.push(
      row("10,000 reads of an 85 KB file: .ugent/ on disk, whole payloads kept vs the defaults", whole, bounded, "MB", {
        target: "≤ 0.05",
        note: `heads of 1.5 KB with size and SHA-256, 7 days / 200 MB; ${before} before, ${load()} after`
      })
    )
    const url = process.env.UGENT_PG_URL
    if (url !== undefined) {
      const pgBatched = await median(() => postgres(url, n, {}))
      const pgSingle = await median(() => postgres(url, 1_000, oneByOne))
      rows.push(
        row("PostgreSQL: batched vs one INSERT per record", pgSingle, pgBatched, "µs/record", {
          note: `batched ${perSecond(pgBatched)}; one per record ${perSecond(pgSingle)}`
        })
      )
    }
    return rows
  }
}

export default bench
