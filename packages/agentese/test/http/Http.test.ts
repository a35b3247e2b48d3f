import { readFileSync } from "node:fs"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { get, invokeUrl, post, raw, serve } from "./fixture.ts"

describe("Http", () => {
  describe("GET /v1/paths", () => {
    it.live("lists the offered paths with their descriptions and the configured caller", () =>
      Effect.gen(function* () {
        const { url } = yield* serve()
        const r = yield* get(`${url}/v1/paths`)
        assert.strictEqual(r.status, 200)
        assert.deepStrictEqual(r.body.observer, { id: "local", trust: 0 })
        const read = r.body.paths.find((p: { path: string }) => p.path === "world.tools.file.read")
        assert.strictEqual(read.providerName, "world_tools_file_read")
        assert.strictEqual(read.requiredTrust, 0)
        assert.match(read.description, /Read a text file/)
        assert.isTrue(read.annotations.readOnly)
      })
    )

    it.live("does not list a path above the caller's level", () =>
      Effect.gen(function* () {
        const { url } = yield* serve({ trust: 0 })
        const paths = (yield* get(`${url}/v1/paths`)).body.paths.map((p: { path: string }) => p.path)
        assert.notInclude(paths, "world.tools.file.write")
        const l1 = yield* serve({ trust: 1 })
        const l1Paths = (yield* get(`${l1.url}/v1/paths`)).body.paths.map((p: { path: string }) => p.path)
        assert.include(l1Paths, "world.tools.file.write")
      })
    )
  })

  describe("GET /v1/paths/{path}", () => {
    it.live("describes a path with its input, output and failure schemas", () =>
      Effect.gen(function* () {
        const { url } = yield* serve()
        const r = yield* get(`${url}/v1/paths/world.tools.file.read`)
        assert.strictEqual(r.status, 200)
        assert.strictEqual(r.body.path, "world.tools.file.read")
        assert.strictEqual(r.body.input.type, "object")
        assert.include(r.body.input.required, "path")
        assert.isObject(r.body.output)
        assert.isObject(r.body.failure)
      })
    )

    it.live("accepts a provider-safe name", () =>
      Effect.gen(function* () {
        const { url } = yield* serve()
        const r = yield* get(`${url}/v1/paths/world_tools_file_read`)
        assert.strictEqual(r.status, 200)
        assert.strictEqual(r.body.path, "world.tools.file.read")
      })
    )

    it.live("is 404 for an unknown path, with the error as JSON", () =>
      Effect.gen(function* () {
        const { url } = yield* serve()
        const r = yield* get(`${url}/v1/paths/world.tools.file.raed`)
        assert.strictEqual(r.status, 404)
        assert.strictEqual(r.body.ok, false)
        assert.strictEqual(r.body.error._tag, "UnknownPath")
        assert.strictEqual(r.body.kind, "not_found")
      })
    )

    it.live("is 404 for a path hidden from the caller, like an unknown one", () =>
      Effect.gen(function* () {
        const { url } = yield* serve({ trust: 0 })
        const r = yield* get(`${url}/v1/paths/world.tools.file.write`)
        assert.strictEqual(r.status, 404)
        assert.strictEqual(r.body.error._tag, "UnknownPath")
      })
    )
  })

  describe("POST /v1/invoke/{path}", () => {
    it.live("is 200 with the result", () =>
      Effect.gen(function* () {
        const { url } = yield* serve()
        const r = yield* post(invokeUrl(url, "world.tools.file.read"), { path: "a.txt" })
        assert.strictEqual(r.status, 200)
        assert.strictEqual(r.body.ok, true)
        assert.strictEqual(r.body.result.content, "1\talpha\n2\tbeta")
        assert.strictEqual(r.body.path, "world.tools.file.read")
        assert.isString(r.body.callId)
      })
    )

    it.live("accepts a provider-safe name", () =>
      Effect.gen(function* () {
        const { url } = yield* serve()
        const r = yield* post(invokeUrl(url, "world_tools_file_read"), { path: "a.txt" })
        assert.strictEqual(r.status, 200)
        assert.strictEqual(r.body.path, "world.tools.file.read")
      })
    )

    it.live("runs a pipeline a >> b: a read, then an edit with the read's proof", () =>
      Effect.gen(function* () {
        const { url, root } = yield* serve({ trust: 1 })
        const r = yield* post(
          invokeUrl(url, "world.tools.file.read >> world.tools.file.edit --oldText=alpha --newText=ALPHA"),
          { path: "a.txt" }
        )
        assert.strictEqual(r.status, 200, JSON.stringify(r.body))
        assert.strictEqual(r.body.path, "world.tools.file.edit")
        assert.strictEqual(readFileSync(join(root, "a.txt"), "utf8"), "ALPHA\nbeta\n")
      })
    )

    it.live("treats an empty body as {}", () =>
      Effect.gen(function* () {
        const { url } = yield* serve()
        const r = yield* post(invokeUrl(url, "world.tools.file.list"), "")
        assert.strictEqual(r.status, 200, JSON.stringify(r.body))
        assert.strictEqual(r.body.ok, true)
      })
    )

    it.live("is 400 for input that does not fit the schema", () =>
      Effect.gen(function* () {
        const { url } = yield* serve()
        const r = yield* post(invokeUrl(url, "world.tools.file.read"), { path: 3 })
        assert.strictEqual(r.status, 400)
        assert.strictEqual(r.body.error._tag, "InvalidInput")
        assert.strictEqual(r.body.kind, "invalid_input")
      })
    )

    it.live("threat: a 100,000-deep JSON body gets no clear answer, and the next request is lost", () =>
      Effect.gen(function* () {
        const { url } = yield* serve({ mcp: true })
        const deep = (depth: number) => `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`
        for (const body of [`{"path":"a.txt","x":${deep(100_000)}}`, `${"[".repeat(100_000)}${"]".repeat(100_000)}`]) {
          const r = yield* post(invokeUrl(url, "world.tools.file.read"), body)
          assert.strictEqual(r.status, 400, JSON.stringify(r.body).slice(0, 300))
          assert.strictEqual(r.body.error._tag, "InvalidJson")
          assert.match(r.body.error.message, /nested deeper than \d+/)
          const next = yield* post(invokeUrl(url, "world.tools.file.read"), { path: "a.txt" })
          assert.strictEqual(next.status, 200)
        }
      })
    )

    it.live("threat: a 100,000-deep JSON message to /mcp gets no clear answer, and the next request is lost", () =>
      Effect.gen(function* () {
        const { url } = yield* serve({ mcp: true })
        const deep = (depth: number) => `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`
        const headers = { accept: "application/json, text/event-stream" }
        const initialize = (capabilities: string) =>
          `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":${capabilities},"clientInfo":{"name":"t","version":"0"}}}`
        const refused = yield* post(`${url}/mcp`, initialize(`{"x":${deep(100_000)}}`), headers)
        assert.strictEqual(refused.status, 400, JSON.stringify(refused.body).slice(0, 300))
        assert.strictEqual(refused.body.error.code, -32600)
        assert.match(refused.body.error.message, /nested deeper than \d+/)
        const served = yield* post(`${url}/mcp`, initialize("{}"), headers)
        assert.strictEqual(served.status, 200)
      })
    )

    it.live("is 400 for a body that is not JSON", () =>
      Effect.gen(function* () {
        const { url } = yield* serve()
        const r = yield* post(invokeUrl(url, "world.tools.file.read"), "{path: a.txt")
        assert.strictEqual(r.status, 400)
        assert.strictEqual(r.body.ok, false)
        assert.strictEqual(r.body.error._tag, "InvalidJson")
      })
    )

    it.live("is 404 for an unknown path", () =>
      Effect.gen(function* () {
        const { url } = yield* serve()
        const r = yield* post(invokeUrl(url, "world.tools.file.raed"), { path: "a.txt" })
        assert.strictEqual(r.status, 404)
        assert.strictEqual(r.body.error._tag, "UnknownPath")
        assert.match(r.body.error.message, /Did you mean world\.tools\.file\.read/)
      })
    )

    it.live("is 403 when the caller's level is too low (TrustDenied)", () =>
      Effect.gen(function* () {
        const { url } = yield* serve({ trust: 0 })
        const r = yield* post(invokeUrl(url, "world.tools.file.write"), { path: "c.txt", content: "x" })
        assert.strictEqual(r.status, 403)
        assert.strictEqual(r.body.error._tag, "TrustDenied")
        assert.strictEqual(r.body.kind, "denied")
      })
    )

    it.live("is 403 when the recipe denies the path (PolicyDenied)", () =>
      Effect.gen(function* () {
        const { url } = yield* serve({ recipe: { deny: ["world.tools.search.*"] } })
        const r = yield* post(invokeUrl(url, "world.tools.search.grep"), { pattern: "alpha" })
        assert.strictEqual(r.status, 403)
        assert.strictEqual(r.body.error._tag, "PolicyDenied")
      })
    )

    it.live("is 404 when the thing named does not exist (not_found)", () =>
      Effect.gen(function* () {
        const { url } = yield* serve()
        const r = yield* post(invokeUrl(url, "world.tools.file.read"), { path: "missing.txt" })
        assert.strictEqual(r.status, 404)
        assert.strictEqual(r.body.kind, "not_found")
        assert.match(r.body.error.message, /not found/i)
      })
    )

    it.live("is 409 when the caller's proof is stale or missing (conflict)", () =>
      Effect.gen(function* () {
        const { url } = yield* serve({ trust: 1 })
        const r = yield* post(invokeUrl(url, "world.tools.file.write"), { path: "a.txt", content: "x" })
        assert.strictEqual(r.status, 409)
        assert.strictEqual(r.body.kind, "conflict")
        assert.strictEqual(r.body.error._tag, "ProofRejected")
      })
    )

    it.live("is 429 with Retry-After when a recipe's rate limit is reached", () =>
      Effect.gen(function* () {
        const { url } = yield* serve({ recipe: { toolRateLimits: { "world.tools.file.read": { perMinute: 1 } } } })
        const first = yield* post(invokeUrl(url, "world.tools.file.read"), { path: "a.txt" })
        assert.strictEqual(first.status, 200)
        const second = yield* post(invokeUrl(url, "world.tools.file.read"), { path: "b.md" })
        assert.strictEqual(second.status, 429)
        assert.strictEqual(second.body.error._tag, "RateLimited")
        const retryAfter = Number(second.headers.get("retry-after"))
        assert.isTrue(retryAfter >= 1 && retryAfter <= 60, `Retry-After ${second.headers.get("retry-after")}`)
        assert.strictEqual(retryAfter, Math.ceil(second.body.error.retryAfterMillis / 1000))
      })
    )

    it.live("is 413 for a body over the limit", () =>
      Effect.gen(function* () {
        const { url } = yield* serve({ maxBodyBytes: 1024 })
        const r = yield* post(invokeUrl(url, "world.tools.file.read"), { path: "a.txt", pad: "x".repeat(2048) })
        assert.strictEqual(r.status, 413)
        assert.strictEqual(r.body.error._tag, "PayloadTooLarge")
      })
    )

    it.live("is 413 for a chunked body over the limit (no Content-Length to trust)", () =>
      Effect.gen(function* () {
        const { url } = yield* serve({ maxBodyBytes: 1024 })
        const r = yield* raw(invokeUrl(url, "world.tools.file.read"), {
          method: "POST",
          headers: { "content-type": "application/json", "transfer-encoding": "chunked" },
          chunks: ['{"path": "a.txt", "pad": "', "x".repeat(1000), "x".repeat(1000), '"}']
        })
        assert.strictEqual(r.status, 413)
      })
    )
  })

  describe("body limits on every route (issue 24, low)", () => {
    it.live("threat: a body over the limit to the answer route is read whole", () =>
      Effect.gen(function* () {
        const { url } = yield* serve({ maxBodyBytes: 1024, approverToken: "operator-secret" })
        const operator = { authorization: "Bearer operator-secret" }
        const r = yield* post(`${url}/v1/pending/q-1`, { answer: "x".repeat(4096) }, operator)
        assert.strictEqual(r.status, 413)
        const chunked = yield* raw(`${url}/v1/pending/q-1`, {
          method: "POST",
          headers: { ...operator, "content-type": "application/json", "transfer-encoding": "chunked" },
          chunks: ['{"answer": "', "x".repeat(1000), "x".repeat(1000), "x".repeat(1000), '"}']
        })
        assert.strictEqual(chunked.status, 413)
        // Under the limit, the route answers as usual.
        const small = yield* post(`${url}/v1/pending/q-1`, { answer: "approve" }, operator)
        assert.strictEqual(small.status, 404)
        assert.strictEqual(small.body.error._tag, "UnknownQuestion")
      })
    )
  })

  describe("GET /v1/events", () => {
    it.live("streams one event: / data: pair per event of a call, as JSON", () =>
      Effect.gen(function* () {
        const { url } = yield* serve()
        const events = yield* Effect.promise(async () => {
          const controller = new AbortController()
          const response = await fetch(`${url}/v1/events`, { signal: controller.signal })
          assert.strictEqual(response.headers.get("content-type"), "text/event-stream")
          const reader = response.body!.getReader()
          const decoder = new TextDecoder()
          let text = ""
          const until = async (done: () => boolean) => {
            while (!done()) {
              const { value, done: ended } = await reader.read()
              if (ended) break
              text += decoder.decode(value, { stream: true })
            }
          }
          await until(() => text.includes(": subscribed"))
          const call = await fetch(invokeUrl(url, "world.tools.file.read"), {
            method: "POST",
            body: JSON.stringify({ path: "a.txt" })
          })
          const { callId } = (await call.json()) as { callId: string }
          await until(() => text.includes("event: tool.completed"))
          controller.abort()
          const blocks = text.split("\n\n").filter((b) => b.startsWith("event:"))
          return blocks.map((b) => {
            const [eventLine, dataLine] = b.split("\n")
            return {
              event: eventLine!.slice("event: ".length),
              data: JSON.parse(dataLine!.slice("data: ".length)),
              callId
            }
          })
        })
        assert.deepStrictEqual(
          events.map((e) => e.event),
          ["tool.invoked", "tool.completed"]
        )
        for (const e of events) {
          assert.strictEqual(e.data._tag, e.event)
          assert.strictEqual(e.data.id, e.callId)
          assert.strictEqual(e.data.path, "world.tools.file.read")
          assert.strictEqual(e.data.observerId, "local")
        }
      })
    )
  })

  describe("GET /v1/openapi.json", () => {
    it.live("is a valid OpenAPI document with every route", () =>
      Effect.gen(function* () {
        const { url } = yield* serve()
        const r = yield* get(`${url}/v1/openapi.json`)
        assert.strictEqual(r.status, 200)
        assert.match(r.body.openapi, /^3\./)
        assert.deepStrictEqual(Object.keys(r.body.paths).sort(), [
          "/v1/events",
          "/v1/invoke/{path}",
          "/v1/paths",
          "/v1/paths/{path}",
          "/v1/pending",
          "/v1/pending/{id}",
          "/v1/stats"
        ])
        assert.isObject(r.body.paths["/v1/paths"].get)
        assert.isObject(r.body.paths["/v1/paths/{path}"].get)
        assert.isObject(r.body.paths["/v1/events"].get)
        const invoke = r.body.paths["/v1/invoke/{path}"].post
        assert.includeMembers(Object.keys(invoke.responses), ["200", "400", "401", "403", "404", "413", "422", "429"])
      })
    )
  })

  describe("routes", () => {
    it.live("an unknown route under /v1 is a JSON 404", () =>
      Effect.gen(function* () {
        const { url } = yield* serve()
        const r = yield* get(`${url}/v1/tools`)
        assert.strictEqual(r.status, 404)
        assert.strictEqual(r.body.error._tag, "RouteNotFound")
      })
    )
  })

  describe("guard", () => {
    it.live("refuses a foreign Host (DNS rebinding to the loopback server)", () =>
      Effect.gen(function* () {
        const { url } = yield* serve()
        const r = yield* raw(`${url}/v1/paths`, { headers: { host: "attacker.example:80" } })
        assert.strictEqual(r.status, 403)
        assert.strictEqual(r.body.error._tag, "HostDenied")
        const local = yield* raw(`${url}/v1/paths`, { headers: { host: `localhost:${new URL(url).port}` } })
        assert.strictEqual(local.status, 200)
      })
    )

    it.live("threat: a Host that only starts with a loopback literal ([::1]evil.com) is refused", () =>
      Effect.gen(function* () {
        const { url } = yield* serve()
        const port = new URL(url).port
        const foreign = [
          "[::1]evil.com",
          `[::1]evil.com:${port}`,
          `[::1]:${port}evil.com`,
          "[::1].evil.com",
          "[::1]@evil.com",
          "[::1",
          "[::1]]",
          `[::1]:${port}:${port}`,
          `localhost:${port}:${port}`,
          "localhost.evil.com",
          "localhost:port",
          "127.0.0.1.evil.com",
          "evil.com#localhost"
        ]
        const accepted: Array<string> = []
        for (const host of foreign) {
          const r = yield* raw(`${url}/v1/paths`, { headers: { host } })
          if (r.status !== 403 || r.body.error?._tag !== "HostDenied") accepted.push(`${host}: ${r.status}`)
        }
        assert.deepStrictEqual(accepted, [])
        for (const host of [
          "localhost",
          `localhost:${port}`,
          "LOCALHOST",
          `[::1]:${port}`,
          "[::1]",
          `127.0.0.1:${port}`
        ]) {
          assert.strictEqual((yield* raw(`${url}/v1/paths`, { headers: { host } })).status, 200, host)
        }
      })
    )

    it.live("refuses a browser Origin unless it is allowed", () =>
      Effect.gen(function* () {
        const { url } = yield* serve()
        const r = yield* post(
          invokeUrl(url, "world.tools.file.read"),
          { path: "a.txt" },
          { origin: "https://evil.example" }
        )
        assert.strictEqual(r.status, 403)
        assert.strictEqual(r.body.error._tag, "OriginDenied")
        const allowed = yield* serve({ allowedOrigins: ["http://localhost:5173"] })
        const ok = yield* get(`${allowed.url}/v1/paths`, { origin: "http://localhost:5173" })
        assert.strictEqual(ok.status, 200)
      })
    )

    it.live("with a token, refuses a request without it (401), on the MCP endpoint too", () =>
      Effect.gen(function* () {
        const { url } = yield* serve({ token: "s3cret-token", mcp: true })
        const none = yield* get(`${url}/v1/paths`)
        assert.strictEqual(none.status, 401)
        assert.strictEqual(none.body.error._tag, "Unauthorized")
        assert.strictEqual(none.headers.get("www-authenticate"), 'Bearer realm="ugent"')
        assert.strictEqual((yield* get(`${url}/v1/paths`, { authorization: "Bearer wrong" })).status, 401)
        const mcp = yield* post(`${url}/mcp`, { jsonrpc: "2.0", id: 1, method: "tools/list" })
        assert.strictEqual(mcp.status, 401)
        const ok = yield* get(`${url}/v1/paths`, { authorization: "Bearer s3cret-token" })
        assert.strictEqual(ok.status, 200)
        // The token admits; it does not name: the caller is still the configured one.
        assert.deepStrictEqual(ok.body.observer, { id: "local", trust: 0 })
      })
    )

    it.live("guards the MCP endpoint mounted on the same server too", () =>
      Effect.gen(function* () {
        const { url } = yield* serve({ mcp: true })
        const initialize = JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "initialize",
          params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "test", version: "0" } }
        })
        const headers = { "content-type": "application/json", accept: "application/json, text/event-stream" }
        const local = yield* raw(`${url}/mcp`, { method: "POST", headers, chunks: [initialize] })
        assert.strictEqual(local.status, 200)
        assert.strictEqual(local.body.result.serverInfo.name, "ugent")
        const foreign = yield* raw(`${url}/mcp`, {
          method: "POST",
          headers: { ...headers, host: "attacker.example" },
          chunks: [initialize]
        })
        assert.strictEqual(foreign.status, 403)
      })
    )
  })
})
