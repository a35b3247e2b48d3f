/**
 * A server starting up: every request sent while it starts is either refused
 * by the operating system (nothing listens yet) or answered; none is taken
 * and left without an answer.
 */
import { createServer, request } from "node:http"
import { assert, describe, it } from "@effect/vitest"
import { Http, Mcp } from "@ugent/agentese"
import { Effect, Layer } from "effect"
import { workspace } from "./fixture.ts"

const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const probe = createServer()
    probe.on("error", reject)
    probe.listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as { port: number }
      probe.close(() => resolve(port))
    })
  })

/** One GET: its status, the connection error's code, or "no answer" after 10 s. */
const attempt = (port: number) =>
  new Promise<string>((resolve) => {
    const req = request({ host: "127.0.0.1", port, path: "/v1/paths", timeout: 10_000 }, (res) => {
      res.resume()
      res.on("end", () => resolve(String(res.statusCode)))
    })
    req.on("timeout", () => {
      req.destroy()
      resolve("no answer")
    })
    req.on("error", (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message))
    req.end()
  })

describe("Http start-up", () => {
  for (const stores of ["sqlite", "memory"] as const) {
    it.live(
      `threat: requests sent while the server starts are taken and never answered (${stores} stores)`,
      () =>
        Effect.gen(function* () {
          const root = yield* workspace
          const port = yield* Effect.promise(freePort)
          let started = false
          const sent: Array<Promise<string>> = []
          // A tight loop of requests from before the server listens until it has started.
          const loop = (async () => {
            while (!started) {
              sent.push(attempt(port))
              await new Promise((resolve) => setImmediate(resolve))
            }
          })()
          yield* Layer.build(Http.serve({ root, port, stores }, Mcp.layerHttp({ path: "/mcp" }))).pipe(
            Effect.ensuring(Effect.sync(() => (started = true)))
          )
          yield* Effect.promise(() => loop)
          const outcomes = yield* Effect.promise(() => Promise.all(sent))
          // Refused by the OS before it listens, or answered (200, or 503 if it was not ready): nothing else.
          const other = outcomes.filter((o) => o !== "ECONNREFUSED" && o !== "200" && o !== "503")
          assert.deepStrictEqual(other, [], `of ${outcomes.length} requests`)
          // At least one request went out while it started (a fast start leaves room for only a few).
          assert.isAbove(outcomes.length, 0)
          assert.strictEqual(yield* Effect.promise(() => attempt(port)), "200")
        }),
      60_000
    )
  }
})
