/**
 * `POST /v1/invoke/world.tools.file.read` under a bounded local load: 10
 * connections for 10 s, loopback only, driven by autocannon in a child
 * process (so the load generator does not share the server's event loop).
 * The baseline, in the same run and the same way: a bare `node:http` server
 * that reads the request body and answers the same JSON (a real outcome of
 * the same call). Rows: throughput and latency percentiles (p50, p95, p99,
 * from every response's time). Any error or non-2xx answer fails the run.
 *
 * The server is the API of `Http.layer` over the road of the invoke bench:
 * memory stores, and the real in-memory rate limiter with every limit
 * multiplied by 10^6, since the design's global limit (100 calls a minute)
 * would refuse the load and a recipe cannot raise it. Every request is the
 * same read (file.read refuses a key it does not take), and the bench road's
 * loop detector never refuses a repeat.
 *
 * Two more rows bound what the target asks: the road's own rate in process
 * (10 fibers, no HTTP) against the bare server, and the same API over an
 * `Invoker` that answers at once (the HTTP layer alone) against the bare
 * server.
 */
import { execFile } from "node:child_process"
import { rmSync } from "node:fs"
import { createServer, type Server } from "node:http"
import { promisify } from "node:util"
import { NodeHttpServer } from "@effect/platform-node"
import { Http, Invoke } from "@ugent/agentese"
import { Context, Effect, Exit, Layer, Scope } from "effect"
import { HttpRouter, HttpServer } from "effect/http"
import { type Bench, row } from "./Bench.ts"
import { benchRoad, benchWorkspace } from "./invoke.bench.ts"

const connections = 10
const seconds = 10

interface Load {
  readonly requests: number
  readonly rps: number
  readonly errors: number
  readonly non2xx: number
  readonly p50: number
  readonly p95: number
  readonly p99: number
}

/** The load generator, run as a child: autocannon, every response time recorded for exact percentiles. */
const driver = `
import autocannon from "autocannon"
const [url, body, duration, connections] = process.argv.slice(1)
const times = []
const instance = autocannon({
  url, method: "POST", headers: { "content-type": "application/json" }, body, idReplacement: true,
  connections: Number(connections), duration: Number(duration)
}, (error, result) => {
  if (error) { console.error(error); process.exit(1) }
  times.sort((a, b) => a - b)
  const q = (p) => times[Math.min(times.length - 1, Math.floor(p * times.length))] ?? 0
  console.log(JSON.stringify({
    requests: result.requests.total, rps: result.requests.total / result.duration,
    errors: result.errors + result.timeouts, non2xx: result.non2xx, p50: q(0.5), p95: q(0.95), p99: q(0.99)
  }))
})
instance.on("response", (client, status, bytes, ms) => times.push(ms))
`

const load = async (url: string): Promise<Load> => {
  const body = JSON.stringify({ path: "a.txt" })
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ["--input-type=module", "-e", driver, url, body, String(seconds), String(connections)],
    { cwd: new URL("..", import.meta.url).pathname, maxBuffer: 1 << 20 }
  )
  return JSON.parse(stdout) as Load
}

/** A bare node:http server that reads the body and answers `json`: what any JSON API costs at least. */
const bare = (json: string): Promise<{ readonly url: string; readonly server: Server }> =>
  new Promise((resolve) => {
    const server = createServer((req, res) => {
      req.on("data", () => {})
      req.on("end", () => {
        res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(json) })
        res.end(json)
      })
    })
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      resolve({ url: `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`, server })
    })
  })

/** Calls per second of the road itself: `connections` fibers invoking in a loop for `seconds`. */
const concurrentInvokes = Effect.gen(function* () {
  let done = 0
  const worker = Effect.gen(function* () {
    while (true) {
      const o = yield* Invoke.invoke({ path: "world.tools.file.read", input: { path: "a.txt" } })
      if (!o.ok) return yield* Effect.die(new Error(`a call was refused: ${JSON.stringify(o.error)}`))
      done++
    }
  })
  const start = performance.now()
  yield* Effect.forEach(
    Array.from({ length: connections }, () => worker),
    (w) => w,
    { concurrency: "unbounded" }
  ).pipe(Effect.timeoutOption(`${seconds} seconds`))
  return (done * 1000) / (performance.now() - start)
})

