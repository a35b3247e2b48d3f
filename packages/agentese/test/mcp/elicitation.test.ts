/**
 * The stdio server in raw JSON-RPC: a call that needs the person behind the
 * client asks it by elicitation (the server's own request, answered by the
 * client), a client that cannot be asked gets the no-channel answer, and an
 * approved read gives the session the proof that a later write needs.
 */
import { spawn } from "node:child_process"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { createInterface } from "node:readline"
import { afterAll, assert, describe, it } from "vitest"
import { fixtureServer, workspace } from "./fixtures/connect.ts"

const ws = workspace({ "hello.txt": "hello\n" })
afterAll(() => ws.remove())

type Json = Record<string, unknown>

/**
 * A raw JSON-RPC client of the fixture server: requests by id, and the
 * server's own requests (elicitation) answered by `onRequest`.
 */
const open = async (options: {
  readonly args: ReadonlyArray<string>
  readonly protocolVersion?: string
  readonly capabilities?: Json
  readonly onRequest?: (request: Json) => Json
}) => {
  const child = spawn(
    process.execPath,
    ["--conditions=@ugent/source", fixtureServer, "--root", ws.root, ...options.args],
    {
      stdio: ["pipe", "pipe", "inherit"]
    }
  )
  const waiting = new Map<unknown, (reply: Json) => void>()
  const asked: Array<Json> = []
  createInterface({ input: child.stdout }).on("line", (line) => {
    const message = JSON.parse(line) as Json
    if (typeof message.method === "string" && message.id !== undefined) {
      asked.push(message)
      const result = options.onRequest?.(message) ?? {}
      child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id: message.id, result })}\n`)
      return
    }
    waiting.get(message.id)?.(message)
  })
  let next = 0
  const request = (method: string, params: Json) =>
    new Promise<Json>((resolve) => {
      const id = ++next
      waiting.set(id, resolve)
      child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id, method, params })}\n`)
    })
  await request("initialize", {
    protocolVersion: options.protocolVersion ?? "2025-11-25",
    capabilities: options.capabilities ?? {},
    clientInfo: { name: "raw", version: "0" }
  })
  child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" })}\n`)
  const call = async (name: string, args: Json) => {
    const reply = await request("tools/call", { name, arguments: args })
    return reply.result as {
      readonly isError: boolean
      readonly structuredContent?: Json
      readonly content: Array<Json>
      readonly _meta?: Json
    }
  }
  return { call, asked, close: () => child.kill() }
}

const accept = (answer: string) => (request: Json) =>
  request.method === "elicitation/create" ? { action: "accept", content: { answer } } : {}

describe("the stdio server and the person behind its client", () => {
  it("a client that can answer questions is asked through elicitation", async () => {
    const client = await open({ args: ["--trust", "L1"], capabilities: { elicitation: {} }, onRequest: accept("blue") })
    try {
      const read = await client.call("world_tools_file_read", { path: "hello.txt" })
      assert.isFalse(read.isError)
      assert.lengthOf(client.asked, 0)
      const clarified = await client.call("self_tools_clarify", { question: "Which colour?" })
      assert.deepStrictEqual(clarified.structuredContent, { answered: true, answer: "blue" })
      assert.deepStrictEqual(
        client.asked.map((r) => r.method),
        ["elicitation/create"]
      )
    } finally {
      client.close()
    }
  }, 60_000)

  it("a client that cannot answer questions gets clarify's no-channel answer", async () => {
    for (const protocolVersion of ["2025-11-25", "2025-03-26"]) {
      const client = await open({ args: ["--trust", "L1"], protocolVersion })
      try {
        const clarified = await client.call("self_tools_clarify", { question: "Which colour?" })
        const answer = (clarified.structuredContent ?? clarified._meta?.["ugent/result"]) as Json
        assert.strictEqual(answer.answered, false, protocolVersion)
        assert.strictEqual(answer.reason, "no-channel", protocolVersion)
        assert.lengthOf(client.asked, 0)
      } finally {
        client.close()
      }
    }
  }, 60_000)

  it("an approval by elicitation shows the arguments, without the proof, and the diff of a dry run", async () => {
    const recipe = JSON.stringify({ requireApproval: ["world.tools.file.edit", "world.tools.file.write"] })
    const client = await open({
      args: ["--trust", "L1", "--recipe", recipe],
      capabilities: { elicitation: {} },
      onRequest: accept("deny")
    })
    try {
      const read = await client.call("world_tools_file_read", { path: "hello.txt" })
      assert.isFalse(read.isError)
      const edit = await client.call("world_tools_file_edit", { path: "hello.txt", oldText: "hello", newText: "howdy" })
      assert.isTrue(edit.isError)
      const write = await client.call("world_tools_file_write", { path: "fresh.txt", content: "first line\n" })
      assert.isTrue(write.isError)
      const [asked, askedWrite] = client.asked.map((r) => String((r.params as Json).message))
      assert.match(asked!, /asks to run world\.tools\.file\.edit/)
      assert.include(asked!, "Arguments:\n  path: hello.txt\n  oldText: hello\n  newText: howdy")
      assert.match(asked!, /The change:\n[\s\S]*-hello\n\+howdy/)
      assert.notInclude(asked!, "rp1.")
      assert.notInclude(asked!, "proof")
      // A write has no dry run: its arguments show the content.
      assert.include(askedWrite!, "Arguments:\n  path: fresh.txt\n  content: |\n    first line")
      // Nothing was written: the dry run writes nothing, and the edit was denied.
      assert.strictEqual(readFileSync(join(ws.root, "hello.txt"), "utf8"), "hello\n")
    } finally {
      client.close()
    }
  }, 60_000)

  it("an approved read gives the session the proof a write then needs", async () => {
    const recipe = JSON.stringify({ requireApproval: ["world.tools.file.read"] })
    const client = await open({
      args: ["--trust", "L1", "--recipe", recipe],
      capabilities: { elicitation: {} },
      onRequest: accept("approve")
    })
    try {
      const read = await client.call("world_tools_file_read", { path: "hello.txt" })
      assert.isFalse(read.isError, JSON.stringify(read.content))
      assert.deepStrictEqual(
        client.asked.map((r) => r.method),
        ["elicitation/create"]
      )
      const edit = await client.call("world_tools_file_edit", { path: "hello.txt", oldText: "hello", newText: "howdy" })
      assert.isFalse(edit.isError, JSON.stringify(edit.content))
      assert.strictEqual(readFileSync(join(ws.root, "hello.txt"), "utf8"), "howdy\n")
      // The write asked nobody: it was answered on the direct road, with the proof the approved read left.
      assert.lengthOf(client.asked, 1)
    } finally {
      client.close()
    }
  }, 60_000)
})
