/**
 * JSON-RPC on the stdio channel, as the specification says: garbage gets a
 * parse error (-32700) and the channel goes on; an id that is not a string,
 * a number or null gets an invalid request (-32600, id null), not a defect.
 */
import { spawn } from "node:child_process"
import { createInterface } from "node:readline"
import { afterAll, assert, describe, it } from "vitest"
import { fixtureServer, workspace } from "./fixtures/connect.ts"

const ws = workspace({ "a.txt": "a\n" })
afterAll(() => ws.remove())

const exchange = async (lines: ReadonlyArray<string>, expected: number) => {
  const child = spawn(process.execPath, [fixtureServer, "--root", ws.root], { stdio: ["pipe", "pipe", "ignore"] })
  const replies: Array<Record<string, unknown>> = []
  const done = new Promise<void>((resolve) => {
    createInterface({ input: child.stdout }).on("line", (line) => {
      replies.push(JSON.parse(line))
      if (replies.length === expected) resolve()
    })
  })
  for (const line of lines) child.stdin.write(`${line}\n`)
  await done
  child.kill()
  return replies
}

const initialize = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "0" } }
})

describe("JSON-RPC on stdio: a stray line cannot break the channel", () => {
  it("answers garbage with -32700 and an object id with -32600, and goes on serving", async () => {
    const replies = await exchange(
      [
        initialize,
        JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
        "this is not json",
        JSON.stringify({ jsonrpc: "2.0", id: { a: 1 }, method: "ping" }),
        JSON.stringify({ jsonrpc: "2.0", id: 7, method: "ping" })
      ],
      4
    )
    const byId = (id: unknown) => replies.filter((r) => JSON.stringify(r.id) === JSON.stringify(id))
    assert.strictEqual(byId(1).length, 1)
    const errors = byId(null).map((r) => (r.error as { code: number }).code)
    assert.deepStrictEqual(errors.sort(), [-32700, -32600].sort())
    assert.deepStrictEqual(byId(7)[0]?.result, {})
    assert.isFalse(JSON.stringify(replies).includes("Defect"))
  }, 60_000)
})
