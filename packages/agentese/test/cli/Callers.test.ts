/**
 * Several callers on one `ugent serve`: each named by its bearer token, each
 * with its own trust level and rate limits from one callers file, on the JSON
 * API and the MCP endpoint.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { createHash } from "node:crypto"
import { existsSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { bin, exited, ugent, workspace } from "./fixture.ts"

const studentToken = "student-token-0123456789abcdef"
const teacherToken = "teacher-token-0123456789abcdef"
const sha256 = (s: string) => createHash("sha256").update(s).digest("hex")

/** Starts `ugent serve` with `env` and resolves with its URL and everything it printed so far. */
const serve = (args: ReadonlyArray<string>, cwd: string, env: Record<string, string>) => {
  const child: ChildProcess = spawn(process.execPath, [bin, "serve", "--port", "0", "--stores", "memory", ...args], {
    cwd,
    env: { ...process.env, NO_COLOR: "1", ...env }
  })
  let stderr = ""
  const url = new Promise<string>((resolve, reject) => {
    child.stderr!.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk
      const m = /serving (http:\/\/\S+) /.exec(stderr)
      if (m !== null && stderr.includes("callers by their tokens")) resolve(m[1]!)
    })
    child.on("exit", (code) => reject(new Error(`ugent serve exited with ${code}: ${stderr}`)))
  })
  return { child, url, stderr: () => stderr }
}

const roomFile = (root: string) => {
  const file = join(root, "callers.json")
  writeFileSync(
    file,
    JSON.stringify({
      callers: [
        { id: "student", trust: "L0", tokenEnv: "STUDENT_TOKEN", rateLimits: { perMinute: 2 } },
        { id: "teacher", trust: "L1", tokenSha256: sha256(teacherToken), rateLimits: { perMinute: 20 } }
      ]
    })
  )
  return file
}

const mcpHeaders = { "content-type": "application/json", accept: "application/json" }
const initialize = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "test", version: "0" } }
}

