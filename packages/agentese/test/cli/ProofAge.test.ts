/**
 * A read proof's lifetime through `ugent serve`: the hash decides whether
 * the file is as it was read, and a time bound retires a proof long after
 * the read, on the JSON API (a token sent back) and on MCP (a proof the
 * session remembers), with a message saying to read again.
 */
import type { ChildProcess } from "node:child_process"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { setTimeout as sleep } from "node:timers/promises"
import { assert, describe, it } from "@effect/vitest"
import { exited, start, workspace } from "./fixture.ts"

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

const mcpHeaders = { "content-type": "application/json", accept: "application/json" }

describe("a read proof's time bound", () => {
  it("threat: a read proof long forgotten in a transcript still overwrites the file (HTTP and an MCP session)", async () => {
    const root = workspace()
    const child = start(["serve", "--port", "0", "--stores", "memory", "--trust", "L1", "--proof-max-age", "2s"], root)
    try {
      const url = await servedUrl(child)
      const invoke = (path: string, input: unknown) =>
        fetch(`${url}/v1/invoke/${path}`, { method: "POST", body: JSON.stringify(input) })
      const read = (await (await invoke("world.tools.file.read", { path: "a.txt" })).json()) as {
        result: { proof: string }
      }

      // An MCP session reads too: the proof it remembers ages the same way.
      const init = await fetch(`${url}/mcp`, {
        method: "POST",
        headers: mcpHeaders,
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "initialize",
          params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "test", version: "0" } }
        })
      })
      const session = init.headers.get("mcp-session-id")!
      const mcp = async (id: number, name: string, args: unknown) =>
        (await (
          await fetch(`${url}/mcp`, {
            method: "POST",
            headers: { ...mcpHeaders, "mcp-session-id": session },
            body: JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: args } })
          })
        ).json()) as { result: { isError?: boolean; structuredContent?: Record<string, unknown> } }
      await mcp(2, "world_tools_file_read", { path: "b.md" })

      await sleep(2500)
      const stale = await invoke("world.tools.file.write", {
        path: "a.txt",
        content: "late\n",
        proof: read.result.proof
      })
      assert.strictEqual(stale.status, 409)
      const refused = (await stale.json()) as { error: { _tag: string; reason: string; message: string } }
      assert.strictEqual(refused.error._tag, "ProofRejected")
      assert.strictEqual(refused.error.reason, "expired")
      assert.match(refused.error.message, /was issued \d+ s ago, past this server's bound of 2 s .*Read the file again/)
      assert.strictEqual(readFileSync(join(root, "a.txt"), "utf8"), "alpha\nbeta\n")

      const remembered = await mcp(3, "world_tools_file_write", { path: "b.md", content: "late\n" })
      assert.isTrue(remembered.result.isError)
      assert.match(
        JSON.stringify(remembered.result),
        /ProofRejected.*was issued \d+ s ago, past this server's bound of 2 s/
      )
      assert.strictEqual(readFileSync(join(root, "b.md"), "utf8"), "# b\n")

      // Read again: the new proof writes.
      const again = (await (await invoke("world.tools.file.read", { path: "a.txt" })).json()) as {
        result: { proof: string }
      }
      const fresh = await invoke("world.tools.file.write", {
        path: "a.txt",
        content: "now\n",
        proof: again.result.proof
      })
      assert.strictEqual(fresh.status, 200, await fresh.clone().text())
    } finally {
      child.kill("SIGTERM")
    }
    assert.strictEqual(await exited(child), 0)
  })
})
