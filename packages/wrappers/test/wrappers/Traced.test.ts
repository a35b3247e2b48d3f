import { assert, describe, it } from "@effect/vitest"
import { Observer, Tool, Trust } from "@ugent/core"
import { Audited, AuditStore, Retry, StoreError, Traced, TraceStore } from "@ugent/wrappers"
import { Deferred, Effect, Exit, Fiber, Layer, Option, Schema, Tracer } from "effect"
import { TestClock } from "effect/testing"

class Odd extends Schema.TaggedError<Odd>()("Odd", {
  n: Schema.Number,
  retryable: Schema.optionalKey(Schema.Boolean)
}) {
  override get message() {
    return `${this.n} is odd`
  }
}

const inc = Tool.fromFunction({ name: "num.inc", input: Schema.Number, output: Schema.Number, f: (n: number) => n + 1 })
const double = Tool.fromFunction({
  name: "num.double",
  input: Schema.Number,
  output: Schema.Number,
  f: (n: number) => n * 2
})
const evenOnly = Tool.make({
  name: "num.even",
  description: "Fails on odd numbers.",
  input: Schema.Number,
  output: Schema.Number,
  failure: Odd,
  run: (n) => (n % 2 === 0 ? Effect.succeed(n) : Effect.fail(new Odd({ n })))
})
const slow = Tool.make({
  name: "num.slow",
  description: "Takes 250 ms.",
  input: Schema.Struct({ n: Schema.Number }),
  output: Schema.Struct({ n: Schema.Number }),
  run: ({ n }) => Effect.as(Effect.sleep("250 millis"), { n })
})

const env = Layer.mergeAll(TraceStore.layerMemory(), Trust.grant(0))

/** What a caller observes of an exit: its value, or its typed error (spans annotate causes differently). */
const observe = <A, E>(exit: Exit.Exit<A, E>) =>
  Exit.isSuccess(exit)
    ? { ok: exit.value }
    : {
        error: exit.cause.reasons.map((r) => (r._tag === "Fail" ? r.error : r._tag === "Die" ? r.defect : "interrupt"))
      }
const all = Effect.flatMap(TraceStore.TraceStore, (s) => s.recent({ limit: 1000 }))

