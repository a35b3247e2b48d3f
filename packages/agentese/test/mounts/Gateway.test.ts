/**
 * `ugent mcp --mount …` as a policy gateway in front of real MCP servers from
 * the registry, driven by the official SDK client as an MCP host would:
 * `@modelcontextprotocol/server-filesystem`, `server-memory` (mounted by a
 * recipe, with its own environment) and `server-everything` (over stdio, and
 * over streamable HTTP). Their tools are listed with their own schemas and
 * called through the road; plan mode refuses a foreign write; a foreign result
 * that carries a secret file is still audited, and no secret of ours reaches a
 * foreign server; a killed server is started again on the next call.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { type AddressInfo, createServer } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { DatabaseSync } from "node:sqlite"
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { repository, ugent } from "../cli/fixture.ts"
import { type CallResult, connect, failureOf, ugentBin } from "../mcp/fixtures/connect.ts"

const slow = { timeout: 120_000 }
const modules = join(repository, "node_modules", "@modelcontextprotocol")
const filesystem = join(modules, "server-filesystem", "dist", "index.js")
const memory = join(modules, "server-memory", "dist", "index.js")
const everything = join(modules, "server-everything", "dist", "index.js")

const secretKey = "p".repeat(48)
const secretApiKey = "sk-ant-api03-do-not-leak-this"

const freePort = () =>
  new Promise<number>((resolve) => {
    const server = createServer()
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo
      server.close(() => resolve(port))
    })
  })

/** server-everything over streamable HTTP on a free port, once it says it listens. */
const everythingOverHttp = async (): Promise<{ readonly url: string; readonly child: ChildProcess }> => {
  const port = await freePort()
  const child = spawn(process.execPath, [everything, "streamableHttp"], {
    env: { PATH: process.env.PATH ?? "", PORT: String(port) },
    stdio: ["ignore", "ignore", "pipe"]
  })
  await new Promise<void>((resolve, reject) => {
    let said = ""
    child.stderr!.setEncoding("utf8").on("data", (c: string) => {
      said += c
      if (said.includes("listening")) resolve()
    })
    child.once("exit", (code) => reject(new Error(`server-everything exited (${code}): ${said}`)))
  })
  return { url: `http://127.0.0.1:${port}/mcp`, child }
}

/** The processes whose parent is `pid` and whose command line names `name`. */
const childrenOf = (pid: number, name: string): ReadonlyArray<number> =>
  readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry))
    .flatMap((entry) => {
      try {
        const stat = readFileSync(`/proc/${entry}/stat`, "utf8")
        const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1])
        const cmdline = readFileSync(`/proc/${entry}/cmdline`, "utf8")
        return ppid === pid && cmdline.includes(name) ? [Number(entry)] : []
      } catch {
        return []
      }
    })

const waitFor = async (done: () => boolean, millis = 10_000) => {
  const until = Date.now() + millis
  while (!done()) {
    if (Date.now() > until) throw new Error("timed out waiting")
    await new Promise((r) => setTimeout(r, 25))
  }
}

const texts = (result: CallResult): string =>
  ((result.content as Array<{ type: string; text?: string }> | undefined) ?? []).map((c) => c.text ?? "").join("\n")

