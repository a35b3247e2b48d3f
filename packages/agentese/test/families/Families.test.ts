import { tmpdir } from "node:os"
import { assert, describe, it } from "@effect/vitest"
import { Families, Invoke, Server } from "@ugent/agentese"
import { Effect } from "effect"
import { memoryClient } from "../mcp/fixtures/memory.ts"
import * as Notes from "./notes/Notes.ts"

// The one line that registers the family.
const families = [...Families.builtIn, Notes.family]

const server = (trust: 0 | 1, budgetTokens?: number) =>
  Server.layer({ root: tmpdir(), stores: "memory", trust, families, budgetTokens })

describe("a new tool family", () => {
  it.effect("is served on its paths through the road, with its own service", () =>
    Effect.gen(function* () {
      const first = yield* Invoke.invoke({ path: "self.tools.notes.add", input: { text: "tea" } })
      const second = yield* Invoke.invoke({ path: "self.tools.notes.add", input: { text: "milk" } })
      const listed = yield* Invoke.invoke({ path: "self.tools.notes.list", input: {} })
      assert.deepStrictEqual(
        [first, second].map((o) => o.ok && o.result),
        [{ count: 1 }, { count: 2 }]
      )
      assert.deepStrictEqual(listed.ok && listed.result, { notes: ["tea", "milk"] })
    }).pipe(Effect.provide(server(1)))
  )

  it.effect("keeps its trust level and the gate: an L0 caller neither sees nor calls its writer", () =>
    Effect.gen(function* () {
      const road = yield* Invoke.Invoker
      const offered = (yield* road.list).map((o) => o.path)
      assert.include(offered, "self.tools.notes.list")
      assert.notInclude(offered, "self.tools.notes.add")
      const o = yield* Invoke.invoke({ path: "self.tools.notes.add", input: { text: "x" } })
      assert.strictEqual(!o.ok && o.error._tag, "TrustDenied")
    }).pipe(Effect.provide(server(0)))
  )

  it.effect("is listed and called over MCP under provider-safe names", () =>
    Effect.gen(function* () {
      const client = yield* memoryClient()
      const names = (yield* client.listTools()).tools.map((t) => t.name)
      assert.include(names, "self_tools_notes_add")
      yield* client.callTool({ name: "self_tools_notes_add", arguments: { text: "tea" } })
      const result = yield* client.callTool({ name: "self_tools_notes_list", arguments: {} })
      assert.deepStrictEqual(result.structuredContent, { notes: ["tea"] })
    }).pipe(Effect.scoped, Effect.provide(server(1)))
  )

  it.effect("tells a result over the budget in its own words", () =>
    Effect.gen(function* () {
      for (let i = 0; i < 60; i++) {
        yield* Invoke.invoke({ path: "self.tools.notes.add", input: { text: `note ${i} `.repeat(10) } })
      }
      const o = yield* Invoke.invoke({ path: "self.tools.notes.list", input: {} })
      const result = (o.ok ? o.result : {}) as { overBudget?: boolean; summary?: string }
      assert.isTrue(result.overBudget)
      assert.match(result.summary ?? "", /^60 notes/)
    }).pipe(Effect.provide(server(1, 1000)))
  )
})
