/**
 * Mounts in process: another MCP server (the fixture `fixtures/foreign.ts`,
 * started over stdio by the official SDK client) served on the road, and
 * every way it can go wrong: at start (a command that does not start, names
 * that clash or make no path, a family that takes its paths) and per call (a
 * tool error, an answer too large, a server that hangs, exits, or will not
 * start again), each a typed failure while the rest of the server works.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { createServer, type AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js"
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js"
import { Families, Invoke, Mcp, Mounts, Self, Server } from "@ugent/agentese"
import { Family, Tool } from "@ugent/core"
import { AuditStore } from "@ugent/wrappers"
import { Effect, Schema, type Scope } from "effect"

const fixture = join(import.meta.dirname, "fixtures", "foreign.ts")
const slow = { timeout: 60_000 }

/** A workspace and a directory for the fixture's marks, removed after the test. */
const dirs = () => {
  const root = mkdtempSync(join(tmpdir(), "ugent-mount-root-"))
  const marks = mkdtempSync(join(tmpdir(), "ugent-mount-marks-"))
  writeFileSync(join(root, "a.txt"), "alpha\n")
  return {
    root,
    marks,
    remove: () => {
      for (const d of [root, marks]) rmSync(d, { recursive: true, force: true })
    }
  }
}

const foreign = (marks: string, mode = "normal", name = "fx"): Mounts.Mount => ({
  name,
  spec: { command: process.execPath, args: [fixture, mode, marks] }
})

/** Runs `body` on a road whose mounts are `mounts`, with the built-in families only. */
const onRoad = <A, E>(
  options: Partial<Server.Options> & { readonly root: string },
  body: Effect.Effect<A, E, Server.Services | Scope.Scope>
) =>
  Effect.scoped(
    Effect.provide(
      body,
      Server.layer({ stores: "memory", families: [...Families.builtIn, Self.family], loop: false, ...options })
    )
  )

const call = (path: string, input: unknown = {}, session?: string) => Invoke.invoke({ path, input, session })
const tagOf = (o: Invoke.Outcome) => (o.ok ? "ok" : o.error._tag)
const textOf = (o: Invoke.Outcome): string =>
  o.ok ? (o.result as { content: Array<{ text?: string }> }).content.map((c) => c.text ?? "").join("") : ""

