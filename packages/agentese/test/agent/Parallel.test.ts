/**
 * Several calls in one model response: the calls that only read run side by
 * side, every other call waits for those before it and runs alone in its
 * place. Two laws: read-only calls commute (on an unchanged workspace, the
 * same results in any order and side by side), and a write is never
 * reordered past a read of the same file (each read sees exactly the writes
 * asked for before it), for the agent loop and for `invokeText`.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Agent, Families, Invoke, Server } from "@ugent/agentese"
import { Scripted } from "@ugent/agentese/providers"
import { Family, Tool } from "@ugent/core"
import { Effect, Layer, Schema } from "effect"

const workspace = (files: Readonly<Record<string, string>> = {}) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const root = mkdtempSync(join(tmpdir(), "ugent-parallel-"))
      for (const [name, content] of Object.entries(files)) writeFileSync(join(root, name), content)
      return root
    }),
    (root) => Effect.sync(() => rmSync(root, { recursive: true, force: true }))
  )

/** A slow reader and a slow writer that log when they start and end, and how many ran at once. */
const clocked = () => {
  const log: Array<string> = []
  let running = 0
  const seen = { most: 0 }
  const timed = (label: string) =>
    Effect.acquireUseRelease(
      Effect.sync(() => {
        running++
        seen.most = Math.max(seen.most, running)
        log.push(`start ${label}`)
      }),
      () => Effect.sleep("60 millis"),
      () =>
        Effect.sync(() => {
          running--
          log.push(`end ${label}`)
        })
    )
  const read = Tool.make({
    name: "slow.read",
    description: "Reads slowly.",
    effects: { readsFs: true },
    input: Schema.Struct({ label: Schema.String }),
    output: Schema.Struct({ label: Schema.String }),
    run: ({ label }) => Effect.as(timed(label), { label })
  })
  const write = Tool.make({
    name: "slow.write",
    description: "Writes slowly.",
    trust: 1,
    effects: { writesFs: true },
    input: Schema.Struct({ label: Schema.String }),
    output: Schema.Struct({ label: Schema.String }),
    run: ({ label }) => Effect.as(timed(label), { label })
  })
  return {
    log,
    seen,
    family: Family.make({ name: "slow", prefix: "world.tools", tools: { "slow.read": read, "slow.write": write } })
  }
}

const server = (root: string, options: Partial<Server.Options> = {}) =>
  Server.layer({ root, stores: "memory", families: Families.builtIn, loop: false, trust: 1, ...options })

const stripped = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(stripped)
  if (typeof value !== "object" || value === null) return value
  return Object.fromEntries(
    Object.entries(value)
      .filter(([key]) => key !== "proof" && key !== "callId")
      .map(([key, v]) => [key, stripped(v)])
  )
}

describe("calls of one response", () => {
  it.live("reads run side by side; a write waits for the reads before it and runs alone, in its place", () =>
    Effect.gen(function* () {
      const root = yield* workspace()
      const { log, seen, family } = clocked()
      const call = (name: string, label: string) => ({ name, params: { label }, id: label })
      const result = yield* Agent.run({ prompt: "go", maxSteps: 2 }).pipe(
        Effect.provide(
          Layer.merge(
            Scripted.replay([
              Scripted.calls([
                call("world_tools_slow_read", "r1"),
                call("world_tools_slow_read", "r2"),
                call("world_tools_slow_write", "w3"),
                call("world_tools_slow_read", "r4"),
                call("world_tools_slow_read", "r5"),
                call("world_tools_slow_read", "r6")
              ]),
              Scripted.text("done")
            ]),
            server(root, { families: [...Families.builtIn, family] })
          )
        )
      )
      assert.strictEqual(result._tag, "Complete")
      // The results come back in the order asked.
      assert.deepStrictEqual(
        result.steps[0]!.calls.map((c) => c.id),
        ["r1", "r2", "w3", "r4", "r5", "r6"]
      )
      assert.isTrue(result.steps[0]!.calls.every((c) => c.outcome?.ok === true))
      assert.strictEqual(seen.most, 3)
      const at = (entry: string) => log.indexOf(entry)
      assert.isTrue(at("end r1") < at("start w3") && at("end r2") < at("start w3"))
      assert.isTrue(at("end w3") < at("start r4") && at("end w3") < at("start r5") && at("end w3") < at("start r6"))
    })
  )

  it.live("invokeText runs the reads of one reply side by side too, and keeps the reply's order", () =>
    Effect.gen(function* () {
      const root = yield* workspace()
      const { log, seen, family } = clocked()
      const outcomes = yield* Effect.flatMap(Invoke.Invoker, (road) =>
        road.invokeText(
          [
            "EXECUTE: world.tools.slow.read --label=a",
            "EXECUTE: world.tools.slow.read --label=b",
            "EXECUTE: world.tools.slow.write --label=c",
            "EXECUTE: world.tools.slow.read --label=d"
          ].join("\n")
        )
      ).pipe(Effect.provide(server(root, { families: [...Families.builtIn, family] })))
      assert.deepStrictEqual(
        outcomes.map((o) => (o.ok ? (o.result as { label: string }).label : o.error._tag)),
        ["a", "b", "c", "d"]
      )
      assert.strictEqual(seen.most, 2)
      assert.isTrue(log.indexOf("end b") < log.indexOf("start c") && log.indexOf("end c") < log.indexOf("start d"))
    })
  )
})

