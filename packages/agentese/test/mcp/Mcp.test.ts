import { tmpdir } from "node:os"
import { assert, describe, it } from "@effect/vitest"
import { type Invoke, Mcp, type Registry, Render, Server } from "@ugent/agentese"
import { Family, Tool } from "@ugent/core"
import { Effect, Option, Schema } from "effect"
import { callReply } from "../../src/internal/mcp/server.ts"
import { memoryClient } from "./fixtures/memory.ts"
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js"

const description = (overrides: Partial<Registry.Description> = {}): Registry.Description => ({
  path: "world.tools.text.upper",
  name: "text.upper",
  description: "Uppercase a text.",
  toolTrust: 0,
  effects: {},
  annotations: { readOnly: true, destructive: false, idempotent: true, openWorld: false },
  input: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
  output: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
  failure: {},
  ...overrides
})

const textOf = (result: object) =>
  (result as { readonly content: ReadonlyArray<{ readonly text: string }> }).content[0]!.text

describe("Mcp", () => {
  describe("toolName / pathOf", () => {
    it("names a path by its provider-safe form, and maps both forms back to the path", () => {
      assert.strictEqual(Mcp.toolName("world.tools.file.read"), "world_tools_file_read")
      assert.strictEqual(Option.getOrNull(Mcp.pathOf("world_tools_file_read")), "world.tools.file.read")
      assert.strictEqual(Option.getOrNull(Mcp.pathOf("world.tools.file.read")), "world.tools.file.read")
      assert.strictEqual(Option.getOrNull(Mcp.pathOf("self.tools.task-list.add")), "self.tools.task-list.add")
    })

    it("keeps the dotted path as the name when the safe form would pass 64 characters", () => {
      const path = `world.tools.${"a".repeat(60)}.read`
      assert.strictEqual(Mcp.toolName(path), path)
    })

    it("maps no path from a name that is neither form", () => {
      assert.isTrue(Option.isNone(Mcp.pathOf("Not A Path")))
      assert.isTrue(Option.isNone(Mcp.pathOf("world")))
    })
  })

  describe("toMcpTool", () => {
    it("carries title and hints from the description (hints that differ from MCP's defaults), no _meta at L0", () => {
      const tool = Mcp.toMcpTool(description())
      assert.strictEqual(tool.name, "world_tools_text_upper")
      assert.strictEqual(tool.title, "world.tools.text.upper")
      assert.deepStrictEqual(tool.annotations, { readOnlyHint: true, openWorldHint: false })
      assert.isUndefined(tool._meta)
    })

    it("takes the level the recipe requires and the approval flag from an offer", () => {
      const offer: Invoke.Offer = { ...description(), requiredTrust: 2, requiresApproval: true }
      assert.deepStrictEqual(Mcp.toMcpTool(offer)._meta, { "ugent/trust": 2, "ugent/approval": true })
    })

    it("gives a non-object input an object root and declares no output schema for a non-object output", () => {
      const tool = Mcp.toMcpTool(description({ input: { type: "string" }, output: { type: "string" } }))
      assert.strictEqual(tool.inputSchema.type, "object")
      assert.isUndefined(tool.outputSchema)
    })
  })

  describe("toCallToolJson", () => {
    it("sends an object result as text and as structured content", () => {
      const result = Mcp.toCallToolJson({
        ok: true,
        result: { text: "HI" },
        path: "world.tools.text.upper",
        callId: "c"
      })
      assert.isFalse(result.isError)
      assert.deepStrictEqual(result.structuredContent, { text: "HI" })
      assert.deepStrictEqual(JSON.parse(textOf(result)), { text: "HI" })
      assert.deepStrictEqual(result._meta, { "ugent/path": "world.tools.text.upper", "ugent/callId": "c" })
    })

    it("sends a non-object result as text only", () => {
      const result = Mcp.toCallToolJson({ ok: true, result: ["a", "b"], path: "world.tools.x.y", callId: "c" })
      assert.isUndefined(result.structuredContent)
      assert.strictEqual(textOf(result), '["a","b"]')
    })

    it("sends a failure as a plain line, what to do next and its details, its JSON and kind in _meta, and no structured content", () => {
      const error = {
        _tag: "ProofRejected",
        message: "a.md has not been read in this session. Read it first with world.tools.file.read.",
        path: "a.md",
        reason: "never-read"
      }
      const result = Mcp.toCallToolJson(
        { ok: false, error, kind: "failed", path: "world.tools.file.write", callId: "c" },
        Render.audience({ tools: [{ path: "world.tools.file.read", name: "file.read" }] })
      )
      assert.isTrue(result.isError)
      assert.isUndefined(result.structuredContent)
      assert.deepStrictEqual(textOf(result).split("\n"), [
        "ProofRejected: a.md has not been read in this session.",
        "Read it first with world_tools_file_read.",
        // The path is in the message already; the reason is not.
        'Details: {"reason":"never-read"}'
      ])
      assert.deepStrictEqual(result._meta?.["ugent/error"], error)
      assert.strictEqual(result._meta?.["ugent/kind"], "failed")
    })
  })

  describe("toCallToolJson", () => {
    const outcomes: ReadonlyArray<Invoke.Outcome> = [
      {
        ok: true,
        result: { text: "HI", n: 1, nested: { a: [1, null] } },
        path: "world.tools.text.upper",
        callId: "c1"
      },
      { ok: true, result: ["a", "b"], path: "world.tools.x.y", callId: "c2" },
      { ok: true, result: "plain", path: "world.tools.x.y", callId: "c3" },
      {
        ok: false,
        error: { _tag: "ProofRejected", message: "Read it first.", path: "a.md", reason: "never-read" },
        kind: "failed",
        path: "world.tools.file.write",
        callId: "c4"
      }
    ]
    it("is a call result by the official SDK's own schema, for successes and failures", () => {
      for (const outcome of outcomes) {
        assert.isTrue(CallToolResultSchema.safeParse(JSON.parse(JSON.stringify(Mcp.toCallToolJson(outcome)))).success)
      }
    })
  })

  describe("a call's reply line", () => {
    const line = (id: string | number, outcome: Invoke.Outcome) =>
      JSON.stringify({ jsonrpc: "2.0", id, result: Mcp.toCallToolJson(outcome) })
    const printed = (outcome: Invoke.Outcome): Invoke.Outcome =>
      outcome.ok ? { ...outcome, text: JSON.stringify(outcome.result) } : outcome
    it("is exactly the JSON-RPC response of toCallToolJson (the road's text spliced in), for successes and failures", () => {
      const outcomes: ReadonlyArray<Invoke.Outcome> = [
        {
          ok: true,
          result: { text: 'a "quoted"\nline\u2028 é 😀', n: 1.5, nested: { a: [1, null, true] } },
          path: "p.q",
          callId: "c1"
        },
        { ok: true, result: {}, path: "p.q", callId: "c2" },
        { ok: true, result: ["a"], path: "p.q", callId: "c3" },
        { ok: true, result: null, path: "p.q", callId: "c4" },
        {
          ok: false,
          error: { _tag: "NotFound", message: "No such file." },
          kind: "not_found",
          path: "p.q",
          callId: "c5"
        }
      ]
      for (const id of [7, 'id-"7"', 0]) {
        for (const outcome of outcomes) assert.strictEqual(callReply(id, printed(outcome), true), line(id, outcome))
      }
    })
    it.prop(
      "prints any record result as JSON.stringify does",
      { result: Schema.Record(Schema.String, Schema.Json), id: Schema.Union([Schema.Int, Schema.String]) },
      ({ result, id }) => {
        const outcome: Invoke.Outcome = { ok: true, result, path: "world.tools.x.y", callId: "c" }
        assert.strictEqual(callReply(id, printed(outcome), true), line(id, outcome))
      },
      { arbitrary: { runs: 300 } }
    )
  })

  describe("registrations", () => {
    const upper = Tool.fromFunction({ name: "text.upper", f: (s: string) => s.toUpperCase() })
    const ping = Tool.make({
      name: "sys.ping",
      description: "Answers pong.",
      input: Schema.Struct({}),
      output: Schema.Struct({ pong: Schema.Boolean }),
      run: () => Effect.succeed({ pong: true })
    })
    const road = Server.layer({
      root: tmpdir(),
      stores: "memory",
      families: [Family.make({ name: "text", prefix: "self.tools", tools: { "text.upper": upper, "sys.ping": ping } })]
    })

    it.effect("wraps a non-object input as { input } and unwraps it for the road", () =>
      Effect.gen(function* () {
        const client = yield* memoryClient()
        const tool = (yield* client.listTools()).tools.find((t) => t.name === "self_tools_text_upper")!
        assert.deepStrictEqual(tool.inputSchema.required, ["input"])
        const result = yield* client.callTool({ name: "self_tools_text_upper", arguments: { input: "hi" } })
        // A text result reaches the model as the text itself; its JSON is in no structured content (not an object).
        assert.strictEqual(textOf(result), "HI")
      }).pipe(Effect.scoped, Effect.provide(road))
    )

    it.effect("gives an empty input an empty object root", () =>
      Effect.gen(function* () {
        const client = yield* memoryClient()
        const tool = (yield* client.listTools()).tools.find((t) => t.name === "self_tools_sys_ping")!
        assert.deepStrictEqual(tool.inputSchema, { type: "object", properties: {}, additionalProperties: false })
        const result = yield* client.callTool({ name: "self_tools_sys_ping", arguments: {} })
        assert.deepStrictEqual(result.structuredContent, { pong: true })
      }).pipe(Effect.scoped, Effect.provide(road))
    )
  })
})
