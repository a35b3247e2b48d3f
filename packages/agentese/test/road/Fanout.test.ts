/**
 * Fan-out steps on the road (`a &&& b`, issue 28): every call gets the same
 * input, each is a call of the road of its own (gated, recorded), reads run
 * side by side, anything else one after another, and a failure is told
 * whole (`&&&`) or stops the rest (`&&&!`). Through the road, HTTP and the CLI.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { assert, describe, it } from "@effect/vitest"
import { Invoke, Parse, Server } from "@ugent/agentese"
import { Family, Tool } from "@ugent/core"
import { AuditStore } from "@ugent/wrappers"
import { Deferred, Effect, Schema } from "effect"
import { ugent } from "../cli/fixture.ts"

const workspace = () => {
  const root = mkdtempSync(join(tmpdir(), "ugent-fanout-"))
  writeFileSync(join(root, "a.txt"), "alpha\n")
  writeFileSync(join(root, "b.txt"), "beta\n")
  return root
}

const run = <A, E>(options: Omit<Server.Options, "root">, effect: Effect.Effect<A, E, Server.Services>) => {
  const root = workspace()
  return effect.pipe(
    Effect.provide(Server.layer({ stores: "memory", ...options, root })),
    Effect.ensuring(Effect.sync(() => rmSync(root, { recursive: true, force: true })))
  )
}

/**
 * Two tools that meet: `wait` ends only once `arrive` has run. Side by side
 * they both end; one after another (`wait` first) `wait` times out.
 */
const meeting = Effect.gen(function* () {
  const met = yield* Deferred.make<void>()
  const tools = {
    "meet.wait": Tool.make({
      name: "meet.wait",
      description: "Waits for meet.arrive.",
      input: Schema.Struct({}),
      output: Schema.String,
      effects: { readsFs: true },
      run: () =>
        Deferred.await(met).pipe(
          Effect.timeout("2 seconds"),
          Effect.as("met"),
          Effect.orElseSucceed(() => "alone")
        )
    }),
    "meet.arrive": Tool.make({
      name: "meet.arrive",
      description: "Arrives.",
      input: Schema.Struct({}),
      output: Schema.String,
      effects: { readsFs: true },
      run: () => Deferred.succeed(met, undefined).pipe(Effect.as("arrived"))
    }),
    "meet.note": Tool.make({
      name: "meet.note",
      description: "Arrives, and writes (so it never runs beside another call).",
      input: Schema.Struct({}),
      output: Schema.String,
      effects: { writesFs: true },
      trust: 1,
      run: () => Deferred.succeed(met, undefined).pipe(Effect.as("noted"))
    })
  }
  return Family.make({ name: "meet", prefix: "world.tools", tools })
})

