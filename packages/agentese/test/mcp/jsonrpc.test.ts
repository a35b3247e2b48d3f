/**
 * JSON-RPC on the stdio channel, as the specification says: garbage gets a
 * parse error (-32700) and the channel goes on; an id that is not a string,
 * a number or null, a message nested too deep or one over the size cap gets
 * an invalid request (-32600), not a defect, and the next one is answered.
 */
import { spawn } from "node:child_process"
import { existsSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { createInterface } from "node:readline"
import { afterAll, assert, describe, it } from "vitest"
import { fixtureServer, ugentBin, workspace } from "./fixtures/connect.ts"

const ws = workspace({ "a.txt": "a\n" })
afterAll(() => ws.remove())

/** Writes `lines` to a fresh stdio server and collects its first `expected` replies (with the server's flags). */
const exchange = async (
  lines: ReadonlyArray<string>,
  expected: number,
  flags: ReadonlyArray<string> = ["--trust", "L1"]
) => {
  const child = spawn(process.execPath, [fixtureServer, "--root", ws.root, ...flags], {
    stdio: ["pipe", "pipe", "pipe"]
  })
  let stderr = ""
  child.stderr.setEncoding("utf8").on("data", (c: string) => {
    stderr += c
  })
  const replies: Array<Record<string, unknown>> = []
  const done = new Promise<void>((resolve) => {
    createInterface({ input: child.stdout, crlfDelay: Number.POSITIVE_INFINITY }).on("line", (line) => {
      replies.push(JSON.parse(line))
      if (replies.length === expected) resolve()
    })
  })
  for (const line of lines) child.stdin.write(`${line}\n`)
  await done
  child.kill()
  return { replies, stderr }
}

const initialized = JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" })
const byId = (replies: ReadonlyArray<Record<string, unknown>>, id: unknown) =>
  replies.filter((r) => JSON.stringify(r.id) === JSON.stringify(id))
/** The CPU time a process has used (user and system), from /proc: a load on the machine does not move it. */
const cpuSeconds = (pid: number) => {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")
  return (Number(fields[11]) + Number(fields[12])) / 100
}

/** JSON nested `depth` objects deep. */
const deep = (depth: number) => `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`

const initialize = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "0" } }
})

describe("JSON-RPC on stdio: a stray line cannot break the channel", () => {
  it("answers garbage with -32700 and an object id with -32600, and goes on serving", async () => {
    const { replies } = await exchange(
      [
        initialize,
        initialized,
        "this is not json",
        JSON.stringify({ jsonrpc: "2.0", id: { a: 1 }, method: "ping" }),
        JSON.stringify({ jsonrpc: "2.0", id: 7, method: "ping" })
      ],
      4
    )
    assert.strictEqual(byId(replies, 1).length, 1)
    const errors = byId(replies, null).map((r) => (r.error as { code: number }).code)
    assert.deepStrictEqual(errors.sort(), [-32700, -32600].sort())
    assert.deepStrictEqual(byId(replies, 7)[0]?.result, {})
    assert.isFalse(JSON.stringify(replies).includes("Defect"))
  }, 60_000)

  it("threat: a 100,000-deep JSON object logs a RangeError and the next response is lost", async () => {
    const call = (id: number, args: string) =>
      `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"world_tools_file_read","arguments":${args}}}`
    const { replies, stderr } = await exchange(
      [
        initialize,
        initialized,
        // One taken by the direct road, one by effect/ai's, each followed by a request that must be answered.
        call(5, `{"path":"a.txt","x":${deep(100_000)}}`),
        JSON.stringify({ jsonrpc: "2.0", id: 6, method: "ping" }),
        `{"jsonrpc":"2.0","id":7,"method":"ping","params":{"x":${deep(100_000)}}}`,
        JSON.stringify({ jsonrpc: "2.0", id: 8, method: "ping" }),
        call(9, '{"path":"a.txt"}')
      ],
      6
    )
    for (const id of [5, 7]) {
      const error = byId(replies, id)[0]?.error as { code: number; message: string } | undefined
      assert.strictEqual(error?.code, -32600, JSON.stringify(replies))
      assert.match(error?.message ?? "", /nested deeper than \d+/)
    }
    assert.deepStrictEqual(byId(replies, 6)[0]?.result, {})
    assert.deepStrictEqual(byId(replies, 8)[0]?.result, {})
    assert.strictEqual((byId(replies, 9)[0]?.result as { isError?: boolean } | undefined)?.isError, false)
    assert.notInclude(stderr, "RangeError")
  }, 60_000)
})

