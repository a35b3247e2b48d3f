import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Events, Invoke, Path, Server, Toolkit } from "@ugent/agentese"
import { Family, type Trust, Tool as UTool } from "@ugent/core"
import { Context, Effect, Fiber, Layer, Stream } from "effect"
import { AiError, Chat, LanguageModel, type Prompt, type Response, Tool } from "effect/ai"

/** A temp workspace with files, removed when the scope closes. */
const workspace = (files: Readonly<Record<string, string>>) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const root = mkdtempSync(join(tmpdir(), "ugent-toolkit-"))
      for (const [name, content] of Object.entries(files)) writeFileSync(join(root, name), content)
      return root
    }),
    (root) => Effect.sync(() => rmSync(root, { recursive: true, force: true }))
  )

/** The tool results a prompt holds, newest last. */
const toolResults = (prompt: Prompt.Prompt): ReadonlyArray<Prompt.ToolResultPart> =>
  prompt.content.flatMap((message) =>
    message.role === "tool" ? message.content.filter((p): p is Prompt.ToolResultPart => p.type === "tool-result") : []
  )

/**
 * A language model that answers from a script: each turn it sees the prompt
 * (with the tool results so far) and the tools offered, and returns parts.
 */
const scripted = (
  script: (prompt: Prompt.Prompt, tools: ReadonlyArray<string>) => Array<Response.PartEncoded>,
  seen: Array<ReadonlyArray<string>> = []
) =>
  Layer.effect(
    LanguageModel.LanguageModel,
    LanguageModel.make({
      generateText: (options) =>
        Effect.sync(() => {
          const tools = options.tools.map((t) => t.name)
          seen.push(tools)
          return script(options.prompt, tools)
        }),
      streamText: () => Stream.empty
    })
  )

const call = (id: string, name: string, params: unknown): Response.PartEncoded => ({
  type: "tool-call",
  id,
  name,
  params
})

const roomy = { rateLimits: { perMinute: 600 } }

const server = (root: string, trust: Trust.TrustLevel, extra: Partial<Server.Options> = {}) =>
  Server.layer({ root, trust, stores: "memory", recipe: roomy, observerId: "toolkit-test", ...extra })