describe("ugent serve --callers", () => {
  it("two callers on one server: each its own trust level and rate limit, named by its token", async () => {
    const root = workspace()
    const { child, url: served, stderr } = serve(["--callers", roomFile(root)], root, { STUDENT_TOKEN: studentToken })
    try {
      const url = await served
      const call = (token: string | undefined, path: string, input: unknown) =>
        fetch(`${url}/v1/invoke/${path}`, {
          method: "POST",
          headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
          body: JSON.stringify(input)
        })

      // Without a caller's token nobody calls.
      assert.strictEqual((await call(undefined, "world.tools.file.read", { path: "a.txt" })).status, 401)
      assert.strictEqual(
        (await call("not-a-caller-token-000000", "world.tools.file.read", { path: "a.txt" })).status,
        401
      )

      // The teacher listens to the event stream: its own calls only, each with its input, level and result in a sentence.
      const listening = new AbortController()
      const stream = await fetch(`${url}/v1/events`, {
        headers: { authorization: `Bearer ${teacherToken}` },
        signal: listening.signal
      })
      const reader = stream.body!.getReader()
      let heard = ""
      const hearing = (async () => {
        while (!heard.includes("world.tools.file.write")) {
          const { value, done } = await reader.read()
          if (done) break
          heard += new TextDecoder().decode(value)
        }
      })()

      // The student at 2/min is refused on its third call; the teacher at 20/min is not.
      const student = []
      for (let i = 0; i < 3; i++) student.push(await call(studentToken, "world.tools.file.read", { path: "a.txt" }))
      assert.deepStrictEqual(
        student.map((r) => r.status),
        [200, 200, 429]
      )
      const refused = (await student[2]!.json()) as { error: { _tag: string } }
      assert.strictEqual(refused.error._tag, "RateLimited")
      const teacher = []
      for (let i = 0; i < 3; i++) teacher.push(await call(teacherToken, "world.tools.file.read", { path: "a.txt" }))
      assert.deepStrictEqual(
        teacher.map((r) => r.status),
        [200, 200, 200]
      )

      // Their levels: the student (L0) may not write, the teacher (L1) may.
      const teacherWrite = await call(teacherToken, "world.tools.file.write", { path: "t.txt", content: "t\n" })
      assert.strictEqual(teacherWrite.status, 200, await teacherWrite.clone().text())
      assert.isTrue(existsSync(join(root, "t.txt")))
      await hearing
      listening.abort()
      const events = [...heard.matchAll(/^data: (.*)$/gm)].map((m) => JSON.parse(m[1]!) as Record<string, unknown>)
      assert.deepStrictEqual([...new Set(events.map((e) => e.observerId))], ["teacher"])
      const invoked = events.find((e) => e._tag === "tool.invoked")!
      assert.strictEqual(invoked.input, '{"path":"a.txt"}')
      assert.strictEqual(invoked.trust, 1)
      const completed = events.find((e) => e._tag === "tool.completed")!
      assert.strictEqual(completed.resultSummary, "Read 2 lines from a.txt (lines 1-2 of 2)")
      assert.isAbove(completed.estimatedTokens as number, 0)
      assert.strictEqual(completed.trust, 1)

      // The MCP endpoint: the same callers, each its own tools; a session is its opener's only.
      const open = async (token: string) => {
        const init = await fetch(`${url}/mcp`, {
          method: "POST",
          headers: { ...mcpHeaders, authorization: `Bearer ${token}` },
          body: JSON.stringify(initialize)
        })
        assert.strictEqual(init.status, 200)
        return init.headers.get("mcp-session-id")!
      }
      const tools = async (token: string, session: string) => {
        const list = await fetch(`${url}/mcp`, {
          method: "POST",
          headers: { ...mcpHeaders, authorization: `Bearer ${token}`, "mcp-session-id": session },
          body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list", params: {} })
        })
        return list.status === 200
          ? ((await list.json()) as { result: { tools: Array<{ name: string }> } }).result.tools.map((t) => t.name)
          : list.status
      }
      const studentSession = await open(studentToken)
      const teacherSession = await open(teacherToken)
      const studentTools = (await tools(studentToken, studentSession)) as Array<string>
      const teacherTools = (await tools(teacherToken, teacherSession)) as Array<string>
      assert.include(studentTools, "world_tools_file_read")
      assert.notInclude(studentTools, "world_tools_file_write")
      assert.include(teacherTools, "world_tools_file_write")
      // The student's token on the teacher's session finds no session: an id lends no rights.
      assert.strictEqual(await tools(studentToken, teacherSession), 404)

      // Each asks for its own figures: the teacher through the self.tools.stats tool on MCP, the student on /v1/stats.
      const asked = await fetch(`${url}/mcp`, {
        method: "POST",
        headers: { ...mcpHeaders, authorization: `Bearer ${teacherToken}`, "mcp-session-id": teacherSession },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 3,
          method: "tools/call",
          params: { name: "self_tools_stats", arguments: {} }
        })
      })
      const mine = ((await asked.json()) as { result: { structuredContent: Record<string, unknown> } }).result
        .structuredContent as {
        observerId: string
        calls: number
        byTool: Array<{ path: string; calls: number }>
        limits: string
      }
      assert.strictEqual(mine.observerId, "teacher")
      assert.strictEqual(mine.calls, 4)
      assert.deepStrictEqual(
        mine.byTool.map((t) => [t.path, t.calls]),
        [
          ["world.tools.file.read", 3],
          ["world.tools.file.write", 1]
        ]
      )
      assert.match(mine.limits, /per caller 20\/min/)
      const studentStats = (await (
        await fetch(`${url}/v1/stats`, { headers: { authorization: `Bearer ${studentToken}` } })
      ).json()) as {
        analytics: {
          byObserver: Array<{ key: string }>
          byObserverTool: Array<{
            observerId: string
            path: string
            calls: number
            successes: number
            failures: number
            refusals: number
          }>
          failures: Array<{ reason: string; count: number }>
        }
        settings: { caller: Array<string> }
      }
      assert.deepStrictEqual(
        studentStats.analytics.byObserver.map((o) => o.key),
        ["student"]
      )
      assert.deepStrictEqual(studentStats.analytics.byObserverTool, [
        { observerId: "student", path: "world.tools.file.read", calls: 3, successes: 2, failures: 1, refusals: 1 }
      ])
      assert.deepStrictEqual(
        studentStats.analytics.failures.map((f) => [f.reason, f.count]),
        [["RateLimited", 1]]
      )
      assert.deepStrictEqual(studentStats.settings.caller, ["2/min"])

      // No token is ever printed.
      assert.notInclude(stderr(), studentToken)
      assert.notInclude(stderr(), teacherToken)
      assert.match(stderr(), /callers by their tokens: student \(L0, 2\/min\), teacher \(L1, 20\/min\)/)
    } finally {
      child.kill("SIGTERM")
    }
    assert.strictEqual(await exited(child), 0)
  })

  it("several projects on one server: each caller's root is a jail of its own, and .env is refused in both", async () => {
    const root = workspace()
    const web = workspace({ "a.txt": "web\n", ".env": "SECRET=web\n" })
    const api = workspace({ "a.txt": "api\n", ".env": "SECRET=api\n" })
    writeFileSync(
      join(root, "callers.json"),
      JSON.stringify({
        callers: [
          { id: "web-agent", trust: "L1", tokenEnv: "STUDENT_TOKEN", root: web },
          { id: "api-agent", trust: "L1", tokenSha256: sha256(teacherToken), root: api }
        ]
      })
    )
    const { child, url: served } = serve(["--callers", join(root, "callers.json")], root, {
      STUDENT_TOKEN: studentToken
    })
    try {
      const url = await served
      const call = async (token: string, path: string, input: unknown) => {
        const response = await fetch(`${url}/v1/invoke/${path}`, {
          method: "POST",
          headers: { authorization: `Bearer ${token}` },
          body: JSON.stringify(input)
        })
        return { status: response.status, body: (await response.json()) as { result?: { content?: string } } }
      }
      // Each reads its own project's a.txt.
      assert.strictEqual(
        (await call(studentToken, "world.tools.file.read", { path: "a.txt" })).body.result?.content,
        "1\tweb"
      )
      assert.strictEqual(
        (await call(teacherToken, "world.tools.file.read", { path: "a.txt" })).body.result?.content,
        "1\tapi"
      )
      // Neither reaches the other's, by a relative or an absolute path.
      for (const path of [join(api, "a.txt"), `../${api.split("/").at(-1)}/a.txt`]) {
        const out = await call(studentToken, "world.tools.file.read", { path })
        assert.strictEqual(out.status, 403, JSON.stringify(out.body))
      }
      // .env is refused in both jails.
      for (const token of [studentToken, teacherToken]) {
        const secret = await call(token, "world.tools.file.read", { path: ".env" })
        assert.strictEqual(secret.status, 403, JSON.stringify(secret.body))
        assert.notInclude(JSON.stringify(secret.body), "SECRET=")
      }
      // A write lands in the writer's project only; the listing is its project's.
      assert.strictEqual(
        (await call(teacherToken, "world.tools.file.write", { path: "new.txt", content: "x\n" })).status,
        200
      )
      assert.isTrue(existsSync(join(api, "new.txt")))
      assert.isFalse(existsSync(join(web, "new.txt")))
      assert.isFalse(existsSync(join(root, "new.txt")))
      // On MCP too: the session's road is its caller's project.
      const init = await fetch(`${url}/mcp`, {
        method: "POST",
        headers: { ...mcpHeaders, authorization: `Bearer ${studentToken}` },
        body: JSON.stringify(initialize)
      })
      const session = init.headers.get("mcp-session-id")!
      const read = await fetch(`${url}/mcp`, {
        method: "POST",
        headers: { ...mcpHeaders, authorization: `Bearer ${studentToken}`, "mcp-session-id": session },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 2,
          method: "tools/call",
          params: { name: "world_tools_file_read", arguments: { path: "a.txt" } }
        })
      })
      assert.include(JSON.stringify(await read.json()), "web")
    } finally {
      child.kill("SIGTERM")
    }
    assert.strictEqual(await exited(child), 0)
  })

  it("a callers file with a plain token, a weak token or a token twice does not start the server", async () => {
    const root = workspace()
    const write = (callers: unknown) => {
      writeFileSync(join(root, "callers.json"), JSON.stringify({ callers }))
      return ugent(["serve", "--port", "0", "--stores", "memory", "--callers", "callers.json"], {
        cwd: root,
        env: { WEAK: "short" }
      })
    }
    const plain = await write([{ id: "a", token: "in-the-file-0123456789" }])
    assert.strictEqual(plain.code, 2)
    assert.match(plain.stderr, /write its SHA-256 as tokenSha256/)
    assert.notInclude(plain.stderr, "in-the-file-0123456789")
    const weak = await write([{ id: "a", tokenEnv: "WEAK" }])
    assert.strictEqual(weak.code, 2)
    assert.match(weak.stderr, /shorter than 16 characters/)
    const twice = await write([
      { id: "a", tokenSha256: sha256(teacherToken) },
      { id: "b", tokenSha256: sha256(teacherToken) }
    ])
    assert.strictEqual(twice.code, 2)
    assert.match(twice.stderr, /caller b has the token of caller a/)
  })
})