describe("Mounts.parse", () => {
  it("reads a command into words, quotes respected, and a URL as a URL", () => {
    assert.deepStrictEqual(Mounts.parse(`fs=node "my server.js" --root '/a b' x\\ y`), {
      name: "fs",
      spec: { command: "node", args: ["my server.js", "--root", "/a b", "x y"] }
    })
    assert.deepStrictEqual(Mounts.parse("docs=https://example.com/mcp"), {
      name: "docs",
      spec: { url: "https://example.com/mcp" }
    })
    assert.deepStrictEqual(Mounts.parse("local=http://127.0.0.1:3001/mcp"), {
      name: "local",
      spec: { url: "http://127.0.0.1:3001/mcp" }
    })
  })

  it("refuses what is not a mount, with what to write instead", () => {
    const issue = (flag: string) => {
      const parsed = Mounts.parse(flag)
      return Mounts.isMountError(parsed) ? parsed.message : "parsed"
    }
    assert.match(issue("npx server"), /is not <name>=<command…> or <name>=<https URL>/)
    assert.match(issue("Fs=node x"), /no path segment/)
    assert.match(issue("fs="), /empty command/)
    assert.match(issue(`fs=node "x`), /unclosed " quote/)
    assert.match(issue("far=http://example.com/mcp"), /over https \(http only on this machine/)
    assert.match(issue("bad=https://"), /not a URL/)
    const twice = Mounts.checkAll([
      { name: "fs", spec: { command: "a" } },
      { name: "fs", spec: { url: "https://example.com" } }
    ])
    assert.match(twice?.message ?? "", /The mount fs is named twice/)
  })

  it("names a server's tools as path segments", () => {
    assert.deepStrictEqual(
      ["read_file", "getTinyImage", "get-env", "files.list", "Search Nodes", "42", "_"].map(Mounts.segmentOf),
      ["read-file", "get-tiny-image", "get-env", "files-list", "search-nodes", undefined, undefined]
    )
  })
})

describe("a mounted server on the road", () => {
  it.live(
    "serves its tools at world.mcp.<name>.<tool>, with its schema unchanged and levels from its hints",
    () => {
      const { root, marks, remove } = dirs()
      return onRoad(
        { root, trust: 3, mounts: [foreign(marks)] },
        Effect.gen(function* () {
          const road = yield* Invoke.Invoker
          const offers = new Map((yield* road.list).map((o) => [o.path, o]))
          const echo = offers.get("world.mcp.fx.echo-args")!
          assert.deepStrictEqual(echo.input, {
            type: "object",
            properties: { path: { type: "string" }, proof: { type: "string" }, note: { type: "string" } },
            required: []
          })
          assert.strictEqual(echo.requiredTrust, 0)
          assert.strictEqual(offers.get("world.mcp.fx.write-note")?.requiredTrust, 2)
          assert.strictEqual(offers.get("world.mcp.fx.drop-all")?.requiredTrust, 3)
          assert.isTrue(offers.has("world.tools.file.read"))
          const o = yield* call("world.mcp.fx.echo-args", { note: "hi" })
          assert.deepStrictEqual(JSON.parse(textOf(o)), { note: "hi" })
        })
      ).pipe(Effect.ensuring(Effect.sync(remove)))
    },
    slow
  )

  it.live(
    "gates its tools like any path: levels, a recipe that raises (never lowers) them, deny, approval, plan mode",
    () => {
      const { root, marks, remove } = dirs()
      const asked: Array<string> = []
      return Effect.gen(function* () {
        yield* onRoad(
          {
            root,
            trust: 0,
            mounts: [foreign(marks)],
            recipe: { minTrust: { "world.mcp.fx.big": 1, "world.mcp.fx.drop-all": 0 } }
          },
          Effect.gen(function* () {
            assert.strictEqual(tagOf(yield* call("world.mcp.fx.echo-args")), "ok")
            assert.strictEqual(tagOf(yield* call("world.mcp.fx.big", { chars: 1 })), "TrustDenied")
            assert.strictEqual(tagOf(yield* call("world.mcp.fx.write-note", { text: "a" })), "TrustDenied")
            assert.strictEqual(tagOf(yield* call("world.mcp.fx.drop-all")), "TrustDenied")
          })
        )
        yield* onRoad(
          {
            root,
            trust: 2,
            mounts: [foreign(marks)],
            recipe: { deny: ["world.mcp.fx.env"], minTrust: { "world.mcp.fx.drop-all": 0 } },
            approver: (request) => Effect.sync(() => (asked.push(request.tool), true))
          },
          Effect.gen(function* () {
            assert.strictEqual(tagOf(yield* call("world.mcp.fx.env")), "PolicyDenied")
            // L2 at an L2 caller: confirmed by the approver, then run.
            assert.strictEqual(tagOf(yield* call("world.mcp.fx.write-note", { text: "one" }, "s")), "ok")
            assert.deepStrictEqual(asked, ["world.mcp.fx.write-note"])
            // A destructive tool stays L3: the recipe's 0 does not lower it.
            assert.strictEqual(tagOf(yield* call("world.mcp.fx.drop-all", {}, "s")), "TrustDenied")
            // Plan mode: the server's read-only tools run, its other tools do not.
            assert.strictEqual(tagOf(yield* call("self.tools.mode.plan", {}, "s")), "ok")
            assert.strictEqual(tagOf(yield* call("world.mcp.fx.write-note", { text: "two" }, "s")), "PlanMode")
            assert.strictEqual(tagOf(yield* call("world.mcp.fx.echo-args", {}, "s")), "ok")
          })
        )
        assert.strictEqual(readFileSync(join(marks, "notes.txt"), "utf8"), "one\n")
      }).pipe(Effect.ensuring(Effect.sync(remove)))
    },
    slow
  )

  it.live(
    "its server sees only the arguments the caller sent: no session proof, no key or secret in its environment",
    () => {
      const { root, marks, remove } = dirs()
      const saved = { key: process.env.UGENT_PROOF_KEY, token: process.env.UGENT_TEST_SECRET_TOKEN }
      process.env.UGENT_PROOF_KEY = "k".repeat(40)
      process.env.UGENT_TEST_SECRET_TOKEN = "sk-do-not-leak"
      return onRoad(
        { root, trust: 1, mounts: [foreign(marks)], proofKey: "workspace" },
        Effect.gen(function* () {
          // The session holds a's proof; a road tool with a `proof` field would get it, a mounted one must not.
          const read = yield* call("world.tools.file.read", { path: "a.txt" }, "s1")
          assert.isTrue(read.ok)
          const echoed = yield* call("world.mcp.fx.echo-args", { path: "a.txt" }, "s1")
          assert.deepStrictEqual(JSON.parse(textOf(echoed)), { path: "a.txt" })
          const env = textOf(yield* call("world.mcp.fx.env", {}, "s1"))
          assert.notInclude(env, "k".repeat(40))
          assert.notInclude(env, "sk-do-not-leak")
          assert.notInclude(env, "UGENT_")
        })
      ).pipe(
        Effect.ensuring(
          Effect.sync(() => {
            for (const [name, value] of [
              ["UGENT_PROOF_KEY", saved.key],
              ["UGENT_TEST_SECRET_TOKEN", saved.token]
            ] as const) {
              if (value === undefined) delete process.env[name]
              else process.env[name] = value
            }
            remove()
          })
        )
      )
    },
    slow
  )

  it.live(
    "per call: a tool error, an answer too large, one over the budget, a hang and a crash are typed failures, and the rest keeps working",
    () => {
      const { root, marks, remove } = dirs()
      return onRoad(
        {
          root,
          trust: 1,
          mounts: [foreign(marks)],
          mountOptions: { maxResultBytes: 200_000 },
          budgetTokens: 1000,
          timeout: "2 seconds"
        },
        Effect.gen(function* () {
          const failed = yield* call("world.mcp.fx.fail")
          assert.strictEqual(tagOf(failed), "MountToolFailed")
          assert.match(!failed.ok ? failed.error.message : "", /the fixture fails on purpose/)
          assert.strictEqual(!failed.ok && failed.kind, "failed")

          // Over the budget, under the cap: kept in working memory, told in a sentence.
          const kept = yield* call("world.mcp.fx.big", { chars: 20_000 })
          const over = (kept.ok ? kept.result : {}) as { overBudget?: boolean; summary?: string; memoryId?: string }
          assert.isTrue(over.overBudget)
          assert.match(over.summary ?? "", /big of the MCP server mounted as fx .* 20000 characters of text/)
          const part = yield* call("self.memory.read", { id: over.memoryId, offset: 0, length: 100 })
          assert.isTrue(part.ok)

          // Over the cap: the call fails; the connection is made again for the next.
          const tooLarge = yield* call("world.mcp.fx.big", { chars: 500_000 })
          assert.strictEqual(tagOf(tooLarge), "MountAnswerInvalid")
          assert.match(!tooLarge.ok ? tooLarge.error.message : "", /more than 200000 bytes\. Ask for less/)
          assert.strictEqual(tagOf(yield* call("world.mcp.fx.big", { chars: 10 })), "ok")

          // A hang: cut by the road's time limit, and cancelled on the server.
          const hung = yield* call("world.mcp.fx.hang")
          assert.strictEqual(tagOf(hung), "TimedOut")
          yield* Effect.promise(() => waitFor(() => existsSync(join(marks, "cancelled"))))

          // A crash during the call: unavailable; the next call starts the server again.
          const before = readFileSync(join(marks, "pid"), "utf8")
          const crashed = yield* call("world.mcp.fx.crash")
          assert.strictEqual(tagOf(crashed), "MountUnavailable")
          assert.strictEqual(!crashed.ok && crashed.kind, "unavailable")
          const again = yield* call("world.mcp.fx.echo-args", { note: "back" })
          assert.deepStrictEqual(JSON.parse(textOf(again)), { note: "back" })
          assert.notStrictEqual(readFileSync(join(marks, "pid"), "utf8"), before)

          // Every call was recorded, under the mount's paths.
          const audit = yield* AuditStore.AuditStore
          const paths = new Set((yield* audit.list({ limit: 200 })).map((e) => e.path))
          for (const tool of ["fail", "big", "hang", "crash", "echo-args"])
            assert.isTrue(paths.has(`world.mcp.fx.${tool}`))
          assert.strictEqual(tagOf(yield* call("world.tools.file.read", { path: "a.txt" })), "ok")
        })
      ).pipe(Effect.ensuring(Effect.sync(remove)))
    },
    slow
  )

  it.live(
    "a server that writes lines that are not JSON-RPC still answers; an answer that is no tool result is a typed failure",
    () => {
      const { root, marks, remove } = dirs()
      return onRoad(
        { root, trust: 1, mounts: [foreign(marks, "stdout-junk")], timeout: "5 seconds" },
        Effect.gen(function* () {
          assert.deepStrictEqual(JSON.parse(textOf(yield* call("world.mcp.fx.echo-args", { note: "x" }))), {
            note: "x"
          })
          const garbage = yield* call("world.mcp.fx.garbage")
          assert.strictEqual(tagOf(garbage), "MountAnswerInvalid", JSON.stringify(garbage))
          assert.match(!garbage.ok ? garbage.error.message : "", /answered with something that is not a tool result/)
          assert.strictEqual(tagOf(yield* call("world.mcp.fx.echo-args", { note: "y" })), "ok")
        })
      ).pipe(Effect.ensuring(Effect.sync(remove)))
    },
    slow
  )

  it.live(
    "a server that will not start again is retried with back-off, not on every call",
    () => {
      const { root, marks, remove } = dirs()
      return onRoad(
        { root, trust: 1, mounts: [foreign(marks, "no-restart")] },
        Effect.gen(function* () {
          assert.strictEqual(tagOf(yield* call("world.mcp.fx.crash")), "MountUnavailable")
          const first = yield* call("world.mcp.fx.echo-args")
          assert.match(
            !first.ok ? first.error.message : "",
            /closed the connection before it initialized.*refusing to start again/
          )
          const second = yield* call("world.mcp.fx.echo-args")
          assert.match(
            !second.ok ? second.error.message : "",
            /is restarting: the last attempt failed, the next is in 1 s/
          )
          // Two starts in all: the first, and the one attempt after the crash.
          assert.strictEqual(readFileSync(join(marks, "started"), "utf8").trim().split("\n").length, 1)
          assert.strictEqual(tagOf(yield* call("world.tools.file.read", { path: "a.txt" })), "ok")
        })
      ).pipe(Effect.ensuring(Effect.sync(remove)))
    },
    slow
  )
})

describe("a mounted call over MCP", () => {
  /** The official SDK client on an MCP connection of the road in context (in memory). */
  const mcpClient = Effect.gen(function* () {
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
    const context = yield* Effect.context<Server.Services>()
    const connection = yield* Mcp.connection({
      send: (line) => Effect.promise(() => serverSide.send(JSON.parse(line) as JSONRPCMessage))
    })
    serverSide.onmessage = (message) => {
      void Effect.runPromise(Effect.provideContext(connection.receive(message), context)).then((reply) =>
        reply === undefined ? undefined : serverSide.send(JSON.parse(reply) as JSONRPCMessage)
      )
    }
    yield* Effect.promise(() => serverSide.start())
    const client = new Client({ name: "ugent-test", version: "0.0.0" })
    yield* Effect.promise(() => client.connect(clientSide))
    yield* Effect.addFinalizer(() => Effect.promise(() => client.close()))
    return client
  })

  it.live(
    "the mounted server's progress reaches the client that asked for it, after the start ugent reports",
    () => {
      const { root, marks, remove } = dirs()
      return onRoad(
        { root, trust: 1, mounts: [foreign(marks)] },
        Effect.gen(function* () {
          const client = yield* mcpClient
          const heard: Array<unknown> = []
          const result = yield* Effect.promise(() =>
            client.callTool({ name: "world_mcp_fx_progress", arguments: {} }, undefined, {
              onprogress: (p) => heard.push(p)
            })
          )
          assert.strictEqual((result.content as Array<{ text: string }>)[0]?.text, "done")
          assert.deepStrictEqual(
            heard,
            [
              // A call to another server may take long: the client hears at once that it started.
              { progress: 0, message: "world_mcp_fx_progress started" },
              { progress: 1, total: 3, message: "step 1" },
              { progress: 2, total: 3, message: "step 2" },
              { progress: 3, total: 3, message: "step 3" }
            ],
            JSON.stringify(heard)
          )
        })
      ).pipe(Effect.ensuring(Effect.sync(remove)))
    },
    slow
  )

  it.live(
    "a call its client cancels is cancelled on the mounted server too",
    () => {
      const { root, marks, remove } = dirs()
      return onRoad(
        { root, trust: 1, mounts: [foreign(marks)] },
        Effect.gen(function* () {
          const client = yield* mcpClient
          const abort = new AbortController()
          const called = client.callTool({ name: "world_mcp_fx_hang", arguments: {} }, undefined, {
            signal: abort.signal
          })
          yield* Effect.sleep("300 millis")
          abort.abort("the person pressed stop")
          yield* Effect.promise(() => called.catch(() => undefined))
          yield* Effect.promise(() => waitFor(() => existsSync(join(marks, "cancelled"))))
        })
      ).pipe(Effect.ensuring(Effect.sync(remove)))
    },
    slow
  )
})

describe("a mount that cannot be served stops the server at start, naming it", () => {
  const startFails = (options: Partial<Server.Options> & { readonly root: string }) =>
    Effect.match(onRoad(options, Effect.void), { onFailure: (e) => (e as Error).message, onSuccess: () => "started" })

  it.live(
    "a command that is not there, one that exits, a URL that refuses",
    () => {
      const { root, marks, remove } = dirs()
      return Effect.gen(function* () {
        assert.match(
          yield* startFails({ root, mounts: [{ name: "nope", spec: { command: join(marks, "no-such-server") } }] }),
          /^The mount nope could not start: the command .*no-such-server was not found \(ENOENT\)/
        )
        writeFileSync(join(marks, "started"), "1\n")
        assert.match(
          yield* startFails({ root, mounts: [foreign(marks, "no-restart")] }),
          /^The mount fx could not start: the command .* closed the connection before it initialized \(did it exit\?\)\. Its last words on stderr: foreign: refusing to start again/
        )
        const port = yield* Effect.promise(closedPort)
        assert.match(
          yield* startFails({ root, mounts: [{ name: "web", spec: { url: `http://127.0.0.1:${port}/mcp` } }] }),
          new RegExp(
            `^The mount web could not start: the URL http://127\\.0\\.0\\.1:${port}/mcp could not be reached: fetch failed: .*ECONNREFUSED`
          )
        )
      }).pipe(Effect.ensuring(Effect.sync(remove)))
    },
    slow
  )

  it.live(
    "tool names that clash within the server, or with another family's paths, or make no path; a schema that is no object schema",
    () => {
      const { root, marks, remove } = dirs()
      const taker = Family.make({
        name: "taker",
        prefix: "world.mcp.fx",
        tools: {
          "echo-args": Tool.make({
            name: "taker.echo",
            description: "Takes a mount's path.",
            input: Schema.Struct({}),
            output: Schema.Struct({}),
            run: () => Effect.succeed({})
          })
        }
      })
      return Effect.gen(function* () {
        assert.match(
          yield* startFails({ root, mounts: [foreign(marks, "clash")] }),
          /^The mount fx lists the tools "read_file" and "read-file", which are both served as world\.mcp\.fx\.read-file/
        )
        assert.match(
          yield* startFails({ root, mounts: [foreign(marks, "bad-schema")] }),
          /^The mount fx could not start: its tool list is not valid MCP: .*inputSchema/
        )
        assert.match(
          yield* startFails({ root, mounts: [foreign(marks, "bad-name")] }),
          /^The mount fx lists a tool named "42", which gives no path segment/
        )
        assert.match(
          yield* startFails({ root, mounts: [foreign(marks)], extraFamilies: [taker] }),
          /^The families taker and mcp:fx both register world\.mcp\.fx\.echo-args/
        )
      }).pipe(Effect.ensuring(Effect.sync(remove)))
    },
    slow
  )
})

/** A port nothing listens on (one the system just gave and took back). */
const closedPort = () =>
  new Promise<number>((resolve) => {
    const server = createServer()
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo
      server.close(() => resolve(port))
    })
  })

const waitFor = async (done: () => boolean, millis = 5000) => {
  const until = Date.now() + millis
  while (!done()) {
    if (Date.now() > until) throw new Error("timed out waiting")
    await new Promise((r) => setTimeout(r, 20))
  }
}
