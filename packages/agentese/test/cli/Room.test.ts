/**
 * A room of three `ugent serve` on one workspace, sharing PostgreSQL (audit,
 * traces, tasks) and Redis (limits, breakers, session state), behind a
 * round-robin load balancer of the test's own. One MCP streamable-HTTP
 * session and one HTTP caller are driven across the instances, and one
 * instance is killed on the way. Without the servers (UGENT_PG_URL,
 * UGENT_REDIS_URL unset) the suite skips and says so, except under CI.
 */
import { spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import { existsSync, readFileSync, writeFileSync } from "node:fs"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { join } from "node:path"
import { PgClient } from "@effect/sql-pg"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { bin, exited, onlyJson, ugent, workspace } from "./fixture.ts"

const pg = process.env.UGENT_PG_URL
const redis = process.env.UGENT_REDIS_URL
const ci = process.env.CI !== undefined && process.env.CI !== "" && process.env.CI !== "false"
const missing = [pg === undefined ? "UGENT_PG_URL" : undefined, redis === undefined ? "UGENT_REDIS_URL" : undefined]
  .filter((v) => v !== undefined)
  .join(" and ")
const skip = missing !== "" && !ci
if (skip) console.warn(`room tests: skipped: ${missing} not set (run .ci/services.sh)`)
const skipped = skip ? ` (skipped: ${missing} not set)` : ""

/** Starts `ugent serve` with its environment; resolves with its URL once it serves, or rejects with its stderr. */
const serve = (args: ReadonlyArray<string>, cwd: string, env: Record<string, string>) => {
  const child = spawn(process.execPath, [bin, "serve", "--port", "0", ...args], {
    cwd,
    env: { ...process.env, NO_COLOR: "1", ...env }
  })
  let stderr = ""
  const url = new Promise<string>((resolve, reject) => {
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk
      const m = /serving (http:\/\/\S+) /.exec(stderr)
      if (m !== null) resolve(m[1]!)
    })
    child.on("exit", (code) => reject(new Error(`ugent serve exited with ${code}: ${stderr}`)))
  })
  return { child, url, stderr: () => stderr }
}

/**
 * The load balancer: each request goes to the next instance in turn; an
 * instance that refuses the connection is skipped (the request never reached
 * it) and left out from then on. The instance that answered is named in
 * `x-room-backend`.
 */
