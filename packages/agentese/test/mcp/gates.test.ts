import { existsSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Events, Invoke, Path, type Recipe, Server } from "@ugent/agentese"
import type { Trust } from "@ugent/core"
import { Effect, Fiber, Stream } from "effect"
import { failureOf, rejection, resultOf, workspace } from "./fixtures/connect.ts"
import { serve } from "./fixtures/http.ts"
import { memoryClient } from "./fixtures/memory.ts"

// Generous caller limits, so that only the gates under test refuse calls.
const roomy = { rateLimits: { perMinute: 600 } }

/** The events published while `action` runs, up to the first that ends a call. */
const eventsDuring = (server: Awaited<ReturnType<typeof serve>>, action: () => Promise<unknown>) =>
  server.runtime.runPromise(
    Effect.scoped(
      Effect.gen(function* () {
        const events = yield* Events.Events
        const stream = yield* events.subscribe
        const fiber = yield* Effect.forkChild(
          Stream.runCollect(Stream.takeUntil(stream, (e) => e._tag !== "tool.invoked"))
        )
        yield* Effect.promise(action)
        return yield* Fiber.join(fiber)
      })
    )
  )

describe("MCP gates", () => {
  describe("offer and permission (threat 28)", () => {
    const ws = workspace({ "a.txt": "a\n" })
    afterAll(() => ws.remove())

    const recipes: ReadonlyArray<Recipe.Recipe> = [
      {},
      { deny: ["world.tools.file.*"] },
      { allow: ["world.tools.search.*", "world.tools.file.read"] },
      { minTrust: { "world.tools.file.read": 2 } },
      { deny: ["world.tools.file.write"], minTrust: { "world.tools.file.edit": 3 } }
    ]
    const levels: ReadonlyArray<Trust.TrustLevel> = [0, 1, 2, 3]

    for (const recipe of recipes) {
      for (const trust of levels) {
        it.effect(
          `lists exactly Invoker.list and refuses every other path, at L${trust} under ${JSON.stringify(recipe)}`,
          () =>
            Effect.gen(function* () {
              const offered = (yield* Effect.flatMap(Invoke.Invoker, (road) => road.list)).map((o) => o.path)
              const registered = (yield* Invoke.Invoker).registry.entries.map((e) => e.path)
              const client = yield* memoryClient()
              const listed = (yield* client.listTools()).tools.map((t) => t.name)
              assert.deepStrictEqual(listed, offered.map(Path.toProviderName))
              for (const path of registered.filter((p) => !offered.includes(p))) {
                for (const name of [Path.toProviderName(path), path]) {
                  const error = yield* Effect.flip(client.callTool({ name, arguments: { path: "a.txt" } }))
                  assert.strictEqual(error.code, -32602, name)
                }
              }
            }).pipe(Effect.scoped, Effect.provide(Server.layer({ root: ws.root, trust, recipe, stores: "memory" })))
        )
      }
    }
  })

  describe("approval (threats 25, 27)", () => {
    const ws = workspace({ "notes.txt": "n\n" })
    const asked: Array<Trust.ApprovalRequest> = []
    let answer = false
    let server: Awaited<ReturnType<typeof serve>>

    beforeAll(async () => {
      server = await serve({
        root: ws.root,
        trust: 2,
        observerId: "l2-agent",
        stores: "memory",
        recipe: roomy,
        writable: ["notes/**"],
        approver: (request) =>
          Effect.sync(() => {
            asked.push(request)
            return answer
          })
      })
    })
    afterAll(async () => {
      await server?.dispose()
      ws.remove()
    })

    it("asks the approver for an L2 caller's write outside the writable globs, and a refusal is ApprovalDenied", async () => {
      const client = await server.client()
      answer = false
      asked.length = 0
      const result = await client.callTool({
        name: "world_tools_file_write",
        arguments: { path: "out.txt", content: "x" }
      })
      const failure = failureOf(result)
      assert.strictEqual(failure._tag, "ApprovalDenied")
      assert.strictEqual(result._meta?.["ugent/kind"], "denied")
      assert.strictEqual(asked.length, 1)
      assert.strictEqual(asked[0]?.observer.id, "l2-agent")
      assert.strictEqual(asked[0]?.reason, "escalation")
      assert.isFalse(existsSync(join(ws.root, "out.txt")))
      await client.close()
    })

    it("runs the write once the approver allows it", async () => {
      const client = await server.client()
      answer = true
      asked.length = 0
      resultOf(await client.callTool({ name: "world_tools_file_write", arguments: { path: "ok.txt", content: "ok" } }))
      assert.strictEqual(asked.length, 1)
      assert.strictEqual(readFileSync(join(ws.root, "ok.txt"), "utf8"), "ok")
      await client.close()
    })

    it("keeps the session working after a refusal (threat 25)", async () => {
      const client = await server.client()
      answer = false
      failureOf(await client.callTool({ name: "world_tools_file_write", arguments: { path: "no.txt", content: "x" } }))
      await rejection(client.callTool({ name: "world_tools_file_nope", arguments: {} }))
      const read = resultOf(await client.callTool({ name: "world_tools_file_read", arguments: { path: "notes.txt" } }))
      assert.strictEqual(read.content, "1\tn")
      await client.close()
    })
  })

  describe("the caller comes from the server, not the request (threats 26, 29)", () => {
    const ws = workspace({ "a.txt": "a\n", "b.txt": "b\n" })
    const claims = {
      trust: 3,
      observer: { id: "root", trust: 3 },
      observerId: "root",
      caller: "root",
      session: "stolen"
    }
    const metaClaims = { "ugent/trust": 3, trust: 3, observer: { id: "root", trust: 3 } }
    let l1: Awaited<ReturnType<typeof serve>>
    let l0: Awaited<ReturnType<typeof serve>>

    beforeAll(async () => {
      ;[l1, l0] = await Promise.all([
        serve({
          root: ws.root,
          trust: 1,
          observerId: "mcp-l1",
          stores: "memory",
          recipe: roomy,
          writable: ["notes/**"]
        }),
        serve({ root: ws.root, trust: 0, observerId: "mcp-l0", stores: "memory", recipe: roomy })
      ])
    })
    afterAll(async () => {
      await Promise.all([l1?.dispose(), l0?.dispose()])
      ws.remove()
    })

    it("claims of trust in arguments, _meta or headers do not raise an L1 caller", async () => {
      const client = await l1.client({ "x-ugent-trust": "L3", "x-ugent-observer": "root" })
      // Claims among the arguments are keys file.write does not take: refused by name.
      const claimed = failureOf(
        await client.callTool({
          name: "world_tools_file_write",
          arguments: { path: "out.txt", content: "x", ...claims },
          _meta: metaClaims
        })
      )
      assert.strictEqual(claimed._tag, "UnknownArguments")
      assert.deepStrictEqual(claimed.unknown, Object.keys(claims))
      const failure = failureOf(
        await client.callTool({
          name: "world_tools_file_write",
          arguments: { path: "out.txt", content: "x" },
          _meta: metaClaims
        })
      )
      assert.strictEqual(failure._tag, "TrustDenied")
      assert.strictEqual(failure.actual, 1)
      assert.strictEqual(failure.required, 2)
      assert.isFalse(existsSync(join(ws.root, "out.txt")))
      await client.close()
    })

    it("claims of trust do not reveal or open a path hidden from an L0 caller", async () => {
      const client = await l0.client({ "x-ugent-trust": "L3" })
      const listed = (await client.listTools({ _meta: metaClaims })).tools.map((t) => t.name)
      assert.notInclude(listed, "world_tools_file_write")
      const refused = await rejection(
        client.callTool({
          name: "world_tools_file_write",
          arguments: { path: "new.txt", content: "x", ...claims },
          _meta: metaClaims
        })
      )
      assert.strictEqual(refused.code, -32602)
      assert.isFalse(existsSync(join(ws.root, "new.txt")))
      await client.close()
    })

    it("identity fields in arguments do not change who the road records as the caller", async () => {
      const client = await l1.client()
      const events = await eventsDuring(l1, () =>
        client.callTool({ name: "world_tools_file_read", arguments: { path: "b.txt", ...claims }, _meta: metaClaims })
      )
      // The call is refused (the claims are keys file.read does not take), and recorded as the server's caller's.
      assert.deepStrictEqual(
        events.map((e) => [e._tag, e.observerId]),
        [
          ["tool.invoked", "mcp-l1"],
          ["tool.failed", "mcp-l1"]
        ]
      )
      await client.close()
    })
  })
})
