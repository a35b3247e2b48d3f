/**
 * Model steps are tools: one `generateObject` call decoded by the output
 * schema, typed failures, L0 and calling the network, composable with the
 * file tools into one gated, traced pipeline; and the `model` family on the
 * road, offered only when the server has a model. The model is scripted.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Invoke, ModelTool, Server } from "@ugent/agentese"
import { Scripted } from "@ugent/agentese/providers"
import { Observer, Tool, ToolError, Trust } from "@ugent/core"
import { Grep, Workspace, Write } from "@ugent/tools"
import { Stores, Traced, TraceStore } from "@ugent/wrappers"
import { Duration, Effect, Layer, Option, Schema } from "effect"
import { AiError, type Prompt, type Response } from "effect/ai"

const workspace = (files: Readonly<Record<string, string>> = {}) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const root = mkdtempSync(join(tmpdir(), "ugent-modeltool-"))
      for (const [name, content] of Object.entries(files)) writeFileSync(join(root, name), content)
      return root
    }),
    (root) => Effect.sync(() => rmSync(root, { recursive: true, force: true }))
  )

/** The text of a prompt's messages, joined. */
const textOf = (prompt: Prompt.Prompt): string =>
  prompt.content
    .map((m) =>
      typeof m.content === "string" ? m.content : m.content.map((p) => (p.type === "text" ? p.text : "")).join("")
    )
    .join("\n")

const title = ModelTool.make({
  name: "text.title",
  description: "Gives a text a title.",
  input: Schema.Struct({ text: Schema.String }),
  output: Schema.Struct({ title: Schema.String.check(Schema.isMinLength(1)) }),
  prompt: ({ text }) => `Title this:\n${text}`
})

const runTitle = (reply: Scripted.Script) =>
  title.run({ text: "tea" }).pipe(Effect.provide([Scripted.layer(reply), Trust.grant(0)]), Effect.flip)

const finishing = (reason: Response.FinishReason, text: string): Scripted.Reply => [
  { type: "text", text },
  { ...Scripted.text("")[1]!, reason } as Response.PartEncoded
]

const aiError = (reason: AiError.AiErrorReason) => AiError.make({ module: "Test", method: "generateObject", reason })

