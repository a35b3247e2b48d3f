/**
 * The agent loop over a scripted model (a `LanguageModel` that replays
 * planned answers) and the real road: calls go through `invoke` with the
 * run's own session, budgets end a run with what is missing, malformed calls
 * come back to the model, and two laws: a loop of zero steps is the identity
 * on the prompt, and a path the policy refuses never runs, whatever the
 * model asks.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Agent, Events, Families, Invoke, Path, Server } from "@ugent/agentese"
import { Scripted } from "@ugent/agentese/providers"
import { Family, Tool, type Trust } from "@ugent/core"
import { AuditStore } from "@ugent/wrappers"
import { Effect, Fiber, Layer, Schema, Stream } from "effect"
import { AiError, Prompt } from "effect/ai"

/** A temp workspace with files, removed when the scope closes. */
const workspace = (files: Readonly<Record<string, string>> = {}) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const root = mkdtempSync(join(tmpdir(), "ugent-agent-"))
      for (const [name, content] of Object.entries(files)) writeFileSync(join(root, name), content)
      return root
    }),
    (root) => Effect.sync(() => rmSync(root, { recursive: true, force: true }))
  )

/** A tool that counts its runs: the proof that a refused call never ran. */
const spy = () => {
  const runs = { count: 0 }
  const poke = Tool.make({
    name: "spy.poke",
    description: "Counts a poke.",
    input: Schema.Struct({ note: Schema.optionalKey(Schema.String) }),
    output: Schema.Struct({ count: Schema.Number }),
    run: () => Effect.sync(() => ({ count: ++runs.count }))
  })
  return { runs, family: Family.make({ name: "spy", prefix: "world.tools", tools: { "spy.poke": poke } }) }
}

const server = (root: string, options: Partial<Server.Options> = {}) =>
  Server.layer({ root, stores: "memory", observerId: "agent-test", ...options })

/** Runs an agent over a script on a server. */
const runAgent = (
  model: Layer.Layer<import("effect/ai").LanguageModel.LanguageModel>,
  road: ReturnType<typeof server>,
  options: Agent.Options
) => Agent.run(options).pipe(Effect.provide(Layer.merge(model, road)))

/** The tool results in a prompt, in order. */
const toolResults = (prompt: Prompt.Prompt) =>
  prompt.content.flatMap((m) => (m.role === "tool" ? m.content.filter((p) => p.type === "tool-result") : []))

const read = (path: string, id?: string): Scripted.Call => ({ name: "world_tools_file_read", params: { path }, id })

