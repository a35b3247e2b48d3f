import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Human, Invoke, Server } from "@ugent/agentese"
import { Arbitrary, Effect, Fiber, Option, Schema } from "effect"

const workspace = () => {
  const root = mkdtempSync(join(tmpdir(), "ugent-self-"))
  writeFileSync(join(root, "a.txt"), "alpha\n")
  return root
}

const server = (root: string, options: Partial<Server.Options> = {}) =>
  Server.layer({ root, stores: "memory", trust: 3, session: "s1", ...options })

const call = (path: string, input: unknown) => Invoke.invoke({ path, input })
const okResult = <A>(o: Invoke.Outcome): A => {
  if (!o.ok) throw new Error(JSON.stringify(o.error))
  return o.result as A
}

describe("self.tools", () => {
  describe("tasks", () => {
    it.effect("create, update and list, per session", () =>
      Effect.gen(function* () {
        const root = workspace()
        const a = okResult<{ id: string; status: string }>(
          yield* call("self.tools.task.create", { title: "read the code" })
        )
        okResult(yield* call("self.tools.task.create", { title: "write the test" }))
        const done = okResult<{ status: string }>(yield* call("self.tools.task.update", { id: a.id, status: "done" }))
        assert.strictEqual(done.status, "done")
        const all = okResult<{ tasks: ReadonlyArray<{ title: string; status: string }> }>(
          yield* call("self.tools.task.list", {})
        )
        assert.deepStrictEqual(
          all.tasks.map((t) => [t.title, t.status]),
          [
            ["read the code", "done"],
            ["write the test", "pending"]
          ]
        )
        const missing = yield* call("self.tools.task.update", { id: "t-nope", status: "done" })
        assert.strictEqual(!missing.ok && missing.error._tag, "TaskNotFound")
        // Another session of the same caller has its own list.
        const other = yield* Invoke.invoke({ path: "self.tools.task.list", input: {}, session: "s2" })
        assert.deepStrictEqual(okResult<{ tasks: ReadonlyArray<unknown> }>(other).tasks, [])
        rmSync(root, { recursive: true, force: true })
      }).pipe(Effect.provide(server(workspace())))
    )

    it.effect("persist in the SQLite store across servers", () =>
      Effect.gen(function* () {
        const root = workspace()
        yield* call("self.tools.task.create", { title: "survive a restart" }).pipe(
          Effect.provide(server(root, { stores: "sqlite" }))
        )
        const listed = yield* call("self.tools.task.list", {}).pipe(Effect.provide(server(root, { stores: "sqlite" })))
        assert.deepStrictEqual(
          okResult<{ tasks: ReadonlyArray<{ title: string }> }>(listed).tasks.map((t) => t.title),
          ["survive a restart"]
        )
        rmSync(root, { recursive: true, force: true })
      })
    )
  })

  describe("plan mode", () => {
    it.effect("refuses writes, shell and network until mode.execute; reads stay allowed", () =>
      Effect.gen(function* () {
        okResult(yield* call("self.tools.mode.plan", {}))
        const read = yield* call("world.tools.file.read", { path: "a.txt" })
        assert.isTrue(read.ok)
        const write = yield* call("world.tools.file.write", { path: "b.txt", content: "x" })
        assert.strictEqual(!write.ok && write.error._tag, "PlanMode")
        assert.strictEqual(!write.ok && write.kind, "denied")
        assert.match(!write.ok ? write.error.message : "", /self\.tools\.mode\.execute/)
        const fetch = yield* call("world.tools.web.fetch", { url: "https://example.invalid/" })
        assert.strictEqual(!fetch.ok && fetch.error._tag, "PlanMode")
        okResult(yield* call("self.tools.mode.execute", {}))
        const again = yield* call("world.tools.file.write", { path: "b.txt", content: "x" })
        assert.isTrue(again.ok, JSON.stringify(again))
      }).pipe(Effect.provide(server(workspace())))
    )

    it.effect("law: in plan mode no write succeeds, whatever the path or pipeline", () =>
      Effect.gen(function* () {
        const root = workspace()
        const before = () =>
          readdirSync(root)
            .sort()
            .map((f) => [f, readFileSync(join(root, f), "utf8")])
        const writers = [
          ["world.tools.file.write", { path: "new.txt", content: "x" }],
          ["world.tools.file.write", { path: "a.txt", content: "overwritten" }],
          ["world.tools.file.edit", { path: "a.txt", oldText: "alpha", newText: "beta" }],
          ["world.tools.file.read >> world.tools.file.edit --oldText=alpha --newText=gamma", { path: "a.txt" }],
          ["world.tools.file.read >> world.tools.file.write --content=zeta", { path: "a.txt" }],
          ["world.tools.system.bash", { command: "echo x > shell.txt" }]
        ] as const
        const Plan = Schema.Array(Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: writers.length - 1 })))
        const samples = yield* Arbitrary.sampleEffect(Arbitrary.schema(Plan), { count: 30, seed: 11 })
        okResult(yield* call("self.tools.mode.plan", {}))
        const snapshot = before()
        for (const sample of samples) {
          for (const i of sample) {
            const [path, input] = writers[i]!
            const o = yield* call(path, input)
            assert.isFalse(o.ok, `${path} succeeded in plan mode`)
          }
        }
        assert.deepStrictEqual(before(), snapshot)
        rmSync(root, { recursive: true, force: true })
      }).pipe((e) => Effect.provide(e, server(workspace())))
    )
  })

  describe("clarify", () => {
    it.live("asks through the channel and returns the answer", () =>
      Effect.gen(function* () {
        const pending = yield* Human.Pending
        const fiber = yield* Effect.forkChild(
          call("self.tools.clarify", { question: "Which branch?", choices: ["main", "dev"] }).pipe(
            Effect.provideService(Human.Current, Option.some(pending.channel))
          )
        )
        let questions: ReadonlyArray<Human.PendingQuestion> = []
        while (questions.length === 0) {
          yield* Effect.sleep("10 millis")
          questions = yield* pending.list
        }
        assert.strictEqual(questions[0]?.kind, "clarify")
        assert.deepStrictEqual(questions[0]?.choices, ["main", "dev"])
        yield* pending.answer(questions[0]!.id, "dev")
        const o = yield* Fiber.join(fiber)
        assert.deepStrictEqual(okResult(o), { answered: true, answer: "dev" })
      }).pipe(Effect.provide(server(workspace())))
    )

    it.live("gives a clear no-answer result on timeout, and without a channel", () =>
      Effect.gen(function* () {
        const pending = yield* Human.Pending
        const timedOut = yield* call("self.tools.clarify", { question: "Which?", timeoutSeconds: 1 }).pipe(
          Effect.provideService(Human.Current, Option.some(pending.channel))
        )
        const r = okResult<{ answered: boolean; reason: string; message: string }>(timedOut)
        assert.deepStrictEqual([r.answered, r.reason], [false, "timeout"])
        assert.match(r.message, /Decide with what you know/)
        const none = okResult<{ reason: string }>(yield* call("self.tools.clarify", { question: "Which?" }))
        assert.strictEqual(none.reason, "no-channel")
        assert.deepStrictEqual(yield* pending.list, [])
      }).pipe(Effect.provide(server(workspace())))
    )
  })
})
