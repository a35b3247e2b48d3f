/**
 * A room of `ugent serve` instances: what sharing the session state costs
 * and what several instances serve on one machine. Needs Redis
 * (UGENT_REDIS_URL); with UGENT_PG_URL the rooms keep their audit and traces
 * in PostgreSQL, as a deployed room does, else in memory.
 *
 * Rows:
 * - one session-state operation (remember a proof, then look it up) in
 *   PostgreSQL (baseline) and Redis (ours): why the room's state is in Redis;
 * - one instance, MCP `tools/call` of `world.tools.file.read` in one
 *   streamable-HTTP session (10 connections, 10 s, autocannon in a child):
 *   session state in memory (baseline) against a room's in Redis (ours);
 *   each call then asks Redis for the session and remembers the read's proof;
 * - the room of 1 instance (baseline) against 3 behind a round-robin
 *   balancer (ours), the same load.
 *
 * Every instance runs throughout; after a 3 s warm-up of each case, the
 * cases take turns for 3 rounds of 5 s and the median round of each is
 * reported, so that a change in the load of a shared machine hits them alike.
 *
 * Every instance runs the `local` profile with the loop detector off, so no
 * limit or loop refusal enters the figures. The machine's load (`uptime`)
 * is printed beside the rows.
 */
import { execFile, spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { Agent, createServer, request as httpRequest } from "node:http"
import { cpus, loadavg, tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { PgClient } from "@effect/sql-pg"
import { Effect, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { createClient } from "redis"
import { type Bench, row } from "./Bench.ts"

const connections = 10
const seconds = 5
const rounds = 3
const bin = fileURLToPath(new URL("../packages/agentese/bin/ugent.js", import.meta.url))
const redisUrl = process.env.UGENT_REDIS_URL
const pgUrl = process.env.UGENT_PG_URL

interface Load {
  readonly requests: number
  readonly rps: number
  readonly errors: number
  readonly non2xx: number
  readonly p50: number
}

/** The load generator, run as a child: autocannon with the session's headers, every response time recorded. */
const driver = `
import autocannon from "autocannon"
const [url, body, headers, duration, connections] = process.argv.slice(1)
const times = []
const instance = autocannon({
  url, method: "POST", headers: JSON.parse(headers), body, idReplacement: true,
  connections: Number(connections), duration: Number(duration)
}, (error, result) => {
  if (error) { console.error(error); process.exit(1) }
  times.sort((a, b) => a - b)
  console.log(JSON.stringify({
    requests: result.requests.total, rps: result.requests.total / result.duration,
    errors: result.errors + result.timeouts, non2xx: result.non2xx, p50: times[Math.floor(times.length / 2)] ?? 0
  }))
})
instance.on("response", (client, status, bytes, ms) => times.push(ms))
`

/** Starts `ugent serve`; resolves with its URL and a stop function. */
const serve = (root: string, args: ReadonlyArray<string>) =>
  new Promise<{ readonly url: string; readonly stop: () => void }>((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ["--conditions=@ugent/source", bin, "serve", "--port", "0", "--profile", "local", "--loop", "off", ...args],
      { cwd: root, env: { ...process.env, NO_COLOR: "1" } }
    )
    let stderr = ""
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk
      const m = /serving (http:\/\/\S+) /.exec(stderr)
      if (m !== null) resolve({ url: m[1]!, stop: () => child.kill("SIGTERM") })
    })
    child.on("exit", (code) => reject(new Error(`ugent serve exited with ${code}: ${stderr}`)))
  })

/** A round-robin balancer that pipes each request to the next instance (keep-alive connections). */
const balancer = (urls: ReadonlyArray<string>) =>
  new Promise<{ readonly url: string; readonly close: () => void }>((resolve) => {
    const agent = new Agent({ keepAlive: true, maxSockets: 64 })
    const targets = urls.map((u) => new URL(u))
    let next = 0
    const server = createServer((req, res) => {
      const target = targets[next++ % targets.length]!
      const upstream = httpRequest(
        { host: target.hostname, port: target.port, path: req.url, method: req.method, headers: req.headers, agent },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers)
          answer.pipe(res)
        }
      )
      upstream.on("error", () => res.writeHead(502).end())
      req.pipe(upstream)
    })
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      resolve({
        url: `http://127.0.0.1:${port}`,
        close: () => {
          server.close()
          agent.destroy()
        }
      })
    })
  })

const mcpHeaders = { "content-type": "application/json", accept: "application/json, text/event-stream" }

/** The run of median throughput. */
const median = (loads: ReadonlyArray<Load>): Load =>
  [...loads].sort((a, b) => a.rps - b.rps)[Math.floor(loads.length / 2)]!

/** Opens an MCP session at `url` and drives it for `duration` seconds: calls per second of file.read. */
const session = async (url: string, duration: number): Promise<Load> => {
  const init = await fetch(`${url}/mcp`, {
    method: "POST",
    headers: mcpHeaders,
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "bench", version: "0" } }
    })
  })
  const session = init.headers.get("mcp-session-id")
  if (init.status !== 200 || session === null) throw new Error(`initialize failed: ${await init.text()}`)
  const headers = {
    "content-type": "application/json",
    accept: "application/json",
    "mcp-session-id": session,
    "mcp-protocol-version": "2025-11-25"
  }
  const body = JSON.stringify({
    jsonrpc: "2.0",
    id: "[<id>]",
    method: "tools/call",
    params: { name: "world_tools_file_read", arguments: { path: "a.txt" } }
  })
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [
      "--input-type=module",
      "-e",
      driver,
      `${url}/mcp`,
      body,
      JSON.stringify(headers),
      String(duration),
      String(connections)
    ],
    { cwd: fileURLToPath(new URL("..", import.meta.url)), maxBuffer: 1 << 20 }
  )
  const load = JSON.parse(stdout) as Load
  if (load.errors > 0 || load.non2xx > 0) {
    throw new Error(`${load.errors} errors and ${load.non2xx} non-2xx answers in ${load.requests} requests`)
  }
  return load
}

