import { existsSync, readFileSync, writeFileSync } from "node:fs"
import { request as httpRequest } from "node:http"
import { join } from "node:path"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js"
import { Mcp } from "@ugent/agentese"
import { type CallResult, connect, failureOf, rejection, resultOf, workspace } from "./fixtures/connect.ts"
import { serve } from "./fixtures/http.ts"

describe("streamable-HTTP MCP endpoint", () => {
  const ws = workspace({ "hello.txt": "hello\n", "notes.md": "# notes\n", "draft.md": "draft\n" })
  let server: Awaited<ReturnType<typeof serve>>
  let client: Client

  beforeAll(async () => {
    server = await serve({ root: ws.root, trust: 1, stores: "memory", recipe: { deny: ["world.tools.file.edit"] } })
    client = await server.client()
  })
  afterAll(async () => {
    await client?.close()
    await server?.dispose()
    ws.remove()
  })

  it("initializes a session and lists the offered paths", async () => {
    assert.strictEqual(client.getServerVersion()?.name, "ugent")
    const names = (await client.listTools()).tools.map((t) => t.name)
    assert.includeMembers(names, ["world_tools_file_read", "world_tools_file_write"])
    assert.notInclude(names, "world_tools_file_edit")
  })

  it("writes with the proof of a read made in the same session", async () => {
    const read = resultOf(await client.callTool({ name: "world_tools_file_read", arguments: { path: "notes.md" } }))
    resultOf(
      await client.callTool({
        name: "world_tools_file_write",
        arguments: { path: "notes.md", content: "# notes\n- cake\n", proof: read.proof }
      })
    )
    assert.strictEqual(readFileSync(join(ws.root, "notes.md"), "utf8"), "# notes\n- cake\n")
  })

  it("sends a write without a proof back as a structured ProofRejected", async () => {
    const failure = failureOf(
      await client.callTool({ name: "world_tools_file_write", arguments: { path: "draft.md", content: "x" } })
    )
    assert.strictEqual(failure._tag, "ProofRejected")
    assert.strictEqual(failure.reason, "never-read")
  })

  it("neither lists nor runs a path the recipe denies", async () => {
    const denied = await rejection(
      client.callTool({ name: "world_tools_file_edit", arguments: { path: "draft.md", edits: [] } })
    )
    assert.strictEqual(denied.code, -32602)
    assert.match(denied.message, /not found/)
  })
})

describe("streamable-HTTP MCP endpoint bounds (threat 38)", () => {
  const ws = workspace({ "hello.txt": "hello\n" })
  let server: Awaited<ReturnType<typeof serve>>
  const initialize = (url: URL) =>
    fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "0" } }
      })
    })

  beforeAll(async () => {
    server = await serve({ root: ws.root, stores: "memory" }, { maxSessions: 3, sessionIdleTimeout: "2 seconds" })
  })
  afterAll(async () => {
    await server?.dispose()
    ws.remove()
  })

  it("refuses a body over the limit with 413, with or without Content-Length", async () => {
    const big = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping", params: { pad: "x".repeat(2 * 1024 * 1024) } })
    const declared = await fetch(server.url, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: big
    })
    assert.strictEqual(declared.status, 413)
    const chunks = new ReadableStream({
      start(controller) {
        controller.enqueue(new TextEncoder().encode(big))
        controller.close()
      }
    })
    const streamed = await fetch(server.url, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: chunks,
      duplex: "half"
    } as RequestInit)
    assert.strictEqual(streamed.status, 413)
  })

  it("caps live sessions, and ends idle ones (their id is then unknown)", async () => {
    const ids: Array<string | null> = []
    for (let i = 0; i < 3; i++) ids.push((await initialize(server.url)).headers.get("mcp-session-id"))
    assert.isTrue(ids.every((id) => id !== null))
    const fourth = await initialize(server.url)
    assert.strictEqual(fourth.status, 503)
    // After the idle timeout the sessions are ended by the server, and room is made.
    await new Promise((resolve) => setTimeout(resolve, 4_000))
    const ping = await fetch(server.url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-session-id": ids[0]!,
        "mcp-protocol-version": "2025-06-18"
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "ping" })
    })
    assert.strictEqual(ping.status, 404)
    assert.strictEqual((await initialize(server.url)).status, 200)
  })
})

