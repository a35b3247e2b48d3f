/**
 * `ugent serve` and `ugent mcp` as child processes: the HTTP API and the MCP
 * endpoint on one loopback server, and the MCP server on stdio.
 */

import type { ChildProcess } from "node:child_process"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { createInterface } from "node:readline"
import { assert, describe, it } from "@effect/vitest"
import { exited, onlyJson, start, ugent, workspace } from "./fixture.ts"

/** Waits for the line `ugent serve` prints on stderr and returns the URL it serves. */
const servedUrl = (child: ChildProcess): Promise<string> =>
  new Promise((resolve, reject) => {
    let stderr = ""
    child.stderr!.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk
      const m = /serving (http:\/\/\S+) /.exec(stderr)
      if (m !== null) resolve(m[1]!)
    })
    child.on("exit", (code) => reject(new Error(`ugent serve exited with ${code}: ${stderr}`)))
  })

const mcpHeaders = { "content-type": "application/json", accept: "application/json, text/event-stream" }
const initialize = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "test", version: "0" } }
}

describe("ugent serve", () => {
  it("serves the API and the MCP endpoint on 127.0.0.1, and stops on SIGTERM", async () => {
    const root = workspace()
    const child = start(["serve", "--port", "0", "--stores", "memory"], root)
    try {
      const url = await servedUrl(child)
      assert.match(url, /^http:\/\/127\.0\.0\.1:\d+$/)

      const paths = await fetch(`${url}/v1/paths`)
      assert.strictEqual(paths.status, 200)
      const openapi = await fetch(`${url}/v1/openapi.json`)
      assert.strictEqual(openapi.status, 200)
      assert.property(((await openapi.json()) as { paths: object }).paths, "/v1/invoke/{path}")

      const events = new AbortController()
      const stream = await fetch(`${url}/v1/events`, { signal: events.signal })
      assert.strictEqual(stream.headers.get("content-type"), "text/event-stream")
      const reader = stream.body!.getReader()
      const received = (async () => {
        let text = ""
        while (!text.includes("event: tool.completed")) {
          const { value, done } = await reader.read()
          if (done) break
          text += new TextDecoder().decode(value)
        }
        return text
      })()

      const call = await fetch(`${url}/v1/invoke/world.tools.file.read`, {
        method: "POST",
        body: JSON.stringify({ path: "a.txt" })
      })
      assert.strictEqual(call.status, 200)
      assert.strictEqual(((await call.json()) as { result: { content: string } }).result.content, "1\talpha\n2\tbeta")
      assert.match(await received, /event: tool\.invoked\ndata: \{"_tag":"tool\.invoked"/)
      events.abort()

      const denied = await fetch(`${url}/v1/invoke/world.tools.file.write`, {
        method: "POST",
        headers: { "x-ugent-trust": "L3" },
        body: JSON.stringify({ path: "c.txt", content: "x", trust: 3 })
      })
      assert.strictEqual(denied.status, 403)

      const init = await fetch(`${url}/mcp`, { method: "POST", headers: mcpHeaders, body: JSON.stringify(initialize) })
      assert.strictEqual(init.status, 200)
      const session = init.headers.get("mcp-session-id")
      assert.strictEqual(
        ((await init.json()) as { result: { serverInfo: { name: string } } }).result.serverInfo.name,
        "ugent"
      )
      const headers = {
        ...mcpHeaders,
        "mcp-protocol-version": "2025-11-25",
        ...(session ? { "mcp-session-id": session } : {})
      }
      await fetch(`${url}/mcp`, {
        method: "POST",
        headers,
        body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" })
      })
      const list = await fetch(`${url}/mcp`, {
        method: "POST",
        headers,
        body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list", params: {} })
      })
      const tools = ((await list.json()) as { result: { tools: Array<{ name: string }> } }).result.tools
      assert.include(
        tools.map((t) => t.name),
        "world_tools_file_read"
      )
    } finally {
      child.kill("SIGTERM")
    }
    assert.strictEqual(await exited(child), 0)
  })

  it("accepts a proof printed by another ugent process on the same workspace", async () => {
    const root = workspace()
    const child = start(["serve", "--port", "0", "--stores", "memory", "--trust", "L1"], root)
    try {
      const url = await servedUrl(child)
      const read = await ugent(["invoke", "world.tools.file.read", "--input", '{"path": "a.txt"}', "--json"], {
        cwd: root
      })
      assert.strictEqual(read.code, 0, read.stderr)
      const proof = (onlyJson(read) as { result: { proof: string } }).result.proof
      const write = await fetch(`${url}/v1/invoke/world.tools.file.write`, {
        method: "POST",
        body: JSON.stringify({ path: "a.txt", content: "served\n", proof })
      })
      assert.strictEqual(write.status, 200, await write.clone().text())
      assert.strictEqual(readFileSync(join(root, "a.txt"), "utf8"), "served\n")
    } finally {
      child.kill("SIGTERM")
    }
    assert.strictEqual(await exited(child), 0)
  })
})

describe("ugent mcp", () => {
  it("answers initialize and tools/list over stdio, with only JSON-RPC on stdout, and ends with stdin", async () => {
    const root = workspace()
    const child = start(["mcp", "--stores", "memory"], root)
    const lines = createInterface({ input: child.stdout! })
    const received: Array<{ id?: number; result?: Record<string, unknown> }> = []
    const waiting = new Map<number, (message: unknown) => void>()
    lines.on("line", (line) => {
      const message = JSON.parse(line) as { id?: number; result?: Record<string, unknown> }
      received.push(message)
      if (message.id !== undefined) waiting.get(message.id)?.(message)
    })
    const request = (id: number, method: string, params: unknown) =>
      new Promise<{ result: Record<string, unknown> }>((resolve) => {
        waiting.set(id, resolve as (message: unknown) => void)
        child.stdin!.write(`${JSON.stringify({ jsonrpc: "2.0", id, method, params })}\n`)
      })
    const init = await request(1, "initialize", initialize.params)
    assert.strictEqual((init.result.serverInfo as { name: string }).name, "ugent")
    child.stdin!.write(`${JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" })}\n`)
    const list = await request(2, "tools/list", {})
    const names = (list.result.tools as Array<{ name: string }>).map((t) => t.name)
    assert.include(names, "world_tools_file_read")
    assert.notInclude(names, "world_tools_file_write")
    child.stdin!.end()
    assert.strictEqual(await exited(child), 0)
    // Every line on stdout parsed as JSON-RPC (a stray log line would have thrown above).
    assert.isTrue(received.every((m) => (m as { jsonrpc?: string }).jsonrpc === "2.0"))
  })
})
