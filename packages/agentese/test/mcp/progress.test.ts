/**
 * A call the client follows (its `_meta.progressToken`) says it started and
 * how long it has run until it ends: in process, over stdio, and over
 * streamable HTTP on the call's own event stream.
 */
import { tmpdir } from "node:os"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import type { Progress } from "@modelcontextprotocol/sdk/types.js"
import { assert, describe, it } from "@effect/vitest"
import { Server } from "@ugent/agentese"
import { Effect } from "effect"
import { connect, fixtureServer, workspace } from "./fixtures/connect.ts"
import { serve } from "./fixtures/http.ts"
import { memoryClient } from "./fixtures/memory.ts"
import { slow } from "./fixtures/slow.ts"

const road = Server.layer({ root: tmpdir(), stores: "memory", families: [slow] })

/** Progress values grow with each notification, as MCP asks. */
const growing = (seen: ReadonlyArray<Progress>) => seen.every((p, i) => i === 0 || p.progress > seen[i - 1]!.progress)

describe("progress of a long call (issue 27)", () => {
  it.live("a call that reaches the network says at once that it started, then how long it has run", () =>
    Effect.gen(function* () {
      const { client } = yield* memoryClient({ progressInterval: "100 millis" })
      const seen: Array<Progress> = []
      const result = yield* Effect.promise(() =>
        client.callTool({ name: "self_tools_slow_fetch", arguments: { ms: 650 } }, undefined, {
          onprogress: (p) => void seen.push(p)
        })
      )
      assert.deepStrictEqual(result.structuredContent, { waited: 650 })
      assert.match(seen[0]?.message ?? "", /^self_tools_slow_fetch started/)
      assert.isAtLeast(seen.length, 3)
      assert.match(seen.at(-1)?.message ?? "", /^self_tools_slow_fetch still running after \d+(\.\d)? s$/)
      assert.isTrue(growing(seen), JSON.stringify(seen))
    }).pipe(Effect.scoped, Effect.provide(road))
  )

  it.live("any other call is quiet for its first second, then tells its start and its heartbeats", () =>
    Effect.gen(function* () {
      const { client } = yield* memoryClient({ progressInterval: "200 millis" })
      const quick: Array<Progress> = []
      yield* Effect.promise(() =>
        client.callTool({ name: "self_tools_slow_wait", arguments: { ms: 300 } }, undefined, {
          onprogress: (p) => void quick.push(p)
        })
      )
      assert.deepStrictEqual(quick, [])
      const long: Array<Progress> = []
      yield* Effect.promise(() =>
        client.callTool({ name: "self_tools_slow_wait", arguments: { ms: 1_700 } }, undefined, {
          onprogress: (p) => void long.push(p)
        })
      )
      assert.match(long[0]?.message ?? "", /^self_tools_slow_wait started 1(\.\d)? s ago$/)
      assert.isAtLeast(long.length, 2)
      assert.isTrue(growing(long))
    }).pipe(Effect.scoped, Effect.provide(road))
  )

  it("over stdio, a followed call's progress reaches the SDK client", async () => {
    const ws = workspace({})
    const client = await connect(
      new StdioClientTransport({
        command: process.execPath,
        args: ["--conditions=@ugent/source", fixtureServer, "--root", ws.root, "--slow", "--progress-ms", "100"],
        stderr: "inherit"
      })
    )
    try {
      const seen: Array<Progress> = []
      await client.callTool({ name: "self_tools_slow_fetch", arguments: { ms: 500 } }, undefined, {
        onprogress: (p) => void seen.push(p)
      })
      assert.isAtLeast(seen.length, 3)
      assert.match(seen[0]!.message ?? "", /started/)
    } finally {
      await client.close()
      ws.remove()
    }
  }, 60_000)

  it("over streamable HTTP, progress travels on the call's own event stream, before its reply", async () => {
    const server = await serve(
      { root: tmpdir(), stores: "memory", families: [slow] },
      { progressInterval: "100 millis" }
    )
    const headers = { "content-type": "application/json", accept: "application/json, text/event-stream" }
    try {
      const init = await fetch(server.url, {
        method: "POST",
        headers,
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "initialize",
          params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "claude-code", version: "0" } }
        })
      })
      const session = init.headers.get("mcp-session-id")!
      await init.text()
      const call = await fetch(server.url, {
        method: "POST",
        headers: { ...headers, "mcp-session-id": session },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 2,
          method: "tools/call",
          params: { name: "self_tools_slow_fetch", arguments: { ms: 450 }, _meta: { progressToken: "p-1" } }
        })
      })
      assert.strictEqual(call.headers.get("content-type"), "text/event-stream")
      const events = (await call.text())
        .split("\n\n")
        .filter((e) => e.startsWith("event: message"))
        .map((e) => JSON.parse(e.slice(e.indexOf("data: ") + 6)) as Record<string, unknown>)
      const methods = events.map((e) => e.method ?? `reply ${String(e.id)}`)
      assert.strictEqual(methods.at(-1), "reply 2")
      assert.isAtLeast(methods.filter((m) => m === "notifications/progress").length, 3)
      assert.isTrue(
        events
          .filter((e) => e.method !== undefined)
          .every((e) => (e.params as { progressToken?: unknown }).progressToken === "p-1")
      )
    } finally {
      await server.dispose()
    }
  }, 60_000)
})
