/**
 * `self.tools.agent.run`: a sub-agent for the caller, on the road. It runs
 * at the lower of the level asked and its parent's, under the parent's
 * recipe narrowed by its own allow and deny, starts no sub-agent of its own,
 * and its calls are recorded under a child caller whose records name the
 * parent's call. (The law over generated parents, children and calls is in
 * `laws/test/Delegation.test.ts`; the compiler's check of `Agent.asTool` in
 * `test/types/SubAgent.types.ts`.)
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Agent, Families, Invoke, Self, Server } from "@ugent/agentese"
import { Scripted } from "@ugent/agentese/providers"
import { AuditStore, TraceStore } from "@ugent/wrappers"
import { Effect, Layer, Option } from "effect"
import type { Prompt } from "effect/ai"

const workspace = () =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const root = mkdtempSync(join(tmpdir(), "ugent-subagent-"))
      writeFileSync(join(root, "a.txt"), "alpha\n")
      return root
    }),
    (root) => Effect.sync(() => rmSync(root, { recursive: true, force: true }))
  )

const userText = (prompt: Prompt.Prompt): string =>
  prompt.content
    .filter((m) => m.role === "user")
    .map((m) =>
      typeof m.content === "string" ? m.content : m.content.map((p) => (p.type === "text" ? p.text : "")).join("")
    )
    .join("")

/** The parent delegates once; the child asks for five calls, some its parent's recipe or its own refuse. */
const model = Scripted.layer((request) => {
  const answered = request.prompt.content.some((m) => m.role === "tool")
  if (userText(request.prompt).includes("child task")) {
    return answered
      ? Scripted.text("child done")
      : Scripted.calls([
          { name: "world_tools_file_write", params: { path: "new.txt", content: "x\n" }, id: "w" },
          { name: "world_tools_git_log", params: {}, id: "g" },
          { name: "world_tools_file_list", params: {}, id: "l" },
          { name: "self_tools_agent_run", params: { task: "grandchild" }, id: "s" },
          { name: "world_tools_file_read", params: { path: "a.txt" }, id: "r" }
        ])
  }
  return answered
    ? Scripted.text("parent done")
    : Scripted.calls([
        {
          name: "self_tools_agent_run",
          params: { task: "child task", trust: 1, deny: ["world.tools.file.list"] },
          id: "delegate"
        }
      ])
})

const families = [...Families.builtIn, Self.family, Agent.family]

describe("self.tools.agent.run", () => {
  it.effect(
    "a sub-agent runs within its parent: its level, its parent's recipe and its own, no sub-agent of its own",
    () =>
      Effect.gen(function* () {
        const root = yield* workspace()
        const road = Server.layer({
          root,
          stores: "memory",
          families,
          trust: 1,
          recipe: { allow: ["*"], deny: ["world.tools.git.*"] },
          model,
          observerId: "parent"
        })
        const context = yield* Layer.build(Layer.merge(road, model))
        const result = yield* Agent.run({ prompt: "Delegate it.", maxSteps: 3 }).pipe(Effect.provideContext(context))
        assert.strictEqual(result._tag, "Complete")
        const delegated = result.steps[0]!.calls[0]!
        assert.isTrue(delegated.outcome?.ok, JSON.stringify(delegated.outcome))
        const output = (delegated.outcome as Invoke.SuccessOutcome).result as typeof Agent.SubAgentOutput.Type
        assert.strictEqual(output.status, "complete")
        assert.strictEqual(output.trust, 1)
        assert.strictEqual(output.caller, `parent/sub-agent:${delegated.outcome!.callId}`)
        assert.deepStrictEqual(
          output.calls.map((c) => [c.path, c.error ?? "ok"]),
          [
            ["world.tools.file.write", "ok"],
            ["world.tools.git.log", "PolicyDenied"],
            ["world.tools.file.list", "PolicyDenied"],
            ["self.tools.agent.run", "PolicyDenied"],
            ["world.tools.file.read", "ok"]
          ]
        )
        assert.isTrue(existsSync(join(root, "new.txt")))
        // The child's records: its own caller, and the parent's call as their parent.
        const audit = yield* AuditStore.AuditStore.pipe(Effect.provideContext(context))
        const entries = yield* audit.list({ limit: 100 })
        const childEntries = entries.filter((e) => e.observerId === output.caller)
        assert.deepStrictEqual([...new Set(childEntries.map((e) => e.path))].sort(), [
          "self.tools.agent.run",
          "world.tools.file.list",
          "world.tools.file.read",
          "world.tools.file.write",
          "world.tools.git.log"
        ])
        const traces = yield* TraceStore.TraceStore.pipe(Effect.provideContext(context))
        for (const call of output.calls) {
          const trace = yield* traces.get(call.callId!)
          assert.strictEqual(Option.getOrThrow(trace).parentId, delegated.outcome!.callId)
        }
      }).pipe(Effect.scoped)
  )

  it.effect("a child above its parent is refused, and a child's level defaults to L0", () =>
    Effect.gen(function* () {
      const root = yield* workspace()
      yield* Effect.gen(function* () {
        const above = yield* Invoke.invoke({ path: "self.tools.agent.run", input: { task: "child task", trust: 2 } })
        assert.strictEqual(!above.ok && above.error._tag, "TrustDenied")
        const plain = yield* Invoke.invoke({ path: "self.tools.agent.run", input: { task: "child task" } })
        const output = (plain.ok ? plain.result : {}) as typeof Agent.SubAgentOutput.Type
        assert.strictEqual(output.trust, 0)
        assert.strictEqual(output.calls[0]?.error, "TrustDenied")
        assert.isFalse(existsSync(join(root, "new.txt")))
      }).pipe(Effect.provide(Server.layer({ root, stores: "memory", families, trust: 1, model })))
    }).pipe(Effect.scoped)
  )

  it.effect("is offered only with a model, and plan mode refuses it", () =>
    Effect.gen(function* () {
      const root = yield* workspace()
      const without = yield* Effect.flatMap(Invoke.Invoker, (r) => r.list).pipe(
        Effect.provide(Server.layer({ root, stores: "memory", families }))
      )
      assert.notInclude(
        without.map((o) => o.path),
        "self.tools.agent.run"
      )
      yield* Effect.gen(function* () {
        const offered = (yield* Effect.flatMap(Invoke.Invoker, (r) => r.list)).map((o) => o.path)
        assert.include(offered, "self.tools.agent.run")
        yield* Invoke.invoke({ path: "self.tools.mode.plan", input: {}, session: "s" })
        const refused = yield* Invoke.invoke({ path: "self.tools.agent.run", input: { task: "x" }, session: "s" })
        assert.strictEqual(!refused.ok && refused.error._tag, "PlanMode")
      }).pipe(Effect.provide(Server.layer({ root, stores: "memory", families, model })))
    }).pipe(Effect.scoped)
  )
})