describe("Traced", () => {
  describe("records", () => {
    it.effect("one trace per call, with encoded input and output, time and duration", () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(1_700_000_000_000)
        const fiber = yield* Effect.forkChild(Traced(slow).run({ n: 3 }))
        yield* TestClock.adjust("250 millis")
        assert.deepStrictEqual(yield* Fiber.join(fiber), { n: 3 })
        const [trace, ...rest] = yield* all
        assert.deepStrictEqual(rest, [])
        assert.strictEqual(trace!.path, "num.slow")
        assert.strictEqual(trace!.rootId, trace!.id)
        assert.isUndefined(trace!.parentId)
        assert.deepStrictEqual(trace!.input, { n: 3 })
        assert.deepStrictEqual(trace!.output, { n: 3 })
        assert.strictEqual(trace!.status, "success")
        assert.strictEqual(trace!.startedAt, 1_700_000_000_000)
        assert.strictEqual(trace!.durationMillis, 250)
        assert.deepStrictEqual(trace!.alternatives, [])
      }).pipe(Effect.provide(env))
    )

    it.effect("a typed error, with its tag, fields and message", () =>
      Effect.gen(function* () {
        const exit = yield* Effect.exit(Traced(evenOnly).run(3))
        assert.isTrue(Exit.isFailure(exit))
        const [trace] = yield* all
        assert.strictEqual(trace!.status, "failure")
        assert.isUndefined(trace!.output)
        assert.deepStrictEqual(trace!.error, { _tag: "Odd", n: 3, message: "3 is odd" })
      }).pipe(Effect.provide(env))
    )

    it.effect("a defect and an interruption", () =>
      Effect.gen(function* () {
        const buggy = Tool.make({
          name: "num.bug",
          description: "Dies.",
          input: Schema.Number,
          output: Schema.Number,
          run: () => Effect.die(new Error("boom"))
        })
        yield* Effect.exit(Traced(buggy).run(1))
        const started = yield* Deferred.make<void>()
        const hang = Tool.make({
          name: "num.hang",
          description: "Never ends.",
          input: Schema.Number,
          output: Schema.Number,
          run: () => Effect.andThen(Deferred.succeed(started, undefined), Effect.never)
        })
        const fiber = yield* Effect.forkChild(Traced(hang).run(1))
        yield* Deferred.await(started)
        yield* Fiber.interrupt(fiber)
        const traces = yield* all
        const byPath = Object.fromEntries(traces.map((t) => [t.path, t]))
        assert.strictEqual(byPath["num.bug"]!.status, "defect")
        assert.match(JSON.stringify(byPath["num.bug"]!.error), /boom/)
        assert.strictEqual(byPath["num.hang"]!.status, "interrupted")
      }).pipe(Effect.provide(env))
    )

    it.effect("the observer and session, and the given path", () =>
      Effect.gen(function* () {
        yield* Traced(inc, { path: "world.tools.num.inc" })
          .run(1)
          .pipe(Effect.provide(Observer.layer({ id: "agent-7", trust: 0, session: "s1" })))
        const [trace] = yield* all
        assert.strictEqual(trace!.path, "world.tools.num.inc")
        assert.strictEqual(trace!.observerId, "agent-7")
        assert.strictEqual(trace!.sessionId, "s1")
      }).pipe(Effect.provide(env))
    )

    it.effect("the alternatives the caller considered, for its own calls only", () =>
      Effect.gen(function* () {
        const outer = Traced(Tool.pipeline(Traced(inc), Traced(double)), { path: "outer" })
        yield* outer.run(1).pipe(Traced.withAlternatives(["num.add", "num.square"]))
        yield* Traced(inc, { alternatives: (n: number) => [`num.add(${n})`] }).run(5)
        const traces = yield* all
        const byPath = (p: string) => traces.filter((t) => t.path === p)
        assert.deepStrictEqual(byPath("outer")[0]!.alternatives, ["num.add", "num.square"])
        assert.deepStrictEqual(byPath("num.double")[0]!.alternatives, [])
        assert.deepStrictEqual(
          byPath("num.inc").map((t) => t.alternatives),
          [["num.add(5)"], []]
        )
      }).pipe(Effect.provide(env))
    )
  })

  describe("parents", () => {
    it.effect("a traced pipeline of traced steps: one trace per step under the pipeline's", () =>
      Effect.gen(function* () {
        const pipeline = Traced(Tool.pipeline(Traced(inc), Traced(double), Traced(inc)), { path: "p" })
        assert.strictEqual(yield* pipeline.run(1), 5)
        const store = yield* TraceStore.TraceStore
        const [root] = yield* store.recent({ limit: 1, path: "p" })
        const children = yield* store.children(root!.id)
        assert.deepStrictEqual(
          children.map((c) => [c.path, c.input, c.output, c.rootId]),
          [
            ["num.inc", 1, 2, root!.id],
            ["num.double", 2, 4, root!.id],
            ["num.inc", 4, 5, root!.id]
          ]
        )
        assert.strictEqual((yield* store.byRoot(root!.id)).length, 4)
      }).pipe(Effect.provide(env))
    )

    it.effect("nests three levels deep", () =>
      Effect.gen(function* () {
        const inner = Traced(Tool.pipeline(Traced(inc), Traced(double)), { path: "inner" })
        const outer = Traced(Tool.pipeline(inner, Traced(inc)), { path: "outer" })
        yield* outer.run(1)
        const traces = yield* all
        const one = (p: string) => traces.find((t) => t.path === p)!
        assert.strictEqual(one("inner").parentId, one("outer").id)
        assert.strictEqual(one("num.double").parentId, one("inner").id)
        assert.isTrue(traces.every((t) => t.rootId === one("outer").id))
      }).pipe(Effect.provide(env))
    )

    it.effect("parallel branches of Tool.all and Tool.fanout each record under the call that forked them", () =>
      Effect.gen(function* () {
        const branches = Traced(
          Tool.all({ a: Traced(inc), b: Traced(double), c: Traced(slow.pipe(Tool.contramap((n: number) => ({ n })))) }),
          {
            path: "all"
          }
        )
        const fiber = yield* Effect.forkChild(branches.run(3))
        yield* TestClock.adjust("1 second")
        yield* Fiber.join(fiber)
        const fan = Traced(Tool.fanout(Traced(inc), Traced(double)), { path: "fanout" })
        yield* fan.run(10)
        const traces = yield* all
        const root = (p: string) => traces.find((t) => t.path === p)!
        assert.sameMembers(
          traces.filter((t) => t.parentId === root("all").id).map((t) => t.path),
          ["num.inc", "num.double", "contramap >> num.slow"]
        )
        assert.sameMembers(
          traces.filter((t) => t.parentId === root("fanout").id).map((t) => t.path),
          ["num.inc", "num.double"]
        )
      }).pipe(Effect.provide(env))
    )

    it.effect("each attempt of a retried traced call is its own trace, under the same parent", () =>
      Effect.gen(function* () {
        let calls = 0
        const flaky = Tool.make({
          name: "num.flaky",
          description: "Fails twice.",
          input: Schema.Number,
          output: Schema.Number,
          failure: Odd,
          run: (n) =>
            Effect.suspend(() => (++calls < 3 ? Effect.fail(new Odd({ n, retryable: true })) : Effect.succeed(n)))
        })
        const call = Traced(Traced(flaky).pipe(Retry({ base: "10 millis", jitter: false })), { path: "call" })
        const fiber = yield* Effect.forkChild(call.run(2))
        yield* TestClock.adjust("1 second")
        assert.strictEqual(yield* Fiber.join(fiber), 2)
        const store = yield* TraceStore.TraceStore
        const [root] = yield* store.recent({ limit: 1, path: "call" })
        const attempts = yield* store.children(root!.id)
        assert.deepStrictEqual(
          attempts.map((a) => [a.status, a.startedAt - root!.startedAt]),
          [
            ["failure", 0],
            ["failure", 10],
            ["success", 30]
          ]
        )
      }).pipe(Effect.provide(env))
    )

    it.effect("keeps separate calls in separate trees", () =>
      Effect.gen(function* () {
        const t = Traced(Tool.pipeline(Traced(inc), Traced(double)), { path: "p" })
        yield* Effect.all([t.run(1), t.run(2)], { concurrency: "unbounded" })
        const store = yield* TraceStore.TraceStore
        const roots = yield* store.recent({ limit: 10, path: "p" })
        assert.strictEqual(roots.length, 2)
        for (const root of roots) assert.strictEqual((yield* store.children(root.id)).length, 2)
      }).pipe(Effect.provide(env))
    )

    it.effect("sets CurrentTrace for the call, and clears it after", () =>
      Effect.gen(function* () {
        const seen: Array<Option.Option<{ readonly id: string }>> = []
        const probe = Tool.make({
          name: "probe",
          description: "Reads the current trace.",
          input: Schema.Number,
          output: Schema.Number,
          run: (n) =>
            Effect.gen(function* () {
              seen.push(yield* Traced.CurrentTrace)
              return n
            })
        })
        yield* Traced(probe).run(1)
        assert.isTrue(Option.isSome(seen[0]!))
        assert.isTrue(Option.isNone(yield* Traced.CurrentTrace))
      }).pipe(Effect.provide(env))
    )
  })

  describe("call ids", () => {
    it.effect("the outermost traced call takes the call id; the steps under it get ids of their own, under it", () =>
      Effect.gen(function* () {
        const pipeline = Traced(Tool.pipeline(Traced(inc), Traced(double), Traced(inc)), { path: "p" })
        assert.strictEqual(yield* pipeline.run(1).pipe(Traced.withCallId("call-1")), 5)
        const store = yield* TraceStore.TraceStore
        const root = yield* store.get("call-1")
        assert.isTrue(Option.isSome(root))
        assert.strictEqual(Option.getOrThrow(root).path, "p")
        assert.strictEqual(Option.getOrThrow(root).rootId, "call-1")
        const steps = yield* store.children("call-1")
        assert.deepStrictEqual(
          steps.map((s) => [s.path, s.parentId, s.rootId]),
          [
            ["num.inc", "call-1", "call-1"],
            ["num.double", "call-1", "call-1"],
            ["num.inc", "call-1", "call-1"]
          ]
        )
        const ids = (yield* all).map((t) => t.id)
        assert.strictEqual(new Set(ids).size, 4)
      }).pipe(Effect.provide(env))
    )

    it.effect("of traced calls side by side under one id, one takes it and the others make their own", () =>
      Effect.gen(function* () {
        const calls = Effect.all(
          Array.from({ length: 8 }, (_, i) => Traced(inc).run(i)),
          { concurrency: "unbounded" }
        )
        yield* calls.pipe(Traced.withCallId("call-2"))
        yield* Effect.all([Traced(inc).run(1), Traced(double).run(1)]).pipe(Traced.withCallId("call-3"))
        const ids = (yield* all).map((t) => t.id)
        assert.strictEqual(ids.length, 10)
        assert.strictEqual(new Set(ids).size, 10)
        assert.strictEqual(ids.filter((id) => id === "call-2").length, 1)
        assert.strictEqual(ids.filter((id) => id === "call-3").length, 1)
      }).pipe(Effect.provide(env))
    )

    it.effect("a retried traced call: the first attempt takes the id, each retry makes its own", () =>
      Effect.gen(function* () {
        let calls = 0
        const flaky = Tool.make({
          name: "num.flaky",
          description: "Fails twice.",
          input: Schema.Number,
          output: Schema.Number,
          failure: Odd,
          run: (n) =>
            Effect.suspend(() => (++calls < 3 ? Effect.fail(new Odd({ n, retryable: true })) : Effect.succeed(n)))
        })
        const call = Traced(flaky).pipe(Retry({ base: "10 millis", jitter: false }))
        const fiber = yield* Effect.forkChild(call.run(2).pipe(Traced.withCallId("call-4")))
        yield* TestClock.adjust("1 second")
        assert.strictEqual(yield* Fiber.join(fiber), 2)
        const traces = [...(yield* all)].sort((a, b) => a.startedAt - b.startedAt)
        assert.deepStrictEqual(
          traces.map((t) => t.status),
          ["failure", "failure", "success"]
        )
        assert.strictEqual(traces[0]!.id, "call-4")
        assert.strictEqual(new Set(traces.map((t) => t.id)).size, 3)
      }).pipe(Effect.provide(env))
    )

    it.effect("a call id set inside a traced call names a trace under it", () =>
      Effect.gen(function* () {
        const served = Tool.make({
          name: "serve",
          description: "Serves one inner call under its own id.",
          input: Schema.Number,
          output: Schema.Number,
          run: (n) =>
            Traced(inc)
              .run(n)
              .pipe(Traced.withCallId("call-5"), Effect.provide(Trust.grant(0)))
        })
        yield* Traced(served).run(1)
        const traces = yield* all
        const outer = traces.find((t) => t.path === "serve")!
        const inner = traces.find((t) => t.id === "call-5")!
        assert.strictEqual(inner.parentId, outer.id)
        assert.strictEqual(inner.rootId, outer.id)
      }).pipe(Effect.provide(env))
    )

    it.effect("without a call id, traces make their own ids", () =>
      Effect.gen(function* () {
        assert.isTrue(Option.isNone(yield* Traced.CallId))
        yield* Traced(inc).run(1)
        const [trace] = yield* all
        assert.match(trace!.id, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
      }).pipe(Effect.provide(env))
    )

    it.effect("one id names the trace and the audit entries of a call", () =>
      Effect.gen(function* () {
        const served = Traced(Audited(inc), { path: "world.num.inc" })
        yield* served.run(1).pipe(Traced.withCallId(Traced.makeCallId()))
        const [trace] = yield* all
        const audit = yield* Effect.flatMap(AuditStore.AuditStore, (s) => s.list({ limit: 10 }))
        assert.deepStrictEqual(
          audit.map((e) => e.callId),
          [trace!.id, trace!.id]
        )
      }).pipe(Effect.provide(Layer.merge(env, AuditStore.layerMemory())))
    )
  })

  describe("spans", () => {
    it.effect("one span per call, named by the path, nested like the traces, with the trace's attributes", () =>
      Effect.gen(function* () {
        const spans: Array<{
          name: string
          parent: string | undefined
          id: string
          attributes: Record<string, unknown>
        }> = []
        const recording = Tracer.make({
          span(options) {
            const span = new Tracer.NativeSpan(options)
            const end = span.end.bind(span)
            span.end = (endTime, exit) => {
              end(endTime, exit)
              spans.push({
                name: span.name,
                id: span.spanId,
                parent: Option.getOrUndefined(span.parent)?.spanId,
                attributes: Object.fromEntries(span.attributes)
              })
            }
            return span
          }
        })
        const pipeline = Traced(Tool.pipeline(Traced(inc), Traced(double)), { path: "p" })
        yield* pipeline.run(1).pipe(Effect.withTracer(recording))
        const p = spans.find((s) => s.name === "p")!
        const steps = spans.filter((s) => s.parent === p.id).map((s) => s.name)
        assert.deepStrictEqual(steps, ["num.inc", "num.double"])
        const [trace] = yield* Effect.flatMap(TraceStore.TraceStore, (s) => s.recent({ limit: 1, path: "p" }))
        assert.strictEqual(p.attributes["ugent.trace.id"], trace!.id)
        assert.strictEqual(p.attributes["ugent.tool.path"], "p")
        assert.strictEqual(p.attributes["ugent.retry.attempt"], 1)
      }).pipe(Effect.provide(env))
    )

    it.effect("a span carries OpenTelemetry's GenAI attributes of a tool's execution beside ugent's own", () =>
      Effect.gen(function* () {
        const spans: Array<Record<string, unknown>> = []
        const recording = Tracer.make({
          span(options) {
            const span = new Tracer.NativeSpan(options)
            const end = span.end.bind(span)
            span.end = (endTime, exit) => {
              end(endTime, exit)
              spans.push(Object.fromEntries(span.attributes))
            }
            return span
          }
        })
        yield* Traced(evenOnly, { path: "world.num.even" }).run(2).pipe(Effect.withTracer(recording))
        yield* Traced(inc).run(1).pipe(Effect.withTracer(recording))
        const [even, plain] = spans
        const [trace] = yield* Effect.flatMap(TraceStore.TraceStore, (s) =>
          s.recent({ limit: 1, path: "world.num.even" })
        )
        assert.deepInclude(even, {
          "gen_ai.operation.name": "execute_tool",
          "gen_ai.tool.name": "world.num.even",
          "gen_ai.tool.call.id": trace!.id,
          "gen_ai.tool.description": "Fails on odd numbers.",
          "ugent.tool.name": "num.even",
          "ugent.trace.id": trace!.id
        })
        // Without a path the tool's name is the tool's name; every call has its own id.
        assert.strictEqual(plain!["gen_ai.tool.name"], "num.inc")
        assert.strictEqual(plain!["gen_ai.tool.description"], inc.description)
        assert.notStrictEqual(plain!["gen_ai.tool.call.id"], even!["gen_ai.tool.call.id"])
      }).pipe(Effect.provide(env))
    )
  })

  describe("laws", () => {
    it.effect.prop("transparency: a traced tool gives the bare tool's result", { n: Schema.Int }, ({ n }) =>
      Effect.gen(function* () {
        for (const tool of [inc, double, evenOnly]) {
          assert.deepStrictEqual(
            observe(yield* Effect.exit(Traced(tool).run(n))),
            observe(yield* Effect.exit(tool.run(n)))
          )
        }
      }).pipe(Effect.provide(env))
    )

    it.effect.prop(
      "distributes over composition: Traced(f >> g) and Traced(f) >> Traced(g) give the same result",
      { n: Schema.Int },
      ({ n }) =>
        Effect.gen(function* () {
          const whole = yield* Effect.exit(Traced(Tool.andThen(inc, evenOnly)).run(n))
          const stepwise = yield* Effect.exit(Tool.andThen(Traced(inc), Traced(evenOnly)).run(n))
          assert.deepStrictEqual(observe(whole), observe(stepwise))
        }).pipe(Effect.provide(env))
    )

    it.effect("a store that fails to record does not fail the call", () =>
      Effect.gen(function* () {
        const broken = TraceStore.makeMemory()
        const failing = {
          ...broken,
          append: () =>
            Effect.fail(new StoreError.StoreError({ store: "trace", operation: "append", detail: "disk full" }))
        }
        const result = yield* Traced(inc).run(1).pipe(Effect.provideService(TraceStore.TraceStore, failing))
        assert.strictEqual(result, 2)
      })
    )
  })
})
