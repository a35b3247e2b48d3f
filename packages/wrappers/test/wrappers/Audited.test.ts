import { assert, describe, it } from "@effect/vitest"
import { Observer, Tool, ToolError, Trust } from "@ugent/core"
import { Audited, AuditStore, StoreError, Traced } from "@ugent/wrappers"
import { Deferred, Effect, Exit, Fiber, Layer, Schema } from "effect"
import { TestClock } from "effect/testing"

class NotFound extends Schema.TaggedError<NotFound>()("NotFound", { path: Schema.String }) {
  static readonly kind: ToolError.Kind = "not_found"
  override get message() {
    return `File not found: ${this.path}. Check the path with file.list.`
  }
}

let runs = 0
const read = Tool.make({
  name: "file.read",
  description: "Reads a file after 40 ms.",
  input: Schema.Struct({ path: Schema.String }),
  output: Schema.Struct({ content: Schema.String }),
  failure: NotFound,
  run: ({ path }) =>
    Effect.suspend(() => {
      runs++
      return path === "missing.txt"
        ? Effect.fail(new NotFound({ path }))
        : Effect.as(Effect.sleep("40 millis"), { content: `content of ${path}`.repeat(path === "big.txt" ? 100 : 1) })
    })
})

const env = Layer.mergeAll(AuditStore.layerMemory(), Trust.grant(0), Observer.layer({ id: "agent-1", trust: 0 }))
const entries = Effect.flatMap(AuditStore.AuditStore, (s) => s.list({ limit: 100 }))
const timed = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function* () {
    const fiber = yield* Effect.forkChild(Effect.exit(effect))
    yield* TestClock.adjust("1 second")
    return yield* Fiber.join(fiber)
  })

