import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Invoke, Loop, Server } from "@ugent/agentese"
import { ReadProof } from "@ugent/core"
import { Effect, Schema } from "effect"
import { TestClock } from "effect/testing"

/** One step of a caller: wait, then call (the result is `same` or new), or write something. */
const Step = Schema.Struct({
  // Waits that land on the window's edges (60 s) as often as inside it.
  waitMillis: Schema.Literals([0, 1, 10_000, 20_000, 30_000, 59_999, 60_000]),
  act: Schema.Literals(["same", "other", "write"])
})

describe("Loop.layerMemory", () => {
  it.effect.prop(
    "refuses a call exactly when `count` identical results came back within the window since the last write",
    {
      steps: Schema.Array(Step).check(Schema.isMaxLength(40)),
      count: Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 4 }))
    },
    ({ steps, count }) =>
      Effect.gen(function* () {
        const settings = { count, windowMillis: 60_000 }
        const loops = yield* Loop.LoopDetector
        // The model: the times of the last result's fingerprint, since it changed or something was written.
        let times: Array<number> = []
        let last: string | undefined
        let now = 0
        for (const [i, step] of steps.entries()) {
          yield* TestClock.adjust(step.waitMillis)
          now += step.waitMillis
          if (step.act === "write") {
            yield* loops.progress
            times = []
            last = undefined
            continue
          }
          const recent = times.filter((t) => now - t < settings.windowMillis).length
          const refused = yield* Effect.flip(loops.check("k", "p", settings)).pipe(Effect.option)
          assert.strictEqual(refused._tag === "Some", recent >= count, `step ${i}: ${recent} recent of ${count}`)
          if (refused._tag === "Some") {
            assert.strictEqual(refused.value.count, recent)
            continue
          }
          const fingerprint = step.act === "same" ? "f" : `f${i}`
          yield* loops.record("k", fingerprint, settings)
          times = fingerprint === last ? [...times, now] : [now]
          last = fingerprint
        }
      }).pipe(Effect.provide(Loop.layerMemory)),
    { arbitrary: { runs: 300 } }
  )
})

describe("Loop.fingerprint", () => {
  it.effect("counts a read proof by what it proves, not by its token, at any depth", () =>
    Effect.gen(function* () {
      const issue = (content: string) =>
        ReadProof.issue({ path: "/ws/a.txt", content, coverage: { _tag: "Whole" } }).pipe(
          Effect.tap(() => TestClock.adjust("1 second"))
        )
      const first = yield* issue("A")
      const again = yield* issue("A")
      const changed = yield* issue("B")
      assert.notStrictEqual(JSON.stringify(first), JSON.stringify(again))
      const result = (proof: ReadProof.ReadProof) => ({ content: "A", proof, nested: [{ proof }] })
      assert.strictEqual(Loop.fingerprint(result(first)), Loop.fingerprint(result(again)))
      assert.strictEqual(Loop.fingerprint(first), Loop.fingerprint(again))
      assert.notStrictEqual(Loop.fingerprint(result(first)), Loop.fingerprint(result(changed)))
      assert.notStrictEqual(Loop.fingerprint({ content: "A" }), Loop.fingerprint({ content: "B" }))
    })
  )
})

describe("the loop key on the road (threat 41)", () => {
  /** A workspace with `a.txt`, a link `link.txt` to it and a link `here` to the root, served to `effect`. */
  const served = <A, E>(effect: Effect.Effect<A, E, Server.Services>) =>
    Effect.gen(function* () {
      const root = mkdtempSync(join(tmpdir(), "ugent-loop-"))
      writeFileSync(join(root, "a.txt"), "alpha\nbeta\n")
      symlinkSync("a.txt", join(root, "link.txt"))
      symlinkSync(".", join(root, "here"))
      mkdirSync(join(root, "sub"))
      symlinkSync("../a.txt", join(root, "sub", "up.txt"))
      return yield* effect.pipe(
        Effect.provide(Server.layer({ stores: "memory", root, trust: 1 })),
        Effect.ensuring(Effect.sync(() => rmSync(root, { recursive: true, force: true })))
      )
    })
  const call = (path: string, input: unknown) =>
    Effect.map(Invoke.invoke({ path, input }), (o) => (o.ok ? "ok" : o.error._tag))

  it.effect(
    "threat 41: a link's name and its target are the same call: the fourth read of one file by three names is a loop",
    () =>
      served(
        Effect.gen(function* () {
          const tags = [
            yield* call("world.tools.file.read", { path: "a.txt" }),
            yield* call("world.tools.file.read", { path: "link.txt" }),
            yield* call("world.tools.file.read", { path: "here/a.txt" }),
            yield* call("world.tools.file.read", { path: "sub/up.txt" })
          ]
          assert.deepStrictEqual(tags, ["ok", "ok", "ok", "LoopDetected"])
        })
      )
  )

  it.effect("threat 41: spelled-out defaults are the same call: {path} and {path, offset: 1} make one loop", () =>
    served(
      Effect.gen(function* () {
        const tags = [
          yield* call("world.tools.file.read", { path: "a.txt" }),
          yield* call("world.tools.file.read", { path: "a.txt", offset: 1 }),
          yield* call("world.tools.file.read", { path: "./a.txt", offset: 1 }),
          yield* call("world.tools.file.read", { path: "a.txt" }),
          // Not a default: another call.
          yield* call("world.tools.file.read", { path: "a.txt", offset: 2 })
        ]
        assert.deepStrictEqual(tags, ["ok", "ok", "ok", "LoopDetected", "ok"])
      })
    )
  )
})
