import { assert, describe, it } from "@effect/vitest"
import { Boundary, Tool, Trust } from "@ugent/core"
import { MemoryStore, memoryRead, Summarized } from "@ugent/wrappers"
import { Effect, Exit, Layer, Schema } from "effect"

class Nope extends Schema.TaggedError<Nope>()("Nope", {}) {}

const lines = (n: number) =>
  Array.from({ length: n }, (_, i) => `src/file${i}.ts:${i + 1}: const match = ${i}`).join("\n")
const grep = Tool.make({
  name: "search.grep",
  description: "Finds lines.",
  input: Schema.Struct({ n: Schema.Int }),
  output: Schema.String,
  failure: Nope,
  run: ({ n }) => (n < 0 ? Effect.fail(new Nope()) : Effect.succeed(lines(n)))
})
const Hit = Schema.Struct({ path: Schema.String, line: Schema.Int })
const find = Tool.make({
  name: "search.find",
  description: "Finds hits.",
  input: Schema.Struct({ n: Schema.Int }),
  output: Schema.Struct({ hits: Schema.Array(Hit), truncated: Schema.Boolean, query: Schema.String }),
  run: ({ n }) =>
    Effect.succeed({
      hits: Array.from({ length: n }, (_, i) => ({ path: `src/f${i}.ts`, line: i })),
      truncated: false,
      query: "x"
    })
})

const env = Layer.mergeAll(MemoryStore.layerMemory(), Trust.grant(0))
const tokens = (value: unknown) => Math.ceil(JSON.stringify(value).length / 4)

/** Reads a whole entry through memory.read, page by page, following `next`. */
const readAll = (id: string) =>
  Effect.gen(function* () {
    let text = ""
    let offset = 0
    for (;;) {
      const page = yield* memoryRead.run({ id, offset, length: 1000 })
      text += page.content
      if (!page.hasMore) return text
      assert.strictEqual(page.next, `memory.read {"id":"${id}","offset":${page.end}}`)
      offset = page.end
    }
  })

describe("Summarized", () => {
  it.effect("returns a summary under 100 tokens with the id and how to read the rest", () =>
    Effect.gen(function* () {
      for (const n of [0, 1, 50, 5000]) {
        const answer = yield* Summarized(grep).run({ n })
        assert.isBelow(tokens(answer), 100, JSON.stringify(answer))
        assert.match(answer.memoryId, /^m-/)
        assert.strictEqual(answer.hint, `Full result: memory.read {"id":"${answer.memoryId}"}`)
        assert.strictEqual(answer.chars, lines(n).length)
        assert.strictEqual(answer.lines, n)
      }
      for (const n of [0, 3, 5000]) assert.isBelow(tokens(yield* Summarized(find).run({ n })), 100)
    }).pipe(Effect.provide(env))
  )

  it.effect("describes the result's shape", () =>
    Effect.gen(function* () {
      const text = yield* Summarized(grep).run({ n: 3 })
      assert.strictEqual(text.summary, "3 line(s), 95 chars. Starts: src/file0.ts:1: const match = 0")
      const structured = yield* Summarized(find).run({ n: 120 })
      assert.strictEqual(structured.summary, '{ hits: 120 item(s), truncated: false, query: "x" }')
    }).pipe(Effect.provide(env))
  )

  it.effect("keeps the full result: memory.read gives it back, page by page", () =>
    Effect.gen(function* () {
      const { memoryId } = yield* Summarized(grep).run({ n: 400 })
      assert.strictEqual(yield* readAll(memoryId), lines(400))
      const structured = yield* Summarized(find).run({ n: 50 })
      const full = JSON.parse(yield* readAll(structured.memoryId))
      assert.deepStrictEqual(full, Effect.runSync(find.run({ n: 50 }).pipe(Effect.provide(Trust.grant(0)))))
    }).pipe(Effect.provide(env))
  )

  it.effect("memory.read reads line ranges", () =>
    Effect.gen(function* () {
      const { memoryId } = yield* Summarized(grep).run({ n: 10 })
      const part = yield* memoryRead.run({ id: memoryId, line: 3, lines: 2 })
      assert.deepStrictEqual(part, {
        id: memoryId,
        content: "src/file2.ts:3: const match = 2\nsrc/file3.ts:4: const match = 3",
        unit: "lines",
        start: 3,
        end: 4,
        total: 10,
        hasMore: true,
        next: `memory.read {"id":"${memoryId}","line":5}`
      })
      const last = yield* memoryRead.run({ id: memoryId, line: 9 })
      assert.strictEqual(last.end, 10)
      assert.isFalse(last.hasMore)
      assert.isUndefined(last.next)
    }).pipe(Effect.provide(env))
  )

  it.effect("memory.read fails with MemoryNotFound for an unknown id", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(memoryRead.run({ id: "m-nothing" }))
      assert.strictEqual(error._tag, "MemoryNotFound")
      assert.match(error.message, /m-nothing/)
      assert.strictEqual(memoryRead.name, "memory.read")
    }).pipe(Effect.provide(env))
  )

  it.effect("uses a given summarizer, cut to the limit", () =>
    Effect.gen(function* () {
      const answer = yield* Summarized(grep, {
        summarize: (output) => `grep found ${output.split("\n").length} lines`.padEnd(500, "!"),
        maxSummaryChars: 30
      }).run({ n: 7 })
      assert.strictEqual(answer.summary, "grep found 7 lines!!!!!!!!!!!…")
    }).pipe(Effect.provide(env))
  )

  it.effect("lets failures through, storing nothing", () =>
    Effect.gen(function* () {
      const exit = yield* Effect.exit(Summarized(grep).run({ n: -1 }))
      assert.isTrue(Exit.isFailure(exit))
      const store = yield* MemoryStore.MemoryStore
      assert.deepStrictEqual(yield* store.list({ limit: 10 }), [])
    }).pipe(Effect.provide(env))
  )

  it.effect("its output schema is the summary, so it encodes at a boundary", () =>
    Effect.gen(function* () {
      const result = yield* Boundary.runJson(Summarized(grep), { n: 2 })
      assert.isTrue(result.ok)
      assert.deepStrictEqual(Object.keys((result as { readonly result: object }).result).sort(), [
        "chars",
        "hint",
        "lines",
        "memoryId",
        "summary"
      ])
    }).pipe(Effect.provide(env))
  )

  it.effect.prop(
    "memory holds exactly the bare tool's result",
    { n: Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 300 })) },
    ({ n }) =>
      Effect.gen(function* () {
        const { memoryId } = yield* Summarized(grep).run({ n })
        assert.strictEqual(yield* readAll(memoryId), yield* grep.run({ n }))
      }).pipe(Effect.provide(env))
  )
})