describe("Agent", () => {
  describe("run", () => {
    it.effect("offers exactly the caller's paths, runs a call through the road, and answers", () =>
      Effect.gen(function* () {
        const root = yield* workspace({ "notes.md": "alpha\nbeta\n" })
        const seen: Array<Scripted.Request> = []
        const model = Scripted.layer((request, i) => {
          seen.push(request)
          return i === 0 ? Scripted.calls([read("notes.md")]) : Scripted.text("It says alpha and beta.")
        })
        const road = server(root, { trust: 0 })
        const offers = yield* Effect.flatMap(Invoke.Invoker, (r) => r.list).pipe(Effect.provide(road))
        const result = yield* runAgent(model, road, { prompt: "What does notes.md say?" })
        assert.strictEqual(result._tag, "Complete")
        assert.strictEqual(result.text, "It says alpha and beta.")
        assert.deepStrictEqual(
          seen[0]!.tools,
          offers.map((o) => Path.toProviderName(o.path))
        )
        assert.notInclude(seen[0]!.tools, "world_tools_file_write")
        // The first request starts with the system prompt of those offers, then the task.
        assert.deepStrictEqual(
          seen[0]!.prompt.content.map((m) => m.role),
          ["system", "user"]
        )
        // The second sees the result of the call.
        const [result0] = toolResults(seen[1]!.prompt)
        assert.strictEqual(result0!.name, "world_tools_file_read")
        assert.include(JSON.stringify(result0!.result), "alpha")
        assert.strictEqual(result.steps.length, 2)
        const call = result.steps[0]!.calls[0]!
        assert.strictEqual(call.path, "world.tools.file.read")
        assert.isTrue(call.outcome?.ok)
        // The conversation holds the task, each response and its results, never the system prompt.
        assert.deepStrictEqual(
          result.prompt.content.map((m) => m.role),
          ["user", "assistant", "tool", "assistant"]
        )
      }).pipe(Effect.scoped)
    )

    it.effect("proofs flow between the steps of a run, and only of that run (a session each)", () =>
      Effect.gen(function* () {
        const root = yield* workspace({ "notes.md": "tea\n" })
        const road = server(root, { trust: 1 })
        const write = { name: "world_tools_file_write", params: { path: "notes.md", content: "tea\ncake\n" } }
        const first = Scripted.replay([
          Scripted.calls([read("notes.md")]),
          Scripted.calls([write]),
          Scripted.text("Done.")
        ])
        const context = yield* Layer.build(road)
        const one = yield* Agent.run({ prompt: "Add cake" }).pipe(Effect.provide(first), Effect.provideContext(context))
        assert.strictEqual(one._tag, "Complete")
        assert.isTrue(one.steps[1]!.calls[0]!.outcome?.ok, JSON.stringify(one.steps[1]!.calls[0]!.outcome))
        assert.strictEqual(readFileSync(join(root, "notes.md"), "utf8"), "tea\ncake\n")
        // A second run on the same server has not read the file: its write is refused.
        const second = Scripted.replay([
          Scripted.calls([{ ...write, params: { path: "notes.md", content: "x\n" } }]),
          Scripted.text("Tried.")
        ])
        const two = yield* Agent.run({ prompt: "Overwrite" }).pipe(
          Effect.provide(second),
          Effect.provideContext(context)
        )
        const refused = two.steps[0]!.calls[0]!.outcome!
        assert.isFalse(refused.ok)
        assert.strictEqual(refused.ok ? "" : refused.error._tag, "ProofRejected")
        assert.notStrictEqual(one.id, two.id)
        assert.strictEqual(readFileSync(join(root, "notes.md"), "utf8"), "tea\ncake\n")
      }).pipe(Effect.scoped)
    )

    it.effect("publishes agent.step per step and agent.done at the end", () =>
      Effect.gen(function* () {
        const root = yield* workspace({ "a.md": "a\n" })
        const road = server(root)
        const context = yield* Layer.build(road)
        const events = yield* Events.Events.pipe(Effect.provideContext(context))
        const stream = yield* events.subscribe
        const fiber = yield* Effect.forkChild(
          Stream.runCollect(
            stream.pipe(
              Stream.filter((e) => e._tag.startsWith("agent.")),
              Stream.take(3)
            )
          )
        )
        yield* Effect.yieldNow
        const result = yield* Agent.run({ prompt: "Read a.md" }).pipe(
          Effect.provide(
            Scripted.replay([
              Scripted.calls([read("a.md"), { name: "nope", params: {} }], { usage: { input: 10, output: 5 } }),
              Scripted.text("a", { input: 20, output: 2 })
            ])
          ),
          Effect.provideContext(context)
        )
        const seen = yield* Fiber.join(fiber)
        assert.deepStrictEqual(
          seen.map((e) => e._tag),
          ["agent.step", "agent.step", "agent.done"]
        )
        const [step1, , done] = seen
        if (step1?._tag !== "agent.step" || done?._tag !== "agent.done") throw new Error("wrong events")
        assert.strictEqual(step1.id, result.id)
        assert.strictEqual(step1.observerId, "agent-test")
        assert.deepStrictEqual(
          step1.calls.map((c) => [c.name, c.path, c.status, c.kind]),
          [
            ["world_tools_file_read", "world.tools.file.read", "ok", undefined],
            ["nope", undefined, "failed", "not_found"]
          ]
        )
        assert.isString(step1.calls[0]!.callId)
        assert.deepStrictEqual([step1.inputTokens, step1.outputTokens], [10, 5])
        assert.deepStrictEqual(
          [done.status, done.steps, done.calls, done.inputTokens, done.outputTokens, done.message],
          ["complete", 2, 2, 30, 7, "a"]
        )
      }).pipe(Effect.scoped)
    )

    it.effect("a model that cannot answer fails the run with its AiError, and agent.done says so", () =>
      Effect.gen(function* () {
        const root = yield* workspace()
        const context = yield* Layer.build(server(root))
        const events = yield* Events.Events.pipe(Effect.provideContext(context))
        const stream = yield* events.subscribe
        const fiber = yield* Effect.forkChild(
          Stream.runHead(stream.pipe(Stream.filter((e) => e._tag === "agent.done")))
        )
        yield* Effect.yieldNow
        const down = Scripted.layer(() =>
          Effect.fail(
            AiError.make({
              module: "Test",
              method: "generateText",
              reason: new AiError.NetworkError({
                reason: "TransportError",
                method: "POST",
                url: "http://127.0.0.1:1/v1/chat/completions",
                description: "connection refused"
              })
            })
          )
        )
        const error = yield* Effect.flip(
          Agent.run({ prompt: "x" }).pipe(Effect.provide(down), Effect.provideContext(context))
        )
        assert.strictEqual(error._tag, "AiError")
        const done = yield* Fiber.join(fiber)
        assert.strictEqual(done._tag === "Some" && done.value._tag === "agent.done" ? done.value.status : "", "failed")
      }).pipe(Effect.scoped)
    )
  })

  describe("budgets", () => {
    it.effect("steps: a model that keeps calling ends incomplete, saying what it last asked for", () =>
      Effect.gen(function* () {
        const root = yield* workspace({ "a.md": "a\n" })
        let asked = 0
        const model = Scripted.layer(() => {
          asked++
          return Scripted.calls([read("a.md")])
        })
        const result = yield* runAgent(model, server(root, { loop: false }), { prompt: "Loop", maxSteps: 3 })
        assert.strictEqual(asked, 3)
        assert.strictEqual(result._tag, "Incomplete")
        if (result._tag !== "Incomplete") return
        assert.deepStrictEqual(result.missing, { budget: "steps", limit: 3, used: 3 })
        assert.strictEqual(result.lastAsked[0]!.path, "world.tools.file.read")
        assert.strictEqual(
          result.message,
          'Incomplete: the budget of 3 steps ran out before the model answered. It last asked for world.tools.file.read {"path":"a.md"}.'
        )
      }).pipe(Effect.scoped)
    )

    it.effect("calls per response: the calls beyond the recipe's limit are not run, and the model is told", () =>
      Effect.gen(function* () {
        const root = yield* workspace()
        const { runs, family } = spy()
        const road = server(root, { families: [family], recipe: { name: "r", allow: ["*"], maxCallsPerResponse: 2 } })
        const poke = { name: "world_tools_spy_poke", params: {} }
        const seen: Array<Scripted.Request> = []
        const model = Scripted.layer((request, i) => {
          seen.push(request)
          return i === 0 ? Scripted.calls([poke, poke, poke]) : Scripted.text("ok")
        })
        const result = yield* runAgent(model, road, { prompt: "Poke thrice" })
        assert.strictEqual(runs.count, 2)
        assert.strictEqual(result._tag, "Complete")
        const third = result.steps[0]!.calls[2]!.outcome!
        assert.isFalse(third.ok)
        if (third.ok) return
        assert.strictEqual(third.error._tag, "TooManyCalls")
        assert.include(JSON.stringify(toolResults(seen[1]!.prompt)[2]!.result), "at most 2 calls")
        // The system prompt says so too.
        const system = seen[0]!.prompt.content[0]!
        assert.include(system.role === "system" ? system.content : "", "At most 2 calls in one response")
      }).pipe(Effect.scoped)
    )

    it.effect("tokens: over the budget, the response's calls are not run", () =>
      Effect.gen(function* () {
        const root = yield* workspace()
        const { runs, family } = spy()
        const poke = { name: "world_tools_spy_poke", params: { note: "x" } }
        const model = Scripted.layer(() => Scripted.calls([poke], { usage: { input: 500, output: 100 } }))
        const result = yield* runAgent(model, server(root, { families: [family], loop: false }), {
          prompt: "Poke",
          maxTokens: 1000
        })
        assert.strictEqual(runs.count, 1)
        assert.strictEqual(result._tag, "Incomplete")
        if (result._tag !== "Incomplete") return
        assert.deepStrictEqual(result.missing, { budget: "tokens", limit: 1000, used: 1200 })
        assert.isUndefined(result.lastAsked[0]!.outcome)
        assert.deepStrictEqual(result.usage, { inputTokens: 1000, outputTokens: 200 })
        assert.include(result.message, "(not run)")
      }).pipe(Effect.scoped)
    )

    it.live("time: a run past its wall time ends incomplete", () =>
      Effect.gen(function* () {
        const root = yield* workspace({ "a.md": "a\n" })
        const model = Scripted.layer(() => Effect.as(Effect.sleep("150 millis"), Scripted.calls([read("a.md")])))
        const result = yield* runAgent(model, server(root, { loop: false }), { prompt: "Slow", timeout: "400 millis" })
        assert.strictEqual(result._tag, "Incomplete")
        if (result._tag !== "Incomplete") return
        assert.strictEqual(result.missing.budget, "time")
        assert.isAtLeast(result.steps.length, 1)
        assert.isAtMost(result.durationMillis, 1000)
        assert.match(result.message, /^Incomplete: the time budget of 400ms ran out/)
      }).pipe(Effect.scoped)
    )
  })

  describe("malformed calls come back to the model as failed calls it can correct", () => {
    it.effect("an unknown tool, arguments that are not JSON, arguments that do not decode", () =>
      Effect.gen(function* () {
        const root = yield* workspace({ "a.md": "a\n" })
        const seen: Array<Scripted.Request> = []
        const model = Scripted.layer((request, i) => {
          seen.push(request)
          return i === 0
            ? Scripted.calls([
                { name: "read_file", params: { path: "a.md" } },
                { name: "world_tools_file_read", params: '{"path": "a.md"' },
                { name: "world_tools_file_read", params: { path: 5 } },
                { name: "world_tools_file_read", params: [1, 2] }
              ])
            : i === 1
              ? Scripted.calls([read("a.md")])
              : Scripted.text("a")
        })
        const result = yield* runAgent(model, server(root), { prompt: "Read a.md" })
        assert.strictEqual(result._tag, "Complete")
        const failures = toolResults(seen[1]!.prompt).map((r) => r.result as { _tag: string; message: string })
        assert.deepStrictEqual(
          failures.map((f) => f._tag),
          ["UnknownTool", "MalformedArguments", "InvalidInput", "MalformedArguments"]
        )
        assert.match(failures[0]!.message, /There is no tool named "read_file".*world_tools_file_read/)
        assert.strictEqual(
          failures[1]!.message,
          'The arguments of world_tools_file_read are not a JSON object (received {"path": "a.md"). Call world_tools_file_read again with its arguments as one JSON object, such as {"path":"README.md"}.'
        )
        assert.isTrue(result.steps[1]!.calls[0]!.outcome?.ok)
      }).pipe(Effect.scoped)
    )
  })

  describe("text calls", () => {
    it.effect(
      "a model without tool calling writes <tool_use>, EXECUTE and <tool_call>; results come back as text",
      () =>
        Effect.gen(function* () {
          const root = yield* workspace({ "a.md": "alpha\n", "b.md": "beta\n" })
          const seen: Array<Scripted.Request> = []
          const model = Scripted.layer((request, i) => {
            seen.push(request)
            return i === 0
              ? Scripted.text(
                  [
                    "Reading both.",
                    '<tool_use><name>world_tools_file_read</name><input>{"path": "a.md"}</input></tool_use>',
                    "EXECUTE: world.tools.file.read --path=b.md",
                    "<tool_call>{broken}</tool_call>"
                  ].join("\n")
                )
              : Scripted.text("alpha and beta")
          })
          const result = yield* runAgent(model, server(root), { prompt: "Read a.md and b.md", calls: "text" })
          assert.strictEqual(result._tag, "Complete")
          assert.deepStrictEqual(seen[0]!.tools, [])
          const system = seen[0]!.prompt.content[0]!
          assert.include(system.role === "system" ? system.content : "", "<tool_use><name>")
          assert.deepStrictEqual(
            result.steps[0]!.calls.map((c) => [c.path ?? c.name, c.outcome?.ok]),
            [
              ["world.tools.file.read", true],
              ["world.tools.file.read", true],
              ["(unparsed)", false]
            ]
          )
          const results = seen[1]!.prompt.content.at(-1)!
          const text = results.role === "user" && results.content[0]?.type === "text" ? results.content[0].text : ""
          assert.include(text, '<tool_result name="world.tools.file.read" ok="true">')
          assert.include(text, "alpha")
          assert.include(text, "beta")
          assert.include(text, "A correct call looks like: <tool_call>")
        }).pipe(Effect.scoped)
    )
  })

  describe("laws", () => {
    it.effect.prop(
      "a loop of zero steps is the identity on the prompt: it is returned untouched and the model is never asked",
      { task: Schema.String, asPrompt: Schema.Boolean },
      ({ task, asPrompt }) =>
        Effect.gen(function* () {
          const root = yield* workspace()
          let asked = 0
          const model = Scripted.layer(() => {
            asked++
            return Scripted.text("no")
          })
          const input = asPrompt ? Prompt.make(task) : task
          const result = yield* runAgent(model, server(root), { prompt: input, maxSteps: 0 })
          assert.strictEqual(asked, 0)
          assert.deepStrictEqual(result.prompt, Prompt.make(task))
          if (asPrompt) assert.strictEqual(result.prompt, input)
          assert.strictEqual(result._tag, "Incomplete")
          assert.deepStrictEqual(result.steps, [])
        }).pipe(Effect.scoped),
      { arbitrary: { runs: 25 } }
    )

    const Ask = Schema.Struct({
      spelling: Schema.Literals(["dotted", "safe", "padded", "pipeline-text", "tool_use-text", "execute-text"]),
      note: Schema.String,
      trust: Schema.Literals([0, 1, 2, 3])
    })

    it.effect.prop(
      "a path the policy refuses never runs, whatever the model asks, and each refusal is recorded",
      { asks: Schema.Array(Ask).check(Schema.isMinLength(1), Schema.isMaxLength(4)) },
      ({ asks }) =>
        Effect.gen(function* () {
          const root = yield* workspace()
          const { runs, family } = spy()
          const road = server(root, {
            families: [...Families.builtIn, family],
            recipe: { name: "no-spy", allow: ["*"], deny: ["world.tools.spy.*"] },
            trust: asks[0]!.trust as Trust.TrustLevel,
            loop: false
          })
          const native = asks.filter((a) => !a.spelling.endsWith("-text"))
          const text = asks.filter((a) => a.spelling.endsWith("-text"))
          const nativeName = (a: typeof Ask.Type) =>
            a.spelling === "dotted"
              ? "world.tools.spy.poke"
              : a.spelling === "safe"
                ? "world_tools_spy_poke"
                : " world.tools.spy.poke "
          const textCall = (a: typeof Ask.Type) =>
            a.spelling === "pipeline-text"
              ? `EXECUTE: world.tools.file.list >> world.tools.spy.poke --note=${JSON.stringify(a.note)}`
              : a.spelling === "tool_use-text"
                ? `<tool_use><name>world_tools_spy_poke</name><input>${JSON.stringify({ note: a.note })}</input></tool_use>`
                : `EXECUTE: world.tools.spy.poke --note=${JSON.stringify(a.note)}`
          const context = yield* Layer.build(road)
          const nativeRun = Agent.run({ prompt: "Poke", maxSteps: 2 }).pipe(
            Effect.provide(
              Scripted.replay([
                Scripted.calls(native.map((a) => ({ name: nativeName(a), params: { note: a.note } }))),
                Scripted.text("done")
              ])
            ),
            Effect.provideContext(context)
          )
          const textRun = Agent.run({ prompt: "Poke", maxSteps: 2, calls: "text" }).pipe(
            Effect.provide(Scripted.replay([Scripted.text(text.map(textCall).join("\n")), Scripted.text("done")])),
            Effect.provideContext(context)
          )
          const results = [
            ...(native.length > 0 ? [yield* nativeRun] : []),
            ...(text.length > 0 ? [yield* textRun] : [])
          ]
          assert.strictEqual(runs.count, 0)
          const calls = results.flatMap((r) => r.steps.flatMap((s) => s.calls))
          assert.strictEqual(calls.length, asks.length)
          for (const c of calls) {
            assert.isFalse(c.outcome?.ok)
            assert.strictEqual(c.outcome?.ok === false ? c.outcome.kind : "", "denied")
          }
          // Every refusal left its audit record.
          const audit = yield* Effect.flatMap(AuditStore.AuditStore, (store) =>
            store.list({ path: "world.tools.spy.poke", limit: 100 })
          ).pipe(Effect.provideContext(context), Effect.orDie)
          const refusals = audit.filter((e) => e.phase === "after" && e.status === "failure")
          assert.strictEqual(refusals.length, asks.length)
          assert.isTrue(refusals.every((e) => e.error?.tag === "PolicyDenied"))
        }).pipe(Effect.scoped),
      { arbitrary: { runs: 30 }, timeout: 60_000 }
    )
  })
})