describe("JSON-RPC on stdio: message size (issue 24, low)", () => {
  /** A stdio server and its replies, with lines written in pieces of `piece` bytes. */
  const start = (flags: ReadonlyArray<string> = []) => {
    const child = spawn(process.execPath, [fixtureServer, "--root", ws.root, "--trust", "L1", ...flags], {
      stdio: ["pipe", "pipe", "ignore"]
    })
    const replies: Array<Record<string, unknown>> = []
    createInterface({ input: child.stdout, crlfDelay: Number.POSITIVE_INFINITY }).on("line", (line) =>
      replies.push(JSON.parse(line))
    )
    const until = (found: () => boolean) =>
      new Promise<void>((resolve) => {
        const look = () => (found() ? resolve() : setTimeout(look, 5))
        look()
      })
    const send = async (line: string, piece = 65_536) => {
      for (let at = 0; at < line.length; at += piece) {
        if (!child.stdin.write(line.slice(at, at + piece))) {
          await new Promise((resolve) => child.stdin.once("drain", resolve))
        }
      }
      child.stdin.write("\n")
    }
    return { child, replies, until, send }
  }

  it("threat: a 50 MB file.write is read whole (quadratic reassembly, minutes of CPU) and accepted (no size cap)", async () => {
    const server = start()
    try {
      await server.send(initialize)
      await server.send(initialized)
      await server.until(() => server.replies.some((r) => r.id === 1))
      const before = cpuSeconds(server.child.pid!)
      const content = "x".repeat(50_000_000)
      const write = JSON.stringify({
        jsonrpc: "2.0",
        id: 5,
        method: "tools/call",
        params: { name: "world_tools_file_write", arguments: { path: "big.txt", content } }
      })
      await server.send(write)
      await server.send(JSON.stringify({ jsonrpc: "2.0", id: 6, method: "ping" }))
      await server.until(() => server.replies.some((r) => r.id === 6))
      const cpu = cpuSeconds(server.child.pid!) - before
      const error = byId(server.replies, null)[0]?.error as { code: number; message: string } | undefined
      assert.strictEqual(error?.code, -32600, JSON.stringify(server.replies).slice(0, 500))
      assert.match(error?.message ?? "", /larger than 4194304 bytes/)
      assert.strictEqual(byId(server.replies, 5).length, 0)
      assert.deepStrictEqual(byId(server.replies, 6)[0]?.result, {})
      assert.isFalse(existsSync(join(ws.root, "big.txt")))
      // Dropping what passes the cap costs next to nothing.
      assert.isBelow(cpu, 2, `${cpu} s of CPU`)
    } finally {
      server.child.kill()
    }
  }, 180_000)

  it("ugent mcp --max-message-bytes sets the cap", async () => {
    const child = spawn(process.execPath, [ugentBin, "mcp", "--root", ws.root, "--max-message-bytes", "1000"], {
      stdio: ["pipe", "pipe", "ignore"]
    })
    try {
      const replies: Array<Record<string, unknown>> = []
      const done = new Promise<void>((resolve) =>
        createInterface({ input: child.stdout }).on("line", (line) => {
          replies.push(JSON.parse(line))
          if (replies.length === 3) resolve()
        })
      )
      const ping = (id: number, pad: number) =>
        JSON.stringify({ jsonrpc: "2.0", id, method: "ping", params: { pad: "x".repeat(pad) } })
      child.stdin.write(`${initialize}\n${ping(2, 2000)}\n${ping(3, 10)}\n`)
      await done
      assert.match(
        (byId(replies, null)[0]?.error as { message: string } | undefined)?.message ?? "",
        /larger than 1000 bytes/
      )
      assert.deepStrictEqual(byId(replies, 3)[0]?.result, {})
    } finally {
      child.kill()
    }
  }, 60_000)

  it("reads a message up to a cap raised to its largest (16 MiB), in time linear in its length", async () => {
    const server = start(["--max-message-bytes", String(16 * 1024 * 1024)])
    try {
      await server.send(initialize)
      await server.until(() => server.replies.some((r) => r.id === 1))
      const before = cpuSeconds(server.child.pid!)
      const line = JSON.stringify({ jsonrpc: "2.0", id: 2, method: "ping", params: { pad: "x".repeat(16_000_000) } })
      await server.send(line, 16_384)
      await server.until(() => server.replies.some((r) => r.id === 2))
      const cpu = cpuSeconds(server.child.pid!) - before
      assert.deepStrictEqual(byId(server.replies, 2)[0]?.result, {})
      // Measured: 0.3 s of CPU here; joining the pieces anew on each chunk took 1.8 s, and grows with the square.
      assert.isBelow(cpu, 1, `${cpu} s of CPU`)
    } finally {
      server.child.kill()
    }
  }, 120_000)
})
