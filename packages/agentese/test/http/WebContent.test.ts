/**
 * Threat 48 over HTTP: page content that the HTML converter cannot handle is
 * the page's problem, not the tool's. It must not answer 500, nor open the
 * circuit breaker that every caller of `web.fetch` shares.
 */
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { invokeUrl, post, serve } from "./fixture.ts"

const nested = (depth: number) =>
  `<!doctype html><html><body>${"<div>".repeat(depth)}deep${"</div>".repeat(depth)}</body></html>`

/** A loopback site for the scope: `/nested` (2,000 nested divs, 22 KB) and `/ok`. */
const site = Effect.acquireRelease(
  Effect.promise(
    () =>
      new Promise<{ readonly server: Server; readonly origin: string }>((resolve) => {
        const server = createServer((req, res) => {
          res.writeHead(200, { "content-type": "text/html" })
          res.end(req.url === "/ok" ? "<h1>fine</h1>" : nested(2000))
        })
        server.listen(0, "127.0.0.1", () =>
          resolve({ server, origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` })
        )
      })
  ),
  ({ server }) => Effect.promise(() => new Promise<void>((ok) => server.close(() => ok())))
)

describe("Http: web.fetch content (threat 48)", () => {
  it.live("threat 48: five fetches of a 2,000-nested-div page do not open the shared breaker for the next caller", () =>
    Effect.gen(function* () {
      const { origin } = yield* site
      const { url } = yield* serve({ recipe: { allowHosts: [origin.replace("http://", "")] } })
      for (let i = 0; i < 5; i++) {
        const r = yield* post(invokeUrl(url, "world.tools.web.fetch"), { url: `${origin}/nested?${i}` })
        // Converted, or refused as content the converter cannot handle: never a 500, never a tool fault.
        assert.notStrictEqual(r.status, 500, JSON.stringify(r.body))
        if (r.status !== 200) {
          assert.strictEqual(r.body.error._tag, "NotConvertible", JSON.stringify(r.body))
          assert.strictEqual(r.body.kind, "invalid_input")
          assert.match(r.body.error.message, /raw: true/)
        } else {
          assert.include(r.body.result.content, "deep")
        }
      }
      const next = yield* post(invokeUrl(url, "world.tools.web.fetch"), { url: `${origin}/ok` })
      assert.strictEqual(next.status, 200, JSON.stringify(next.body))
      assert.strictEqual(next.body.result.content, "# fine")
    })
  )
})