/** Our API served over `road`, on a free loopback port: its invoke URL. */
const serveApi = async (road: ReturnType<typeof benchRoad>, scope: Scope.Scope) => {
  const app = HttpRouter.serve(Http.layer(), { disableListenLog: true, disableLogger: true }).pipe(
    Layer.provide(road),
    Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" }))
  )
  const context = await Effect.runPromise(Layer.buildWithScope(app, scope))
  return `${HttpServer.formatAddress(Context.get(context, HttpServer.HttpServer).address)}/v1/invoke/world.tools.file.read`
}

/** The bench road with an `Invoker` whose `invoke` answers `outcome` at once: what the HTTP layer costs alone. */
const instantRoad = (root: string, outcome: Invoke.Outcome) =>
  Layer.effect(
    Invoke.Invoker,
    Effect.map(Effect.service(Invoke.Invoker), (road) => ({ ...road, invoke: () => Effect.succeed(outcome) }))
  ).pipe(Layer.provideMerge(benchRoad(root)))

export default {
  name: "http",
  description: `POST /v1/invoke (file.read of a 12 B file), ${connections} connections for ${seconds} s on loopback, vs a bare node:http server answering the same JSON`,
  run: async () => {
    const root = benchWorkspace()
    const scope = Effect.runSync(Scope.make())
    try {
      const ours = await serveApi(benchRoad(root), scope)
      // The baseline answers what ours answers: a real outcome of the same call.
      const sample = await fetch(ours, { method: "POST", body: JSON.stringify({ path: "a.txt" }) })
      const json = await sample.text()
      if (sample.status !== 200) throw new Error(`the sample call failed: ${json}`)
      const baseline = await bare(json)
      const instant = await serveApi(instantRoad(root, JSON.parse(json) as Invoke.Outcome), scope)
      try {
        const base = await load(baseline.url)
        const road = await load(ours)
        const layerAlone = await load(instant)
        for (const [name, l] of [
          ["baseline", base],
          ["ours", road],
          ["the HTTP layer alone", layerAlone]
        ] as const) {
          if (l.errors > 0 || l.non2xx > 0) {
            throw new Error(`${name}: ${l.errors} errors and ${l.non2xx} non-2xx answers in ${l.requests} requests`)
          }
        }
        const inProcess = await Effect.runPromise(Effect.scoped(Effect.provide(concurrentInvokes, benchRoad(root))))
        const note = `${road.requests} requests, 0 errors (baseline ${base.requests})`
        return [
          row("throughput (higher is better)", base.rps, road.rps, "req/s", { note }),
          row("throughput: the road in process vs over HTTP", inProcess, road.rps, "calls/s", {
            note: `${connections} concurrent Invoker.invoke fibers for ${seconds} s: what HTTP costs on top of the road`
          }),
          row("throughput: the road in process (no HTTP) vs bare node:http", base.rps, inProcess, "calls/s", {
            note: "the road's own ceiling: even an HTTP layer that cost nothing could not serve more"
          }),
          row("throughput: the HTTP layer alone vs bare node:http", base.rps, layerAlone.rps, "req/s", {
            note: `the same API over an Invoker that answers the sample outcome at once (${layerAlone.requests} requests)`
          }),
          row("latency p50", base.p50, road.p50, "ms"),
          row("latency p95", base.p95, road.p95, "ms"),
          row("latency p99", base.p99, road.p99, "ms")
        ]
      } finally {
        baseline.server.close()
      }
    } finally {
      await Effect.runPromise(Scope.close(scope, Exit.void))
      rmSync(root, { recursive: true, force: true })
    }
  }
} satisfies Bench