describe("ugent mcp --mount: a policy gateway in front of registry MCP servers", () => {
  const root = mkdtempSync(join(tmpdir(), "ugent-gateway-"))
  const outside = mkdtempSync(join(tmpdir(), "ugent-gateway-recipe-"))
  const memoryFile = join(outside, "memory.jsonl")
  let web: { readonly url: string; readonly child: ChildProcess }
  let transport: StdioClientTransport
  let client: Client

  beforeAll(async () => {
    writeFileSync(join(root, "notes.md"), "# notes\nalpha\n")
    writeFileSync(join(root, ".env"), "SECRET=shh-from-the-env-file\n")
    symlinkSync(".env", join(root, "config.txt"))
    writeFileSync(
      join(outside, "recipe.json"),
      JSON.stringify({
        mounts: { mem: { command: process.execPath, args: [memory], env: { MEMORY_FILE_PATH: memoryFile } } }
      })
    )
    web = await everythingOverHttp()
    transport = new StdioClientTransport({
      command: process.execPath,
      args: [
        ugentBin,
        "mcp",
        "--root",
        root,
        "--trust",
        "L3",
        "--audit-sync",
        "--recipe",
        join(outside, "recipe.json"),
        "--mount",
        `fs=${process.execPath} ${filesystem} ${root}`,
        "--mount",
        `every=${process.execPath} ${everything}`,
        "--mount",
        `web=${web.url}`
      ],
      env: { PATH: process.env.PATH ?? "", HOME: root, UGENT_PROOF_KEY: secretKey, ANTHROPIC_API_KEY: secretApiKey },
      stderr: "ignore"
    })
    client = await connect(transport)
  }, 120_000)

  afterAll(async () => {
    await client?.close()
    web?.child.kill()
    rmSync(root, { recursive: true, force: true })
    rmSync(outside, { recursive: true, force: true })
  })

  const call = async (name: string, args: Record<string, unknown> = {}) =>
    (await client.callTool({ name, arguments: args })) as CallResult

  it("lists every mounted server's tools beside ours, each with its server's own input schema", slow, async () => {
    const tools = new Map((await client.listTools()).tools.map((t) => [t.name, t]))
    for (const name of [
      "world_tools_file_read",
      "world_mcp_fs_read-text-file",
      "world_mcp_fs_write-file",
      "world_mcp_mem_create-entities",
      "world_mcp_mem_read-graph",
      "world_mcp_every_get-sum",
      "world_mcp_web_echo"
    ]) {
      assert.isTrue(tools.has(name), name)
    }
    // The schema the server itself lists, unchanged.
    const direct = await connect(
      new StdioClientTransport({ command: process.execPath, args: [everything], stderr: "ignore" })
    )
    try {
      const own = (await direct.listTools()).tools.find((t) => t.name === "get-sum")!
      assert.deepStrictEqual(tools.get("world_mcp_every_get-sum")!.inputSchema, own.inputSchema)
    } finally {
      await direct.close()
    }
    // Levels from the hints: a read L0, a destructive write L3.
    // L0 is not written: a tool lists its level in _meta only above L0.
    assert.isUndefined(tools.get("world_mcp_fs_read-text-file")!._meta?.["ugent/trust"])
    assert.strictEqual(tools.get("world_mcp_fs_write-file")!._meta?.["ugent/trust"], 3)
    assert.strictEqual(tools.get("world_mcp_mem_create-entities")!._meta?.["ugent/trust"], 2)
  })

  it("calls them through the road, over stdio and streamable HTTP, keeping their content types", slow, async () => {
    assert.include(texts(await call("world_mcp_fs_read-text-file", { path: join(root, "notes.md") })), "alpha")
    assert.strictEqual(texts(await call("world_mcp_every_get-sum", { a: 2, b: 3 })), "The sum of 2 and 3 is 5.")
    assert.include(texts(await call("world_mcp_web_echo", { message: "over http" })), "over http")
    const image = await call("world_mcp_every_get-tiny-image")
    const parts = image.content as Array<{ type: string; mimeType?: string }>
    assert.isTrue(parts.some((p) => p.type === "image" && p.mimeType === "image/png"))
    // The foreign server's own refusal of its input is the call's typed failure; ours keeps working.
    assert.strictEqual(failureOf(await call("world_mcp_every_get-sum", { a: "two" }))._tag, "MountToolFailed")
    assert.include(texts(await call("world_tools_file_read", { path: "notes.md" })), "alpha")
  })

  it("a long foreign call's progress reaches the client", slow, async () => {
    const heard: Array<readonly [number, number | undefined]> = []
    const result = (await client.callTool(
      { name: "world_mcp_every_trigger-long-running-operation", arguments: { duration: 0.2, steps: 4 } },
      undefined,
      { onprogress: (p) => heard.push([p.progress, p.total]) }
    )) as CallResult
    assert.include(texts(result), "Long running operation completed")
    // In order. The SDK client forgets a call when its result arrives, before it runs the handler of a notification
    // read in the same chunk: the last step is sometimes not heard, as with server-everything itself.
    const steps: Array<readonly [number, number | undefined]> = [
      // ugent says at once that a call to another server started.
      [0, undefined],
      [1, 4],
      [2, 4],
      [3, 4],
      [4, 4]
    ]
    assert.isAtLeast(heard.length, 4)
    assert.deepStrictEqual(heard, steps.slice(0, heard.length))
  })

  it("plan mode refuses a foreign write, and lets the foreign reads run", slow, async () => {
    const entity = { name: "tea", entityType: "drink", observations: ["green"] }
    assert.isFalse((await call("world_mcp_mem_create-entities", { entities: [entity] })).isError)
    const before = readFileSync(memoryFile, "utf8")
    await call("self_tools_mode_plan")
    try {
      const refused = await call("world_mcp_mem_create-entities", {
        entities: [{ name: "coffee", entityType: "drink", observations: [] }]
      })
      assert.strictEqual(failureOf(refused)._tag, "PlanMode")
      assert.strictEqual(
        failureOf(await call("world_mcp_fs_write-file", { path: join(root, "new.txt"), content: "x" }))._tag,
        "PlanMode"
      )
      assert.include(texts(await call("world_mcp_mem_read-graph")), "tea")
      assert.strictEqual(readFileSync(memoryFile, "utf8"), before)
    } finally {
      await call("self_tools_mode_execute")
    }
  })

  it(
    "a foreign result that carries a secret file is audited, and none of our secrets reaches a foreign server",
    slow,
    async () => {
      // Our rule refuses the name; a link to it is the foreign server's to follow, and the result is on record.
      assert.strictEqual(
        failureOf(await call("world_mcp_fs_read-text-file", { path: join(root, ".env") }))._tag,
        "Forbidden"
      )
      const linked = await call("world_mcp_fs_read-text-file", { path: join(root, "config.txt") })
      assert.include(texts(linked), "SECRET=shh-from-the-env-file")
      const env = texts(await call("world_mcp_every_get-env"))
      assert.include(env, "PATH")
      assert.notInclude(env, secretKey)
      assert.notInclude(env, secretApiKey)
      const db = new DatabaseSync(join(root, ".ugent", "ugent.db"), { readOnly: true })
      try {
        const rows = db
          .prepare("SELECT path, phase, status, input_summary, error_tag FROM ugent_audit ORDER BY at")
          .all() as Array<{
          path: string
          phase: string
          status: string
          input_summary: string
          error_tag: string | null
        }>
        const of = (path: string, phase: string, input: string) =>
          rows.filter((r) => r.path === path && r.phase === phase && r.input_summary.includes(input))
        assert.strictEqual(of("world.mcp.fs.read-text-file", "after", "config.txt")[0]?.status, "success")
        assert.strictEqual(of("world.mcp.fs.read-text-file", "after", ".env")[0]?.error_tag, "Forbidden")
        assert.strictEqual(of("world.mcp.every.get-env", "after", "")[0]?.status, "success")
        assert.isTrue(of("world.mcp.mem.create-entities", "before", "tea").length > 0)
      } finally {
        db.close()
      }
    }
  )

  it("a killed foreign server is started again on the next call", slow, async () => {
    const kettle = { name: "kettle", entityType: "thing", observations: ["steel"] }
    assert.isFalse((await call("world_mcp_mem_create-entities", { entities: [kettle] })).isError)
    const ugentPid = transport.pid!
    const [first] = childrenOf(ugentPid, "server-memory")
    assert.isDefined(first)
    process.kill(first!, "SIGKILL")
    // Gone: reaped by ugent, not only dead.
    await waitFor(() => !existsSync(`/proc/${first}`))
    const graph = await call("world_mcp_mem_read-graph")
    assert.isFalse(graph.isError, texts(graph))
    assert.include(texts(graph), "kettle")
    const [second] = childrenOf(ugentPid, "server-memory")
    assert.isDefined(second)
    assert.notStrictEqual(second, first)
  })
})

describe("ugent --mount: a mount that cannot be served is a usage error at start", () => {
  it("names the mount and what is wrong; exit code 2", slow, async () => {
    const root = mkdtempSync(join(tmpdir(), "ugent-gateway-bad-"))
    try {
      const missing = await ugent(["list", "--mount", `gone=${join(root, "no-such-server")}`], { cwd: root })
      assert.strictEqual(missing.code, 2)
      assert.match(
        missing.stderr,
        /The mount gone could not start: the command .*no-such-server was not found \(ENOENT\)/
      )
      const port = await freePort()
      const refused = await ugent(["list", "--mount", `web=http://127.0.0.1:${port}/mcp`], { cwd: root })
      assert.strictEqual(refused.code, 2)
      assert.match(refused.stderr, /The mount web could not start: .*ECONNREFUSED/)
      const malformed = await ugent(["list", "--mount", "Web=https://example.com/mcp"], { cwd: root })
      assert.strictEqual(malformed.code, 2)
      assert.match(malformed.stderr, /--mount: The mount "Web" has a name that is no path segment/)
    } finally {
      rmSync(root, { recursive: true, force: true })
    }
  })
})