describe("ModelTool", () => {
  describe("make", () => {
    it.effect("is one generateObject call: the prompt of the input, the answer decoded by the output schema", () =>
      Effect.gen(function* () {
        const seen: Array<Scripted.Request> = []
        const model = Scripted.layer((request) => {
          seen.push(request)
          return Scripted.json({ title: "On tea" })
        })
        const out = yield* title.run({ text: "tea" }).pipe(Effect.provide([model, Trust.grant(0)]))
        assert.deepStrictEqual(out, { title: "On tea" })
        assert.strictEqual(seen.length, 1)
        assert.strictEqual(seen[0]!.responseFormat.type, "json")
        assert.strictEqual(
          seen[0]!.responseFormat.type === "json" ? seen[0]!.responseFormat.objectName : "",
          "text_title"
        )
        assert.strictEqual(textOf(seen[0]!.prompt), "Title this:\ntea")
        assert.deepStrictEqual([title.trust, title.effects.callsNetwork, title.effects.writesFs], [0, true, false])
      })
    )

    it.effect("an output that is not an object travels as { value } and comes back unwrapped", () =>
      Effect.gen(function* () {
        const count = ModelTool.make({
          name: "text.count",
          description: "Counts the nouns.",
          input: Schema.String,
          output: Schema.Int,
          prompt: (text) => text
        })
        const out = yield* count
          .run("tea and cake")
          .pipe(Effect.provide([Scripted.layer(() => Scripted.json({ value: 2 })), Trust.grant(0)]))
        assert.strictEqual(out, 2)
      })
    )

    it.effect("typed failures, each with its kind: refused, malformed, rate limited, unavailable", () =>
      Effect.gen(function* () {
        const refused = yield* runTitle(() => finishing("content-filter", "I can't help with that."))
        assert.strictEqual(refused._tag, "ModelRefused")
        assert.strictEqual(ToolError.kindOf(refused), "invalid_input")
        assert.include(refused.message, "I can't help with that.")

        const notJson = yield* runTitle(() => Scripted.text("Here is a title: On tea"))
        assert.strictEqual(notJson._tag, "ModelOutputInvalid")
        assert.strictEqual(ToolError.kindOf(notJson), "failed")
        assert.isTrue(ToolError.isRetryable(notJson))

        const misfit = yield* runTitle(() => Scripted.json({ title: "" }))
        assert.strictEqual(misfit._tag, "ModelOutputInvalid")
        assert.match(misfit.message, /does not fit its output schema/)

        const limited = yield* runTitle(() =>
          Effect.fail(aiError(new AiError.RateLimitError({ retryAfter: Duration.seconds(3) })))
        )
        assert.strictEqual(limited._tag, "ModelRateLimited")
        assert.strictEqual(ToolError.kindOf(limited), "rate_limited")
        assert.strictEqual(ToolError.retryAfterMillis(limited), 3000)

        const down = yield* runTitle(() =>
          Effect.fail(
            aiError(
              new AiError.NetworkError({
                reason: "TransportError",
                method: "POST",
                url: "http://127.0.0.1:1/v1",
                description: "ECONNREFUSED"
              })
            )
          )
        )
        assert.strictEqual(down._tag, "ModelCallFailed")
        assert.strictEqual(ToolError.kindOf(down), "unavailable")
        // Every failure encodes with the tool's failure schema, as the road encodes it.
        for (const e of [refused, notJson, misfit, limited, down]) {
          assert.isTrue(Schema.is(ModelTool.ModelFailure)(e))
          Schema.encodeUnknownSync(title.failure)(e)
        }
      })
    )

    it.effect("grep >> a model step >> write is one typed, gated, traced pipeline", () =>
      Effect.gen(function* () {
        const root = yield* workspace({
          "a.ts": "// TODO: tea\nconst a = 1\n",
          "b.ts": "// TODO: cake\n",
          "c.ts": "const c = 3\n"
        })
        const summarizeMatches = ModelTool.make({
          name: "todo.note",
          description: "Writes a note about the files with TODOs.",
          input: Grep.Output,
          output: Schema.Struct({ path: Schema.String, content: Schema.String }),
          prompt: (found) =>
            `Write TODO.md listing these files:\n${found.mode === "files" ? found.files.join("\n") : ""}`
        })
        const pipeline = Tool.pipeline(Grep.grep, summarizeMatches, Write.write)
        // The pipeline is as strong as its strongest step, and declares every step's effects.
        assert.strictEqual(pipeline.trust, 1)
        assert.deepStrictEqual(
          [pipeline.effects.readsFs, pipeline.effects.writesFs, pipeline.effects.callsNetwork],
          [true, true, true]
        )
        let asked = 0
        const model = Scripted.layer((request) => {
          asked++
          const files = textOf(request.prompt).split("\n").slice(1)
          return Scripted.json({ path: "TODO.md", content: files.map((f) => `- ${f}\n`).join("") })
        })
        const served = Traced(Trust.gate(pipeline), { path: "todo.pipeline" })
        const services = Layer.mergeAll(Workspace.layer({ root }), model, Stores.layerMemory())
        // An L0 caller is refused before anything runs: the model is never asked.
        const denied = yield* Effect.flip(
          served
            .run({ pattern: "TODO" })
            .pipe(
              Traced.withCallId("call-denied"),
              Effect.provide(Observer.layer({ id: "guest", trust: 0 })),
              Effect.provide(services)
            )
        )
        assert.strictEqual(denied._tag, "TrustDenied")
        assert.strictEqual(asked, 0)
        // An L1 caller runs it: grep, the model, the write, traced as one call.
        const [written, trace] = yield* Effect.gen(function* () {
          const out = yield* served.run({ pattern: "TODO" }).pipe(Traced.withCallId("call-1"))
          const stored = yield* Effect.flatMap(TraceStore.TraceStore, (store) => store.get("call-1"))
          return [out, stored] as const
        }).pipe(Effect.provide(Observer.layer({ id: "agent", trust: 1 })), Effect.provide(services))
        assert.strictEqual(asked, 1)
        assert.isTrue(written.created)
        assert.strictEqual(readFileSync(join(root, "TODO.md"), "utf8"), "- a.ts\n- b.ts\n")
        assert.strictEqual(Option.getOrThrow(trace).path, "todo.pipeline")
        assert.strictEqual(Option.getOrThrow(trace).status, "success")
      }).pipe(Effect.scoped)
    )
  })

  describe("the model family on the road", () => {
    it.effect("is offered only when the server has a model", () =>
      Effect.gen(function* () {
        const root = yield* workspace()
        const paths = (options: Partial<Server.Options>) =>
          Effect.flatMap(Invoke.Invoker, (road) => road.list).pipe(
            Effect.map((offers) => offers.map((o) => o.path).filter((p) => p.startsWith("world.tools.model."))),
            Effect.provide(Server.layer({ root, stores: "memory", ...options }))
          )
        assert.deepStrictEqual(yield* paths({}), [])
        assert.deepStrictEqual(yield* paths({ model: Scripted.replay([]) }), [
          "world.tools.model.extract",
          "world.tools.model.summarize"
        ])
      }).pipe(Effect.scoped)
    )

    it.effect("model.summarize and model.extract through invoke", () =>
      Effect.gen(function* () {
        const root = yield* workspace()
        const seen: Array<Scripted.Request> = []
        const model = Scripted.layer((request) => {
          seen.push(request)
          const text = textOf(request.prompt)
          if (text.includes("You summarize")) return Scripted.json({ summary: "Tea, then cake." })
          return text.includes("broken") ? Scripted.json({ name: 7 }) : Scripted.json({ name: "Ada", age: 36 })
        })
        const road = Server.layer({ root, stores: "memory", model })
        const [summary, extracted, misfit, badSchema] = yield* Effect.gen(function* () {
          return [
            yield* Invoke.invoke({
              path: "world.tools.model.summarize",
              input: { text: "We had tea. Then we had cake.", maxWords: 5 }
            }),
            yield* Invoke.invoke({
              path: "world_tools_model_extract",
              input: {
                text: "Ada is 36.",
                schema: {
                  type: "object",
                  properties: { name: { type: "string" }, age: { type: "integer" } },
                  required: ["name"]
                }
              }
            }),
            yield* Invoke.invoke({
              path: "world.tools.model.extract",
              input: { text: "broken", schema: { type: "object", properties: { name: { type: "string" } } } }
            }),
            yield* Invoke.invoke({
              path: "world.tools.model.extract",
              input: { text: "x", schema: { type: "object", not: { type: "string" } } }
            })
          ] as const
        }).pipe(Effect.provide(road))
        assert.deepStrictEqual(summary.ok && summary.result, { summary: "Tea, then cake." })
        assert.include(textOf(seen[0]!.prompt), "at most 5 words")
        assert.deepStrictEqual(extracted.ok && extracted.result, { data: { name: "Ada", age: 36 } })
        const extractFormat = seen[1]!.responseFormat
        assert.strictEqual(extractFormat.type === "json" ? extractFormat.objectName : "", "data")
        assert.isFalse(misfit.ok)
        assert.strictEqual(misfit.ok ? "" : misfit.error._tag, "ModelOutputInvalid")
        assert.isFalse(badSchema.ok)
        assert.strictEqual(badSchema.ok ? "" : badSchema.error._tag, "UnsupportedSchema")
        assert.strictEqual(badSchema.ok ? "" : badSchema.kind, "invalid_input")
        // A bad schema is found before the model is asked.
        assert.strictEqual(seen.length, 3)
      }).pipe(Effect.scoped)
    )
  })
})