/** Milliseconds per session-state operation (remember a proof, look it up), median of 3 runs of 2,000 each. */
const storeOps = async (): Promise<{ readonly redis: number; readonly pg: number | undefined }> => {
  const n = 2000
  const median = (xs: Array<number>) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
  const client = createClient({ url: redisUrl! })
  await client.connect()
  const key = `ugent:bench:${randomBytes(4).toString("hex")}`
  const redisRuns: Array<number> = []
  for (let run = 0; run < 3; run++) {
    const start = performance.now()
    for (let i = 0; i < n; i++) {
      await client.sendCommand(["HSET", key, `f${i % 50}`, `token${i}`])
      await client.sendCommand(["HGET", key, `f${i % 50}`])
    }
    redisRuns.push((performance.now() - start) / (2 * n))
  }
  await client.sendCommand(["DEL", key])
  await client.quit()
  if (pgUrl === undefined) return { redis: median(redisRuns), pg: undefined }
  const table = `ugent_bench_${randomBytes(4).toString("hex")}`
  const pgRuns = await Effect.runPromise(
    Effect.scoped(
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        yield* sql`CREATE TABLE ${sql(table)} (s TEXT, p TEXT, t TEXT, PRIMARY KEY (s, p))`
        const runs: Array<number> = []
        for (let run = 0; run < 3; run++) {
          const start = performance.now()
          for (let i = 0; i < n; i++) {
            yield* sql`INSERT INTO ${sql(table)} VALUES (${"s"}, ${`f${i % 50}`}, ${`token${i}`})
              ON CONFLICT (s, p) DO UPDATE SET t = excluded.t`
            yield* sql`SELECT t FROM ${sql(table)} WHERE s = ${"s"} AND p = ${`f${i % 50}`}`
          }
          runs.push((performance.now() - start) / (2 * n))
        }
        yield* sql`DROP TABLE ${sql(table)}`
        return runs
      }).pipe(Effect.provide(PgClient.layer({ url: Redacted.make(pgUrl) })))
    )
  )
  return { redis: median(redisRuns), pg: median(pgRuns) }
}

const load1 = () => loadavg()[0]!.toFixed(2)

export default {
  name: "room",
  description: `a room of ugent serve: MCP tools/call file.read in one session, ${connections} connections, median of ${rounds} rounds of ${seconds} s on loopback; session state in memory vs Redis, 1 vs 3 instances`,
  run: async () => {
    if (redisUrl === undefined) throw new Error("the room bench needs Redis: set UGENT_REDIS_URL (see .ci/services.sh)")
    const root = mkdtempSync(join(tmpdir(), "ugent-room-bench-"))
    writeFileSync(join(root, "a.txt"), "hello room\n")
    const stores = pgUrl === undefined ? ["--stores", "memory"] : ["--stores", pgUrl]
    const room = `bench-${randomBytes(4).toString("hex")}`
    const roomArgs = [...stores, "--redis", redisUrl, "--room", room]
    const stops: Array<() => void> = []
    try {
      const ops = await storeOps()
      const loadBefore = load1()

      // Every instance runs throughout, and the three cases take turns, so that a change in the load of a
      // shared machine hits them alike; every run goes through a balancer, so the cases differ only in what they compare.
      const [alone, ...instances] = await Promise.all([
        serve(root, [...stores]),
        ...[0, 1, 2].map((i) => serve(root, [...roomArgs, "--instance", `bench-${i}`]))
      ])
      for (const i of [alone!, ...instances]) stops.push(i.stop)
      const lbs = [
        await balancer([alone!.url]),
        await balancer([instances[0]!.url]),
        await balancer(instances.map((i) => i.url))
      ]
      const runs: Array<Array<Load>> = [[], [], []]
      for (const lb of lbs) await session(lb.url, 3)
      for (let round = 0; round < rounds; round++) {
        for (const [i, lb] of lbs.entries()) runs[i]!.push(await session(lb.url, seconds))
      }
      for (const lb of lbs) lb.close()
      const [memory, shared, room3] = runs.map(median) as [Load, Load, Load]
      const where = pgUrl === undefined ? "memory stores" : "audit and traces in PostgreSQL"
      return [
        ...(ops.pg === undefined
          ? []
          : [
              row("session-state op: PostgreSQL vs Redis", ops.pg, ops.redis, "ms/op", {
                note: "an upsert or a select against HSET or HGET, one client, loopback"
              })
            ]),
        row("1 instance: session state in memory vs a room's in Redis", memory.rps, shared.rps, "calls/s", {
          note: `${where}; server time per call ${(1000 / memory.rps).toFixed(2)} → ${(1000 / shared.rps).toFixed(2)} ms; p50 ${memory.p50.toFixed(1)} → ${shared.p50.toFixed(1)} ms`
        }),
        row("room: 1 instance vs 3 behind a round-robin balancer", shared.rps, room3.rps, "calls/s", {
          note: `${where}; p50 ${shared.p50.toFixed(1)} → ${room3.p50.toFixed(1)} ms; load (1 min) ${loadBefore} before, ${load1()} after, on ${cpus().length} cores`
        })
      ]
    } finally {
      for (const stop of stops) stop()
      rmSync(root, { recursive: true, force: true })
    }
  }
} satisfies Bench