describe("fan-out steps (a &&& b)", () => {
  it("parse: &&& is one step of calls, &&&! fails fast, and a mix or an empty call is a ParseError", () => {
    const r = Parse.pipeline(
      "world.tools.file.read --path=a.txt &&& world.tools.file.read --path=b.txt >> world.tools.text.count"
    )
    assert.strictEqual(r._tag, "Right")
    if (r._tag !== "Right") return
    const [first, second] = r.right.steps
    assert.deepStrictEqual(
      first!.all?.map((s) => s.args),
      [{ path: "a.txt" }, { path: "b.txt" }]
    )
    assert.strictEqual(first!.mode, "collect-all")
    assert.strictEqual(first!.path, "world.tools.file.read &&& world.tools.file.read")
    assert.strictEqual(second!.path, "world.tools.text.count")
    const fast = Parse.pipeline("world.tools.file.read --path=a.txt &&&! world.tools.file.read --path=b.txt")
    assert.strictEqual(fast._tag === "Right" && fast.right.steps[0]!.mode, "fail-fast")
    // A quoted &&& is an argument, not an operator.
    const quoted = Parse.pipeline(`world.tools.search.grep --pattern="a &&& b"`)
    assert.strictEqual(quoted._tag === "Right" && quoted.right.steps[0]!.all, undefined)
    const mixed = Parse.pipeline("world.tools.file.read &&& world.tools.file.read &&&! world.tools.file.read")
    assert.match(mixed._tag === "Left" ? mixed.left.message : "", /mixes &&& .* and &&&!/)
    const empty = Parse.pipeline("world.tools.file.read &&& &&& world.tools.file.read")
    assert.match(empty._tag === "Left" ? empty.left.message : "", /a call of a fan-out is empty/)
  })

  it.effect("every call gets the same input; the result is their results in order, each call recorded", () =>
    run(
      { trust: 0 },
      Effect.gen(function* () {
        const o = yield* Invoke.invoke({
          path: "world.tools.file.read --path=a.txt &&& world.tools.file.read --path=b.txt",
          input: {}
        })
        assert.isTrue(o.ok, JSON.stringify(o))
        const results = (o as { result: ReadonlyArray<{ content: string }> }).result
        assert.deepStrictEqual(
          results.map((r) => r.content),
          ["1\talpha", "1\tbeta"]
        )
        const audit = yield* AuditStore.AuditStore
        const entries = yield* audit.list({ limit: 10 })
        const reads = entries.filter((e) => e.path === "world.tools.file.read")
        // Each call is a call of the road of its own, under the fan-out's id.
        assert.isAtLeast(reads.length, 2)
        assert.isTrue(
          reads.every((e) => e.callId.startsWith(`${o.callId}.`)),
          JSON.stringify(reads.map((e) => e.callId))
        )
      })
    )
  )

  it.live("reads run side by side; a call that writes runs alone, after the calls before it", () =>
    Effect.gen(function* () {
      const family = yield* meeting
      yield* run(
        { trust: 1, families: [family], writable: ["**"] },
        Effect.gen(function* () {
          const beside = yield* Invoke.invoke({ path: "world.tools.meet.wait &&& world.tools.meet.arrive", input: {} })
          assert.deepStrictEqual((beside as { result: unknown }).result, ["met", "arrived"])
        })
      )
      const again = yield* meeting
      yield* run(
        { trust: 1, families: [again], writable: ["**"] },
        Effect.gen(function* () {
          // With a write among them the calls run in order: wait is alone, and the note comes after it.
          const ordered = yield* Invoke.invoke({ path: "world.tools.meet.wait &&& world.tools.meet.note", input: {} })
          assert.deepStrictEqual((ordered as { result: unknown }).result, ["alone", "noted"])
        })
      )
    })
  )

  it.effect("&&& runs every call and tells every failure; &&&! stops at the first", () =>
    run(
      { trust: 0 },
      Effect.gen(function* () {
        const all = yield* Invoke.invoke({
          path: "world.tools.file.read --path=nope.txt &&& world.tools.file.read --path=a.txt &&& world.tools.file.read --path=.env",
          input: {}
        })
        assert.isFalse(all.ok)
        if (all.ok) return
        assert.strictEqual(all.error._tag, "AllFailed")
        const failures = all.error.failures as ReadonlyArray<{ key: string; error: { _tag: string } }>
        assert.deepStrictEqual(
          failures.map((f) => f.key),
          ["1 world.tools.file.read", "3 world.tools.file.read"]
        )
        assert.strictEqual(all.kind, "not_found")
        const fast = yield* Invoke.invoke({
          path: "world.tools.file.read --path=nope.txt &&&! world.tools.file.read --path=a.txt",
          input: {}
        })
        assert.isFalse(fast.ok)
        assert.strictEqual(!fast.ok && fast.error._tag, "NotFound")
      })
    )
  )

  it.effect("a denied call anywhere in a fan-out refuses the whole request before anything runs", () =>
    run(
      { trust: 1, writable: ["**"], recipe: { deny: ["world.tools.file.write"] } },
      Effect.gen(function* () {
        const o = yield* Invoke.invoke({
          path: `world.tools.file.read --path=a.txt &&& world.tools.file.write --path=c.txt --content=x`,
          input: {}
        })
        assert.isFalse(o.ok)
        assert.strictEqual(!o.ok && o.kind, "denied")
      })
    )
  )

  it("the CLI runs a fan-out, and the files are untouched", async () => {
    const root = workspace()
    try {
      const r = await ugent(
        [
          "invoke",
          "world.tools.file.read --path=a.txt &&& world.tools.file.read --path=b.txt",
          "--stores",
          "memory",
          "--json"
        ],
        { cwd: root }
      )
      assert.strictEqual(r.code, 0, r.stderr)
      const out = JSON.parse(r.stdout) as { result: ReadonlyArray<{ content: string }> }
      assert.deepStrictEqual(
        out.result.map((x) => x.content),
        ["1\talpha", "1\tbeta"]
      )
      assert.strictEqual(readFileSync(join(root, "a.txt"), "utf8"), "alpha\n")
    } finally {
      rmSync(root, { recursive: true, force: true })
    }
  })
})