const files = { "a.txt": "alpha\nbeta\n", "b.md": "# b\nalpha\n", "c.ts": "export const c = 1\n" }

/** The read-only calls the law draws from: reads, listings, globs and searches, some of them failing. */
const ReadCall = Schema.Literals([
  "read a.txt",
  "read b.md",
  "read missing.txt",
  "list .",
  "glob *.md",
  "glob **/*",
  "grep alpha",
  "grep zeta",
  "status"
])

const invocationOf = (call: typeof ReadCall.Type): Invoke.Request => {
  const [verb, arg] = call.split(" ") as [string, string | undefined]
  switch (verb) {
    case "read":
      return { path: "world.tools.file.read", input: { path: arg } }
    case "list":
      return { path: "world.tools.file.list", input: { path: arg } }
    case "glob":
      return { path: "world.tools.file.glob", input: { pattern: arg } }
    case "grep":
      return { path: "world.tools.search.grep", input: { pattern: arg } }
    default:
      return { path: "world.tools.git.status", input: {} }
  }
}

const textOf = (request: Invoke.Request) =>
  `<tool_call>${JSON.stringify({ name: request.path, arguments: request.input })}</tool_call>`

/** What the workspace holds: each file and its content. */
const snapshot = (root: string) =>
  Object.fromEntries(readdirSync(root).map((name) => [name, readFileSync(join(root, name), "utf8")]))

describe("laws of the calls of one response", () => {
  it.effect.prop(
    "read-only calls commute: on an unchanged workspace they give the same results in any order, and side by side",
    {
      calls: Schema.Array(ReadCall).check(Schema.isMinLength(1), Schema.isMaxLength(6)),
      shift: Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 5 }))
    },
    ({ calls, shift }) =>
      Effect.gen(function* () {
        const root = yield* workspace(files)
        yield* Effect.gen(function* () {
          const road = yield* Invoke.Invoker
          const requests = calls.map(invocationOf)
          const inOrder = yield* Effect.forEach(requests, road.invoke)
          // Another order (reversed, rotated by `shift`), each outcome put back at its call's place.
          const other: Array<Invoke.Outcome> = []
          for (const i of requests.map((_, k) => (requests.length - 1 - k + shift) % requests.length)) {
            other[i] = yield* road.invoke(requests[i]!)
          }
          // Side by side: one reply with every call.
          const together = yield* road.invokeText(requests.map(textOf).join("\n"))
          assert.deepStrictEqual(stripped(other), stripped(inOrder))
          assert.deepStrictEqual(stripped(together), stripped(inOrder))
          assert.deepStrictEqual(snapshot(root), files)
        }).pipe(Effect.provide(server(root, { trust: 0 })))
      }).pipe(Effect.scoped),
    { timeout: 120_000, arbitrary: { runs: 25 } }
  )

  it.effect.prop(
    "a write is never reordered past a read of the same file: each read sees exactly the writes asked for before it",
    { ops: Schema.Array(Schema.Literals(["read", "write"])).check(Schema.isMinLength(1), Schema.isMaxLength(8)) },
    ({ ops }) =>
      Effect.gen(function* () {
        const root = yield* workspace({ "a.txt": "v0\n" })
        const asked = ops.map((op, i) =>
          op === "read"
            ? { name: "world_tools_file_read", params: { path: "a.txt" }, id: `c${i}` }
            : { name: "world_tools_file_write", params: { path: "a.txt", content: `v${i + 1}\n` }, id: `c${i}` }
        )
        const result = yield* Agent.run({ prompt: "go", maxSteps: 2, maxCallsPerResponse: 8 }).pipe(
          Effect.provide(Layer.merge(Scripted.replay([Scripted.calls(asked), Scripted.text("done")]), server(root)))
        )
        assert.strictEqual(result._tag, "Complete")
        // In order: a write succeeds once the session was shown the file's current bytes (by a read or a write before
        // it); a read sees the last successful write.
        let content = "v0"
        let shown = false
        for (const [i, call] of result.steps[0]!.calls.entries()) {
          const outcome = call.outcome!
          if (ops[i] === "read") {
            assert.strictEqual(outcome.ok && (outcome.result as { content: string }).content, `1\t${content}`)
            shown = true
          } else {
            assert.strictEqual(outcome.ok, shown, JSON.stringify(outcome))
            if (shown) content = `v${i + 1}`
            shown = shown || outcome.ok
          }
        }
        assert.strictEqual(readFileSync(join(root, "a.txt"), "utf8"), `${content}\n`)
      }).pipe(Effect.scoped),
    { timeout: 120_000, arbitrary: { runs: 25 } }
  )
})