describe("streamable-HTTP MCP sessions per client (issue 24, low)", () => {
  const ws = workspace({ "hello.txt": "hello\n" })
  let server: Awaited<ReturnType<typeof serve>>

  /** An initialize POSTed from a local address of the caller's choice (127.0.0.0/8 is all loopback). */
  const initializeFrom = (url: URL, localAddress: string) =>
    new Promise<{ status: number; session: string | undefined }>((resolve, reject) => {
      const body = JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "0" } }
      })
      const req = httpRequest(
        url,
        {
          method: "POST",
          localAddress,
          headers: { "content-type": "application/json", accept: "application/json, text/event-stream" }
        },
        (res) => {
          res.resume()
          res.on("end", () => {
            const session = res.headers["mcp-session-id"]
            resolve({ status: res.statusCode ?? 0, session: typeof session === "string" ? session : undefined })
          })
        }
      )
      req.on("error", reject)
      req.end(body)
    })
  const ping = (session: string) =>
    fetch(server.url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-session-id": session,
        "mcp-protocol-version": "2025-06-18"
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "ping" })
    }).then((r) => r.status)

  beforeAll(async () => {
    server = await serve({ root: ws.root, stores: "memory" }, { maxSessions: 6, maxSessionsPerClient: 2 })
  })
  afterAll(async () => {
    await server?.dispose()
    ws.remove()
  })

  it("threat: one client opens sessions until the server's pool is full, and no other client gets one", async () => {
    const mine: Array<string | undefined> = []
    for (let i = 0; i < 10; i++) {
      const r = await initializeFrom(server.url, "127.0.0.1")
      assert.strictEqual(r.status, 200, `session ${i}`)
      mine.push(r.session)
    }
    // Its own oldest sessions gave way: it holds its last two, and the others are ended.
    const alive = await Promise.all(mine.map((id) => ping(id!)))
    assert.deepStrictEqual(alive, [...new Array(8).fill(404), 200, 200])
    const other = await initializeFrom(server.url, "127.0.0.2")
    assert.strictEqual(other.status, 200)
    assert.isString(other.session)
  })

  it("threat: one client opens sessions all at once, before any is counted, and fills the pool", async () => {
    const burst = await Promise.all(Array.from({ length: 12 }, () => initializeFrom(server.url, "127.0.0.3")))
    assert.isAtLeast(burst.filter((r) => r.status === 200).length, 2)
    const other = await initializeFrom(server.url, "127.0.0.4")
    assert.strictEqual(other.status, 200)
    // The burst's client is back to its share.
    const alive = await Promise.all(burst.filter((r) => r.session !== undefined).map((r) => ping(r.session!)))
    assert.isAtMost(alive.filter((status) => status === 200).length, 2)
  })
})

/** The SDK's streamable-HTTP transport, initializing on one protocol revision (the SDK offers its newest). */
class TransportOn extends StreamableHTTPClientTransport {
  readonly revision: string
  constructor(url: URL, revision: string) {
    super(url)
    this.revision = revision
  }
  override send(message: JSONRPCMessage, options?: Parameters<StreamableHTTPClientTransport["send"]>[1]) {
    const m = message as { method?: string; params?: Record<string, unknown> }
    return super.send(
      m.method === "initialize"
        ? ({ ...message, params: { ...m.params, protocolVersion: this.revision } } as JSONRPCMessage)
        : message,
      options
    )
  }
}

describe("streamable-HTTP MCP sessions (issue 24 #6)", () => {
  const ws = workspace({ "a.txt": "alpha\n", "b.txt": "beta\n" })
  let server: Awaited<ReturnType<typeof serve>>

  beforeAll(async () => {
    server = await serve({ root: ws.root, trust: 1, stores: "memory" })
  })
  afterAll(async () => {
    await server?.dispose()
    ws.remove()
  })

  const call = (client: Client, name: string, args: Record<string, unknown> = {}) =>
    client.callTool({ name, arguments: args })
  /** A success's value: its structured content, or on revisions without one its JSON in `_meta["ugent/result"]`. */
  // biome-ignore lint/suspicious/noExplicitAny: the assertions read the value field by field
  const succeeded = (result: CallResult): any => {
    resultOf(result)
    return result.structuredContent ?? result._meta?.["ugent/result"]
  }

  for (const protocolVersion of Mcp.protocols) {
    it(`threat: within one Mcp-Session-Id the server forgets plan mode, read proofs and tasks (${protocolVersion})`, async () => {
      const one = await connect(new TransportOn(server.url, protocolVersion))
      const other = await connect(new TransportOn(server.url, protocolVersion))
      try {
        assert.strictEqual((one.transport as TransportOn).protocolVersion, protocolVersion)
        const file = `plan-${protocolVersion}.txt`
        // Plan mode holds for the session that entered it, and only for it.
        succeeded(await call(one, "self_tools_mode_plan"))
        const refused = failureOf(await call(one, "world_tools_file_write", { path: file, content: "x" }))
        assert.strictEqual(refused._tag, "PlanMode")
        assert.isFalse(existsSync(join(ws.root, file)))
        succeeded(await call(other, "world_tools_file_write", { path: file, content: "y" }))
        assert.strictEqual(readFileSync(join(ws.root, file), "utf8"), "y")
        succeeded(await call(one, "self_tools_mode_execute"))

        // A read proves the file to its session: an edit needs no token there, and is refused elsewhere.
        const read = `read-${protocolVersion}.txt`
        writeFileSync(join(ws.root, read), "y\n")
        succeeded(await call(one, "world_tools_file_read", { path: read }))
        const unproved = failureOf(
          await call(other, "world_tools_file_edit", { path: read, oldText: "y", newText: "z" })
        )
        assert.strictEqual(unproved._tag, "ProofRejected")
        assert.strictEqual(unproved.reason, "never-read")
        succeeded(await call(one, "world_tools_file_edit", { path: read, oldText: "y", newText: "z" }))
        assert.strictEqual(readFileSync(join(ws.root, read), "utf8"), "z\n")

        // Tasks belong to the session that made them.
        const task = succeeded(await call(one, "self_tools_task_create", { title: "ship it" }))
        const mine: ReadonlyArray<{ id: string }> = succeeded(await call(one, "self_tools_task_list")).tasks
        assert.deepStrictEqual(
          mine.map((t) => t.id),
          [task.id]
        )
        assert.deepStrictEqual(succeeded(await call(other, "self_tools_task_list")).tasks, [])
      } finally {
        await one.close()
        await other.close()
      }
    })
  }
})