describe("Audited", () => {
  it.effect("records a pending entry before the call and the outcome after it", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(1_000_000)
      const exit = yield* timed(Audited(read).run({ path: "a.txt" }))
      assert.deepStrictEqual(exit, Exit.succeed({ content: "content of a.txt" }))
      const list = yield* entries
      const before = list.find((e) => e.phase === "before")!
      const after = list.find((e) => e.phase === "after")!
      assert.strictEqual(before.callId, after.callId)
      assert.deepStrictEqual(
        { ...before, id: undefined, callId: undefined },
        {
          id: undefined,
          callId: undefined,
          phase: "before",
          at: 1_000_000,
          observerId: "agent-1",
          path: "file.read",
          inputSummary: '{"path":"a.txt"}',
          status: "pending"
        }
      )
      assert.strictEqual(after.status, "success")
      assert.strictEqual(after.at, 1_000_040)
      assert.strictEqual(after.durationMillis, 40)
      assert.strictEqual(after.resultSummary, '{"content":"content of a.txt"}')
      assert.strictEqual(after.estimatedTokens, Math.ceil('{"content":"content of a.txt"}'.length / 4))
    }).pipe(Effect.provide(env))
  )

  it.effect("records a typed failure with its tag, message and kind", () =>
    Effect.gen(function* () {
      yield* timed(Audited(read).run({ path: "missing.txt" }))
      const after = (yield* entries).find((e) => e.phase === "after")!
      assert.strictEqual(after.status, "failure")
      assert.deepStrictEqual(after.error, {
        tag: "NotFound",
        message: "File not found: missing.txt. Check the path with file.list.",
        kind: "not_found"
      })
      assert.isUndefined(after.resultSummary)
    }).pipe(Effect.provide(env))
  )

  it.effect("records refusals with their kind, and the analytics count them by reason", () =>
    Effect.gen(function* () {
      const guarded = Tool.make({
        name: "file.write",
        description: "Refuses secrets.",
        input: Schema.Struct({ path: Schema.String }),
        output: Schema.String,
        failure: Schema.Union([ToolError.Forbidden, ToolError.TrustDenied, NotFound]),
        run: ({ path }) =>
          path === ".env"
            ? Effect.fail(
                new ToolError.Forbidden({ tool: "file.write", rule: "secrets", detail: ".env holds secrets" })
              )
            : path === "high"
              ? Effect.fail(new ToolError.TrustDenied({ tool: "file.write", required: 2, actual: 1 }))
              : path === "gone"
                ? Effect.fail(new NotFound({ path }))
                : Effect.succeed("ok")
      })
      for (const path of [".env", ".env", "high", "gone", "a.txt"]) yield* Effect.exit(Audited(guarded).run({ path }))
      const kinds = (yield* entries).filter((e) => e.phase === "after").map((e) => e.error?.kind ?? e.status)
      assert.deepStrictEqual(kinds.sort(), ["denied", "denied", "denied", "not_found", "success"])
      const analytics = yield* Effect.flatMap(AuditStore.AuditStore, (s) => s.analytics({}))
      assert.deepStrictEqual(analytics.refusals, [
        { reason: "Forbidden", kind: "denied", count: 2 },
        { reason: "TrustDenied", kind: "denied", count: 1 }
      ])
      assert.deepStrictEqual(analytics.totals, { calls: 5, successes: 1, failures: 4, refusals: 3 })
      assert.strictEqual(analytics.byObserver[0]?.refusals, 3)
    }).pipe(Effect.provide(env))
  )

  describe("call ids", () => {
    it.effect("takes the server's call id: entries `${id}/before` and `${id}/after`", () =>
      Effect.gen(function* () {
        yield* timed(Audited(read).run({ path: "a.txt" }).pipe(Traced.withCallId("call-7")))
        const list = yield* entries
        assert.deepStrictEqual(list.map((e) => [e.id, e.callId]).sort(), [
          ["call-7/after", "call-7"],
          ["call-7/before", "call-7"]
        ])
      }).pipe(Effect.provide(env))
    )

    it.effect("an audited call inside the audited call gets an id of its own", () =>
      Effect.gen(function* () {
        const inner = Audited(read, { path: "inner" })
        const outer = Audited(Tool.pipeline(inner, Tool.fromFunction({ name: "id", f: (b: { content: string }) => b })))
        yield* timed(outer.run({ path: "a.txt" }).pipe(Traced.withCallId("call-8")))
        const list = yield* entries
        assert.strictEqual(list.length, 4)
        assert.strictEqual(new Set(list.map((e) => e.id)).size, 4)
        const innerIds = list.filter((e) => e.path === "inner").map((e) => e.callId)
        assert.deepStrictEqual(
          list.filter((e) => e.path !== "inner").map((e) => e.callId),
          ["call-8", "call-8"]
        )
        assert.notInclude(innerIds, "call-8")
        assert.strictEqual(new Set(innerIds).size, 1)
      }).pipe(Effect.provide(env))
    )

    it.effect("of calls that run side by side under one id, one takes it and the others make their own", () =>
      Effect.gen(function* () {
        const calls = Effect.all(
          Array.from({ length: 8 }, (_, i) => Audited(read).run({ path: `f${i}.txt` })),
          { concurrency: "unbounded" }
        )
        yield* timed(calls.pipe(Traced.withCallId("call-9")))
        const after = (yield* entries).filter((e) => e.phase === "after")
        assert.strictEqual(after.length, 8)
        assert.strictEqual(new Set(after.map((e) => e.callId)).size, 8)
        assert.strictEqual(after.filter((e) => e.callId === "call-9").length, 1)
      }).pipe(Effect.provide(env))
    )

    it.effect("two calls with their own ids keep them", () =>
      Effect.gen(function* () {
        yield* timed(Audited(read).run({ path: "a.txt" }).pipe(Traced.withCallId("c-1")))
        yield* timed(Audited(read).run({ path: "b.txt" }).pipe(Traced.withCallId("c-2")))
        const callIds = (yield* entries).filter((e) => e.phase === "after").map((e) => e.callId)
        assert.deepStrictEqual(callIds.sort(), ["c-1", "c-2"])
      }).pipe(Effect.provide(env))
    )
  })

  it.effect("records defects and interruptions as failures", () =>
    Effect.gen(function* () {
      const buggy = Tool.make({
        name: "buggy",
        description: "Dies.",
        input: Schema.Number,
        output: Schema.Number,
        run: () => Effect.die(new Error("boom"))
      })
      yield* Effect.exit(Audited(buggy).run(1))
      const started = yield* Deferred.make<void>()
      const hang = Tool.make({
        name: "hang",
        description: "Never ends.",
        input: Schema.Number,
        output: Schema.Number,
        run: () => Effect.andThen(Deferred.succeed(started, undefined), Effect.never)
      })
      const fiber = yield* Effect.forkChild(Audited(hang).run(1))
      yield* Deferred.await(started)
      yield* Fiber.interrupt(fiber)
      const after = (yield* entries).filter((e) => e.phase === "after")
      assert.deepStrictEqual(after.map((e) => [e.path, e.status, e.error?.tag, e.error?.kind]).sort(), [
        ["buggy", "failure", "Defect", "failed"],
        ["hang", "failure", "Interrupted", undefined]
      ])
    }).pipe(Effect.provide(env))
  )

  it.effect("estimates tokens as characters / 4 and cuts summaries to 200 characters", () =>
    Effect.gen(function* () {
      yield* timed(Audited(read).run({ path: "big.txt" }))
      const after = (yield* entries).find((e) => e.phase === "after")!
      const text = JSON.stringify({ content: "content of big.txt".repeat(100) })
      assert.strictEqual(after.estimatedTokens, Math.ceil(text.length / 4))
      assert.strictEqual(after.resultSummary!.length, 200)
      assert.isTrue(after.resultSummary!.endsWith("…"))
    }).pipe(Effect.provide(env))
  )

  it.effect("uses the given summaries and path, and `anonymous` without an observer", () =>
    Effect.gen(function* () {
      const audited = Audited(read, {
        path: "world.tools.file.read",
        summarizeInput: (a) => `read ${a.path}`,
        summarizeResult: (b) => `${b.content.length} chars`
      })
      yield* timed(audited.run({ path: "a.txt" }))
      const list = yield* entries
      assert.isTrue(list.every((e) => e.path === "world.tools.file.read" && e.observerId === "anonymous"))
      assert.isTrue(list.every((e) => e.inputSummary === "read a.txt"))
      assert.strictEqual(list.find((e) => e.phase === "after")!.resultSummary, "16 chars")
    }).pipe(Effect.provide(Layer.merge(AuditStore.layerMemory(), Trust.grant(0))))
  )

  it.effect("stores the entry before a call with side effects before it runs; a call without writes behind", () => {
    const memory = AuditStore.makeMemory()
    const writes: Array<string> = []
    const store = Layer.succeed(AuditStore.AuditStore, {
      ...memory,
      record: (entry) =>
        Effect.andThen(
          Effect.sync(() => writes.push(`record ${entry.phase}`)),
          memory.record(entry)
        ),
      append: (entry) =>
        Effect.andThen(
          Effect.sync(() => writes.push(`append ${entry.phase}`)),
          memory.append(entry)
        )
    })
    const write = Tool.make({
      name: "file.write",
      description: "Writes a file.",
      trust: 1,
      effects: { writesFs: true },
      input: Schema.String,
      output: Schema.String,
      run: (s) => Effect.succeed(s)
    })
    return Effect.gen(function* () {
      yield* timed(Audited(read).run({ path: "a.txt" }))
      yield* Audited(write)
        .run("x")
        .pipe(Trust.runAs({ id: "w", trust: 1 }))
      assert.deepStrictEqual(writes, ["append before", "append after", "record before", "append after"])
    }).pipe(Effect.provide(Layer.merge(store, Trust.grant(0))))
  })

  describe("when the store fails", () => {
    const failing = (failOn: "before" | "after") => {
      const memory = AuditStore.makeMemory()
      const failing = (write: typeof memory.record) => (entry: AuditStore.AuditEntry) =>
        entry.phase === failOn
          ? Effect.fail(new StoreError.StoreError({ store: "audit", operation: "record", detail: "disk full" }))
          : write(entry)
      return Layer.succeed(AuditStore.AuditStore, {
        ...memory,
        record: failing(memory.record),
        append: failing(memory.append)
      })
    }

    it.effect("does not run the call when its pending entry cannot be written", () =>
      Effect.gen(function* () {
        const before = runs
        const error = yield* Effect.flip(Audited(read).run({ path: "a.txt" }))
        assert.instanceOf(error, StoreError.StoreError)
        assert.strictEqual(runs, before)
      }).pipe(Effect.provide(Layer.merge(failing("before"), Trust.grant(0))))
    )

    it.effect("runs it anyway when told only to log", () =>
      Effect.gen(function* () {
        const exit = yield* timed(Audited(read, { onStoreError: "log" }).run({ path: "a.txt" }))
        assert.isTrue(Exit.isSuccess(exit))
      }).pipe(Effect.provide(Layer.merge(failing("before"), Trust.grant(0))))
    )

    it.effect("returns the result when only the entry after the call cannot be written", () =>
      Effect.gen(function* () {
        const exit = yield* timed(Audited(read).run({ path: "a.txt" }))
        assert.deepStrictEqual(exit, Exit.succeed({ content: "content of a.txt" }))
      }).pipe(Effect.provide(Layer.merge(failing("after"), Trust.grant(0))))
    )
  })

  it.effect.prop("is transparent: an audited tool gives the bare tool's result", { path: Schema.String }, ({ path }) =>
    Effect.gen(function* () {
      const bare = yield* timed(read.run({ path }))
      const audited = yield* timed(Audited(read).run({ path }))
      assert.deepStrictEqual(
        Exit.isSuccess(audited) ? audited.value : audited.cause.reasons.map((r) => (r._tag === "Fail" ? r.error : r)),
        Exit.isSuccess(bare) ? bare.value : bare.cause.reasons.map((r) => (r._tag === "Fail" ? r.error : r))
      )
    }).pipe(Effect.provide(env))
  )

  it("adds StoreError to the failure schema", () => {
    const e = new StoreError.StoreError({ store: "audit", operation: "record", detail: "x" })
    assert.isTrue(Schema.is(Audited(read).failure)(e))
  })
})