const balancer = async (backends: ReadonlyArray<{ readonly name: string; readonly url: string }>) => {
  const alive = backends.map(() => true)
  let next = 0
  const server: Server = createServer((request, response) => {
    const chunks: Array<Buffer> = []
    request.on("data", (c: Buffer) => chunks.push(c))
    request.on("end", async () => {
      const body = Buffer.concat(chunks)
      for (let tried = 0; tried < backends.length; tried++) {
        const i = next++ % backends.length
        if (!alive[i]) continue
        const backend = backends[i]!
        let answer: Response
        try {
          answer = await fetch(`${backend.url}${request.url}`, {
            method: request.method ?? "GET",
            headers: Object.fromEntries(
              Object.entries(request.headers).filter(
                (e): e is [string, string] => typeof e[1] === "string" && e[0] !== "host" && e[0] !== "content-length"
              )
            ),
            ...(body.length > 0 ? { body } : {})
          })
        } catch {
          alive[i] = false
          continue
        }
        const headers: Record<string, string> = { "x-room-backend": backend.name }
        answer.headers.forEach((v, k) => {
          if (k !== "content-length" && k !== "transfer-encoding" && k !== "connection") headers[k] = v
        })
        response.writeHead(answer.status, headers)
        response.end(Buffer.from(await answer.arrayBuffer()))
        return
      }
      response.writeHead(502).end("no instance answers")
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    /** The instance the next request goes to, when every instance lives. */
    next: () => backends[next % backends.length]!.name,
    close: () => new Promise<void>((r) => server.close(() => r()))
  }
}

/** The reply of a POST: its JSON, or the last message of its event stream (a call's reply comes after its progress). */
interface CallResult {
  readonly isError: boolean
  readonly content: ReadonlyArray<{ readonly text: string }>
  readonly structuredContent?: { readonly tasks: ReadonlyArray<{ readonly title: string }> }
}
interface Reply {
  readonly result: CallResult
}
interface Invoked {
  readonly result: { readonly proof: string }
  readonly error: { readonly _tag: string }
}

const replyOf = (text: string): Reply => {
  if (!text.startsWith("event:")) return JSON.parse(text)
  const data = text.split("\n").filter((line) => line.startsWith("data: "))
  return JSON.parse(data.at(-1)!.slice("data: ".length))
}

const mcpHeaders = { "content-type": "application/json", accept: "application/json, text/event-stream" }

describe("a room of three ugent serve", () => {
  it.skipIf(skip)(
    `serves one MCP session and one HTTP caller across the instances, through the death of one${skipped}`,
    { timeout: 240_000 },
    async () => {
      const root = workspace({ "notes.txt": "one\ntwo\n" })
      const id = `t${Date.now().toString(36)}${randomBytes(3).toString("hex")}`
      const names = ["a", "b", "c"].map((n) => `${id}-${n}`)
      const approver = randomBytes(16).toString("hex")
      const env = { UGENT_PROOF_KEY: randomBytes(32).toString("hex"), UGENT_APPROVER_TOKEN: approver }
      // Writes wait for a person's approval: one asked on one instance is answered on another.
      const recipe = join(root, ".ugent-room-recipe.json")
      writeFileSync(recipe, JSON.stringify({ requireApproval: ["world.tools.file.write"] }))
      const common = [
        "--recipe",
        recipe,
        "--stores",
        pg!,
        "--redis",
        redis!,
        "--room",
        id,
        "--trust",
        "L1",
        "--audit-sync",
        "--loop",
        "off",
        "--rate-tool",
        "world.tools.file.list=5/min"
      ]
      const instances = names.map((name) => serve([...common, "--instance", name], root, env))
      let lb: Awaited<ReturnType<typeof balancer>> | undefined
      try {
        const urls = await Promise.all(instances.map((i) => i.url))
        lb = await balancer(names.map((name, i) => ({ name, url: urls[i]! })))
        const at = lb.url

        // Every acknowledged call, by who served it: each must have its audit record.
        const served: Array<string> = []
        const mcp = async (sessionId: string | undefined, body: unknown) => {
          const response = await fetch(`${at}/mcp`, {
            method: "POST",
            headers: {
              ...mcpHeaders,
              ...(sessionId === undefined ? {} : { "mcp-session-id": sessionId, "mcp-protocol-version": "2025-11-25" })
            },
            body: JSON.stringify(body)
          })
          const backend = response.headers.get("x-room-backend")!
          return { response, backend, json: response.status === 202 ? undefined : replyOf(await response.text()) }
        }
        let nextId = 10
        const call = async (sessionId: string, name: string, args: Record<string, unknown>) => {
          const { backend, json, response } = await mcp(sessionId, {
            jsonrpc: "2.0",
            id: nextId++,
            method: "tools/call",
            params: { name, arguments: args }
          })
          assert.strictEqual(response.status, 200, JSON.stringify(json))
          served.push(backend)
          return {
            backend,
            result: json!.result
          }
        }
        const invoke = async (path: string, input: Record<string, unknown>) => {
          const response = await fetch(`${at}/v1/invoke/${path}`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify(input)
          })
          const backend = response.headers.get("x-room-backend")!
          served.push(backend)
          return { backend, status: response.status, json: (await response.json()) as Invoked }
        }

        // The MCP session is opened on one instance…
        const init = await mcp(undefined, {
          jsonrpc: "2.0",
          id: 1,
          method: "initialize",
          params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "room-test", version: "0" } }
        })
        assert.strictEqual(init.response.status, 200)
        const session = init.response.headers.get("mcp-session-id")!
        assert.isString(session)
        await mcp(session, { jsonrpc: "2.0", method: "notifications/initialized" })

        // …a file is read on one, edited without a token on another.
        const read = await call(session, "world_tools_file_read", { path: "a.txt" })
        assert.isFalse(read.result.isError, read.result.content[0]!.text)
        const edit = await call(session, "world_tools_file_edit", { path: "a.txt", oldText: "alpha", newText: "ALPHA" })
        assert.notStrictEqual(edit.backend, read.backend)
        assert.isFalse(edit.result.isError, edit.result.content[0]!.text)
        assert.strictEqual(readFileSync(join(root, "a.txt"), "utf8"), "ALPHA\nbeta\n")

        // Plan mode set on a third, honoured on the first.
        const plan = await call(session, "self_tools_mode_plan", {})
        assert.isFalse(plan.result.isError)
        assert.sameMembers([read.backend, edit.backend, plan.backend], names)
        const refused = await call(session, "world_tools_file_edit", {
          path: "a.txt",
          oldText: "beta",
          newText: "BETA"
        })
        assert.strictEqual(refused.backend, read.backend)
        assert.isTrue(refused.result.isError)
        assert.match(refused.result.content[0]!.text, /^PlanMode/)
        const execute = await call(session, "self_tools_mode_execute", {})
        assert.isFalse(execute.result.isError)

        // A task made on one instance is listed on the next (tasks are in PostgreSQL).
        const task = await call(session, "self_tools_task_create", { title: "ship the room" })
        const tasks = await call(session, "self_tools_task_list", {})
        assert.notStrictEqual(tasks.backend, task.backend)
        assert.deepStrictEqual(
          tasks.result.structuredContent!.tasks.map((t: { title: string }) => t.title),
          ["ship the room"]
        )

        // The HTTP caller: a proof printed by one instance is accepted by another; its plan mode is the room's.
        const httpRead = await invoke("world.tools.file.read", { path: "notes.txt" })
        assert.strictEqual(httpRead.status, 200)
        // The write waits for approval on the instance it reached; a person answers it on another instance.
        const asker = lb.next()
        const writing = invoke("world.tools.file.write", {
          path: "notes.txt",
          content: "three\n",
          proof: httpRead.json.result.proof
        })
        const other = names.findIndex((n) => n !== asker)
        const operator = { authorization: `Bearer ${approver}`, "content-type": "application/json" }
        let asked: { readonly id: string } | undefined
        for (let n = 0; n < 100 && asked === undefined; n++) {
          const listed = await fetch(`${urls[other]}/v1/pending`, { headers: operator })
          const body = (await listed.json()) as {
            questions: Array<{ id: string; path?: string; input?: { path?: string; content?: string } }>
          }
          asked = body.questions.find(
            (q) => q.path === "world.tools.file.write" && q.input?.path === "notes.txt" && q.input.content === "three\n"
          )
          if (asked === undefined) await new Promise((resolve) => setTimeout(resolve, 100))
        }
        assert.isDefined(asked, "the request reached the other instance's /v1/pending")
        const answered = await fetch(`${urls[other]}/v1/pending/${asked!.id}`, {
          method: "POST",
          headers: operator,
          body: JSON.stringify({ answer: "approve" })
        })
        const answeredBody = await answered.text()
        assert.strictEqual(answered.status, 200, answeredBody)
        const httpWrite = await writing
        assert.strictEqual(httpWrite.backend, asker, `${JSON.stringify(asked)} ${answeredBody} ${names[other]}`)
        assert.notStrictEqual(names[other], asker)
        assert.notStrictEqual(httpWrite.backend, httpRead.backend)
        assert.strictEqual(
          httpWrite.status,
          200,
          `${JSON.stringify(httpWrite.json)} asked ${JSON.stringify(asked)} answered ${answeredBody} on ${names[other]}`
        )
        assert.strictEqual(readFileSync(join(root, "notes.txt"), "utf8"), "three\n")
        const httpPlan = await invoke("self.tools.mode.plan", {})
        assert.strictEqual(httpPlan.status, 200)
        const httpRefused = await invoke("world.tools.file.write", {
          path: "notes.txt",
          content: "four\n",
          proof: httpWrite.json.result.proof
        })
        assert.notStrictEqual(httpRefused.backend, httpPlan.backend)
        assert.strictEqual(httpRefused.json.error._tag, "PlanMode")
        assert.strictEqual((await invoke("self.tools.mode.execute", {})).status, 200)

        // The limit (5 a minute) holds across the room: nine calls spread over three instances, five run (six if
        // the calls took over 12 s, a refill); limits kept per instance would have run all nine.
        const listed = []
        for (let n = 0; n < 9; n++) listed.push(await invoke("world.tools.file.list", {}))
        assert.sameMembers([...new Set(listed.map((l) => l.backend))], names)
        const ran = listed.filter((l) => l.status === 200).length
        assert.isAtLeast(ran, 5)
        assert.isAtMost(ran, 6)
        assert.strictEqual(listed.filter((l) => l.status === 429).length, 9 - ran)

        // One instance dies; the session goes on on the others, its proofs and tasks with it.
        const victim = instances[1]!
        victim.child.kill("SIGKILL")
        await exited(victim.child)
        const after: Array<string> = []
        for (const path of ["a.txt", "b.md"]) {
          const r = await call(session, "world_tools_file_read", { path })
          assert.isFalse(r.result.isError)
          after.push(r.backend)
        }
        const lastEdit = await call(session, "world_tools_file_edit", { path: "b.md", oldText: "# b", newText: "# B" })
        assert.isFalse(lastEdit.result.isError, lastEdit.result.content[0]!.text)
        assert.strictEqual(readFileSync(join(root, "b.md"), "utf8"), "# B\n")
        const still = await call(session, "self_tools_task_list", {})
        assert.strictEqual(still.result.structuredContent!.tasks.length, 1)
        after.push(lastEdit.backend, still.backend)
        assert.notInclude(after, names[1])
        assert.sameMembers([...new Set(after)], [names[0]!, names[2]!])

        // Every acknowledged call has its audit record, under the instance that served it.
        const stats = await ugent(["stats", "--stores", pg!, "--since", "30m", "--json"], { cwd: root })
        assert.strictEqual(stats.code, 0, stats.stderr)
        const byInstance = (onlyJson(stats).byInstance ?? []) as Array<{ key: string; calls: number }>
        const audited = Object.fromEntries(byInstance.filter((s) => names.includes(s.key)).map((s) => [s.key, s.calls]))
        const acknowledged: Record<string, number> = {}
        for (const name of served) acknowledged[name] = (acknowledged[name] ?? 0) + 1
        assert.deepStrictEqual(audited, acknowledged)
        // The traces name their instance too (written behind: the killed instance may have lost its last ones).
        const traced = await Effect.runPromise(
          Effect.scoped(
            Effect.gen(function* () {
              const sql = yield* SqlClient.SqlClient
              return yield* sql<{ instance: string; n: number }>`SELECT instance, CAST(COUNT(*) AS INTEGER) AS n
                FROM ugent_traces WHERE instance IN ${sql.in([names[0]!, names[2]!])} GROUP BY instance`
            }).pipe(Effect.provide(PgClient.layer({ url: Redacted.make(pg!) })))
          )
        )
        assert.deepStrictEqual(Object.fromEntries(traced.map((r) => [r.instance, Number(r.n)])), {
          [names[0]!]: acknowledged[names[0]!],
          [names[2]!]: acknowledged[names[2]!]
        })
        const table = await ugent(["stats", "--stores", pg!, "--since", "30m"], { cwd: root })
        assert.match(table.stdout, new RegExp(`By instance:[\\s\\S]*${names[1]}`))

        // Deleting the session on one instance ends it on all (within the second an instance trusts its last lookup).
        const deleted = await fetch(`${at}/mcp`, { method: "DELETE", headers: { "mcp-session-id": session } })
        assert.strictEqual(deleted.status, 204)
        await new Promise((resolve) => setTimeout(resolve, 1100))
        for (let n = 0; n < 2; n++) {
          const gone = await mcp(session, { jsonrpc: "2.0", id: nextId++, method: "tools/list", params: {} })
          assert.strictEqual(gone.response.status, 404)
        }

        // An instance with another proof key is refused at start, the difference named.
        const stranger = serve([...common, "--instance", `${id}-x`], root, {
          UGENT_PROOF_KEY: randomBytes(32).toString("hex")
        })
        const refusal = await stranger.url.then(
          () => "",
          (e: Error) => e.message
        )
        assert.match(refusal, /exited with 2/)
        assert.match(refusal, new RegExp(`the room ${id}: this instance's proof key differs from the room's`))
      } finally {
        await lb?.close()
        for (const i of instances) i.child.kill("SIGTERM")
        await Promise.all(
          instances.map((i) => (i.child.exitCode === null && i.child.signalCode === null ? exited(i.child) : undefined))
        )
      }
    }
  )
  it.skipIf(skip)(
    `threat: a room whose Redis stops answering refuses the session's requests with 503 and edits in plan mode, on every instance${skipped}`,
    { timeout: 120_000 },
    async () => {
      const root = workspace()
      // A Redis of the test's own, so that stopping it touches no other test.
      const port = 20_000 + Math.floor(Math.random() * 20_000)
      const redisServer = spawn("redis-server", ["--port", String(port), "--save", "", "--appendonly", "no"], {
        stdio: "ignore"
      })
      const id = `t${Date.now().toString(36)}${randomBytes(3).toString("hex")}`
      const env = { UGENT_PROOF_KEY: randomBytes(32).toString("hex") }
      const args = (name: string) => [
        "--stores",
        "memory",
        "--redis",
        `redis://127.0.0.1:${port}`,
        "--room",
        id,
        "--trust",
        "L1",
        "--on-store-error",
        "fail",
        "--instance",
        name
      ]
      await new Promise((resolve) => setTimeout(resolve, 500))
      const instances = [serve(args(`${id}-a`), root, env), serve(args(`${id}-b`), root, env)]
      try {
        const urls = await Promise.all(instances.map((i) => i.url))
        const init = await fetch(`${urls[0]}/mcp`, {
          method: "POST",
          headers: mcpHeaders,
          body: JSON.stringify({
            jsonrpc: "2.0",
            id: 1,
            method: "initialize",
            params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "t", version: "0" } }
          })
        })
        const session = init.headers.get("mcp-session-id")!
        const plan = await fetch(`${urls[1]}/v1/invoke/self.tools.mode.plan`, { method: "POST", body: "{}" })
        assert.strictEqual(plan.status, 200)
        redisServer.kill("SIGKILL")
        await exited(redisServer)
        // The other instance has never seen the session: it cannot tell it lives, and says so.
        const call = await fetch(`${urls[1]}/mcp`, {
          method: "POST",
          headers: { ...mcpHeaders, "mcp-session-id": session, "mcp-protocol-version": "2025-11-25" },
          body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list", params: {} })
        })
        assert.strictEqual(call.status, 503)
        assert.strictEqual(call.headers.get("retry-after"), "1")
        assert.match(
          ((await call.json()) as { error: { message: string } }).error.message,
          /session store did not answer/
        )
        // Plan mode cannot be read: with --on-store-error fail, a write is refused on either instance.
        for (const url of urls) {
          const write = await fetch(`${url}/v1/invoke/world.tools.file.write`, {
            method: "POST",
            body: JSON.stringify({ path: "new.txt", content: "x" })
          })
          assert.strictEqual(write.status, 503)
          assert.strictEqual(((await write.json()) as Invoked).error._tag, "SessionStoreUnavailable")
        }
        assert.isFalse(existsSync(join(root, "new.txt")))
      } finally {
        redisServer.kill("SIGKILL")
        for (const i of instances) i.child.kill("SIGTERM")
        await Promise.all(instances.map((i) => (i.child.exitCode === null ? exited(i.child) : undefined)))
      }
    }
  )
  it.skipIf(skip)(
    `threat: in a room, an answer to one instance's question cannot answer another instance's question of the same session${skipped}`,
    { timeout: 120_000 },
    async () => {
      const root = workspace()
      const id = `t${Date.now().toString(36)}${randomBytes(3).toString("hex")}`
      const env = { UGENT_PROOF_KEY: randomBytes(32).toString("hex") }
      const args = (name: string) => ["--stores", "memory", "--redis", redis!, "--room", id, "--instance", name]
      const instances = [serve(args(`${id}-a`), root, env), serve(args(`${id}-b`), root, env)]
      try {
        const [a, b] = await Promise.all(instances.map((i) => i.url))
        const post = (url: string, session: string | undefined, body: unknown) =>
          fetch(`${url}/mcp`, {
            method: "POST",
            headers: {
              ...mcpHeaders,
              ...(session === undefined ? {} : { "mcp-session-id": session, "mcp-protocol-version": "2025-11-25" })
            },
            body: JSON.stringify(body)
          })
        const init = await post(a!, undefined, {
          jsonrpc: "2.0",
          id: 1,
          method: "initialize",
          params: {
            protocolVersion: "2025-11-25",
            capabilities: { elicitation: {} },
            clientInfo: { name: "t", version: "0" }
          }
        })
        const session = init.headers.get("mcp-session-id")!
        await post(a!, session, { jsonrpc: "2.0", method: "notifications/initialized" })
        /** A call's event stream: the messages as they come, the question first. */
        const ask = async (url: string, callId: number, question: string) => {
          const response = await post(url, session, {
            jsonrpc: "2.0",
            id: callId,
            method: "tools/call",
            params: { name: "self_tools_clarify", arguments: { question, timeoutSeconds: 20 } }
          })
          const reader = response.body!.getReader()
          let text = ""
          const next = async (): Promise<Record<string, unknown>> => {
            for (;;) {
              const end = text.indexOf("\n\n")
              if (end !== -1) {
                const event = text.slice(0, end)
                text = text.slice(end + 2)
                const data = event.split("\n").find((line) => line.startsWith("data: "))
                if (data !== undefined) return JSON.parse(data.slice("data: ".length)) as Record<string, unknown>
                continue
              }
              const { value, done } = await reader.read()
              if (done) throw new Error(`the stream ended: ${text}`)
              text += new TextDecoder().decode(value)
            }
          }
          const asked = await next()
          assert.strictEqual(asked.method, "elicitation/create")
          return { question: asked.id as string, next }
        }
        const onA = await ask(a!, 10, "Which colour, A?")
        const onB = await ask(b!, 11, "Which colour, B?")
        assert.notStrictEqual(onA.question, onB.question)
        // B's answer reaches A (a balancer's turn): it answers nothing there; A's own answer then does.
        const answer = (question: string, text: string) =>
          post(a!, session, { jsonrpc: "2.0", id: question, result: { action: "accept", content: { answer: text } } })
        assert.strictEqual((await answer(onB.question, "meant for B")).status, 202)
        assert.strictEqual((await answer(onA.question, "meant for A")).status, 202)
        const reply = (await onA.next()) as { result: { structuredContent: { answer: string } } }
        assert.strictEqual(reply.result.structuredContent.answer, "meant for A")
      } finally {
        for (const i of instances) i.child.kill("SIGTERM")
        await Promise.all(instances.map((i) => (i.child.exitCode === null ? exited(i.child) : undefined)))
      }
    }
  )
})