describe("Toolkit", () => {
  describe("fromInvoker", () => {
    it.effect("offers exactly the caller's paths, under provider-safe names", () =>
      Effect.gen(function* () {
        const root = yield* workspace({})
        for (const trust of [0, 1] as const) {
          const [toolkit, offers] = yield* Effect.all([
            Toolkit.fromInvoker,
            Effect.flatMap(Invoke.Invoker, (road) => road.list)
          ]).pipe(Effect.provide(server(root, trust)))
          assert.deepStrictEqual(
            Object.keys(toolkit.tools),
            offers.map((o) => Path.toProviderName(o.path))
          )
          assert.strictEqual("world_tools_file_write" in toolkit.tools, trust >= 1)
        }
      }).pipe(Effect.scoped)
    )

    it.effect("takes a non-object input as an { input } parameter", () =>
      Effect.gen(function* () {
        const upper = UTool.fromFunction({ name: "text.upper", f: (s: string) => s.toUpperCase() })
        const road = Server.layer({
          root: tmpdir(),
          stores: "memory",
          families: [Family.make({ name: "text", prefix: "self.tools", tools: { "text.upper": upper } })]
        })
        const toolkit = yield* Toolkit.fromInvoker.pipe(Effect.provide(road))
        const results = yield* toolkit.handle("self_tools_text_upper", { input: "hi" })
        const last = yield* Stream.runLast(results)
        assert.strictEqual(last._tag === "Some" ? last.value.result : undefined, "HI")
      }).pipe(Effect.scoped)
    )

    it.effect("carries the path as title and meta, and the protocol hints", () =>
      Effect.gen(function* () {
        const root = yield* workspace({})
        const toolkit = yield* Toolkit.fromInvoker.pipe(Effect.provide(server(root, 1)))
        const read = toolkit.tools.world_tools_file_read!
        const write = toolkit.tools.world_tools_file_write!
        assert.strictEqual(Context.getUnsafe(read.annotations, Tool.Title), "world.tools.file.read")
        assert.deepStrictEqual(Context.getUnsafe(write.annotations, Tool.Meta), {
          "ugent/path": "world.tools.file.write",
          "ugent/trust": 1,
          "ugent/approval": false
        })
        assert.isTrue(Context.get(read.annotations, Tool.Readonly))
        assert.isTrue(Context.get(write.annotations, Tool.Destructive))
        assert.isFalse(Context.get(write.annotations, Tool.OpenWorld))
        const schema = Tool.getJsonSchema(read) as { type?: string; required?: ReadonlyArray<string> }
        assert.strictEqual(schema.type, "object")
        assert.include(schema.required ?? [], "path")
      }).pipe(Effect.scoped)
    )
  })

  describe("with LanguageModel", () => {
    it.effect("a model reads a file, then writes it with the proof the read returned", () =>
      Effect.gen(function* () {
        const root = yield* workspace({ "notes.md": "# notes\n" })
        const seen: Array<ReadonlyArray<string>> = []
        const model = scripted((prompt) => {
          const results = toolResults(prompt)
          const read = results.find((r) => r.name === "world_tools_file_read")
          if (read === undefined) return [call("c1", "world_tools_file_read", { path: "notes.md" })]
          if (!results.some((r) => r.name === "world_tools_file_write")) {
            const proof = (read.result as { proof: string }).proof
            return [call("c2", "world_tools_file_write", { path: "notes.md", content: "# notes\n- tea\n", proof })]
          }
          return [{ type: "text", text: "Added tea." }]
        }, seen)
        const program = Effect.gen(function* () {
          const toolkit = yield* Toolkit.fromInvoker
          const chat = yield* Chat.empty
          const first = yield* chat.generateText({ prompt: "Add tea to notes.md", toolkit })
          const second = yield* chat.generateText({ prompt: [], toolkit })
          const third = yield* chat.generateText({ prompt: [], toolkit })
          return [first, second, third] as const
        })
        const [first, second, third] = yield* program.pipe(Effect.provide(Layer.merge(server(root, 1), model)))
        const [read] = first.toolResults
        assert.isFalse(read!.isFailure)
        assert.match((read!.result as { proof: string }).proof, /^rp1\./)
        const [write] = second.toolResults
        assert.isFalse(write!.isFailure)
        assert.strictEqual((write!.result as { created: boolean }).created, false)
        assert.strictEqual(third.text, "Added tea.")
        assert.strictEqual(readFileSync(join(root, "notes.md"), "utf8"), "# notes\n- tea\n")
        assert.include(seen[0]!, "world_tools_file_write")
      }).pipe(Effect.scoped)
    )

    it.effect("a typed failure comes back to the model as its JSON, and the generation goes on", () =>
      Effect.gen(function* () {
        const root = yield* workspace({ "draft.md": "draft\n" })
        const model = scripted(() => [call("c1", "world_tools_file_write", { path: "draft.md", content: "x" })])
        const response = yield* LanguageModel.generateText({
          prompt: "Overwrite draft.md",
          toolkit: yield* Toolkit.fromInvoker.pipe(Effect.provide(server(root, 1)))
        }).pipe(Effect.provide(model))
        const [result] = response.toolResults
        assert.isTrue(result!.isFailure)
        const failure = result!.result as { _tag: string; reason: string; message: string }
        assert.strictEqual(failure._tag, "ProofRejected")
        assert.strictEqual(failure.reason, "never-read")
        assert.match(failure.message, /Read it first/)
        assert.strictEqual(readFileSync(join(root, "draft.md"), "utf8"), "draft\n")
      }).pipe(Effect.scoped)
    )

    it.effect("a path the caller is not offered is not a tool the model can call", () =>
      Effect.gen(function* () {
        const root = yield* workspace({})
        const model = scripted(() => [call("c1", "world_tools_file_write", { path: "new.md", content: "x" })])
        const error = yield* LanguageModel.generateText({
          prompt: "Write new.md",
          toolkit: yield* Toolkit.fromInvoker.pipe(Effect.provide(server(root, 0)))
        }).pipe(Effect.provide(model), Effect.flip)
        assert.isTrue(AiError.isAiError(error))
        // effect/ai refuses a response that calls a tool outside the toolkit before any handler runs.
        assert.strictEqual((error as AiError.AiError).reason._tag, "InvalidOutputError")
        assert.isFalse(existsSync(join(root, "new.md")))
      }).pipe(Effect.scoped)
    )

    it.effect("a model's call asks the approver like any other, and a refusal is ApprovalDenied", () =>
      Effect.gen(function* () {
        const root = yield* workspace({})
        const asked: Array<Trust.ApprovalRequest> = []
        const model = scripted(() => [call("c1", "world_tools_file_write", { path: "out.md", content: "x" })])
        const toolkit = yield* Toolkit.fromInvoker.pipe(
          Effect.provide(
            server(root, 2, {
              writable: ["notes/**"],
              approver: (request) => Effect.sync(() => asked.push(request)).pipe(Effect.as(false))
            })
          )
        )
        const response = yield* LanguageModel.generateText({ prompt: "Write out.md", toolkit }).pipe(
          Effect.provide(model)
        )
        const [result] = response.toolResults
        assert.isTrue(result!.isFailure)
        assert.strictEqual((result!.result as { _tag: string })._tag, "ApprovalDenied")
        assert.strictEqual(asked.length, 1)
        assert.isFalse(existsSync(join(root, "out.md")))
      }).pipe(Effect.scoped)
    )

    it.effect("calls run as the server's caller, whatever the model puts in the arguments", () =>
      Effect.gen(function* () {
        const root = yield* workspace({ "a.md": "a\n" })
        const model = scripted(() => [
          call("c1", "world_tools_file_read", { path: "a.md", observerId: "root", trust: 3, observer: { id: "root" } })
        ])
        const program = Effect.gen(function* () {
          const events = yield* Events.Events
          const stream = yield* events.subscribe
          const fiber = yield* Effect.forkChild(
            Stream.runCollect(Stream.takeUntil(stream, (e) => e._tag !== "tool.invoked"))
          )
          const toolkit = yield* Toolkit.fromInvoker
          yield* LanguageModel.generateText({ prompt: "Read a.md", toolkit })
          return yield* Fiber.join(fiber)
        })
        const events = yield* program.pipe(Effect.provide(Layer.merge(server(root, 1), model)))
        assert.deepStrictEqual(
          events.map((e) => [e._tag, "path" in e ? e.path : undefined, e.observerId]),
          [
            // Refused (the claims are keys file.read does not take), and recorded as the server's caller's.
            ["tool.invoked", "world.tools.file.read", "toolkit-test"],
            ["tool.failed", "world.tools.file.read", "toolkit-test"]
          ]
        )
      }).pipe(Effect.scoped)
    )
  })
})
