import { assert, describe, it } from "@effect/vitest"
import { Boundary, Observer, ReadProof, Tool, Trust } from "@ugent/core"
import { MemoryStore, memoryList, memoryRead, Summarized } from "@ugent/wrappers"
import { Effect, Exit, Layer, Schema } from "effect"
import { TestClock } from "effect/testing"

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
const as = (id: string) => Effect.provide(Observer.layer({ id, trust: 0 }))
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

  it.effect("MemoryNotFound names a tool that exists to list the ids", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(memoryRead.run({ id: "m-nothing" }))
      assert.include(error.message, "self.memory.list")
    }).pipe(Effect.provide(env))
  )

  describe("per caller", () => {
    it.effect("records the caller as the entry's owner, and no owner without one", () =>
      Effect.gen(function* () {
        const store = yield* MemoryStore.MemoryStore
        const mine = yield* Summarized(grep).run({ n: 2 }).pipe(as("alice"))
        const anyone = yield* Summarized(grep).run({ n: 2 })
        assert.strictEqual((yield* store.get(mine.memoryId)).owner, "alice")
        assert.isFalse("owner" in (yield* store.get(anyone.memoryId)))
      }).pipe(Effect.provide(env))
    )

    it.effect("memory.read answers another caller's entry as it answers an unknown id", () =>
      Effect.gen(function* () {
        const { memoryId } = yield* Summarized(grep).run({ n: 3 }).pipe(as("alice"))
        assert.strictEqual((yield* memoryRead.run({ id: memoryId }).pipe(as("alice"))).content, lines(3))
        const byBob = yield* Effect.flip(memoryRead.run({ id: memoryId }).pipe(as("bob")))
        const unknown = yield* Effect.flip(memoryRead.run({ id: "m-unknown" }).pipe(as("bob")))
        assert.deepStrictEqual(byBob, new MemoryStore.MemoryNotFound({ id: memoryId }))
        assert.strictEqual(byBob.message.replace(memoryId, "ID"), unknown.message.replace("m-unknown", "ID"))
        // Without an Observer the caller is no one: an owned entry is not theirs either.
        assert.strictEqual((yield* Effect.flip(memoryRead.run({ id: memoryId })))._tag, "MemoryNotFound")
        const lines1 = yield* Effect.flip(memoryRead.run({ id: memoryId, line: 1 }).pipe(as("bob")))
        assert.strictEqual(lines1._tag, "MemoryNotFound")
      }).pipe(Effect.provide(env))
    )

    it.effect("an entry without an owner is read by anyone who has its id", () =>
      Effect.gen(function* () {
        const { memoryId } = yield* Summarized(grep).run({ n: 3 })
        assert.strictEqual((yield* memoryRead.run({ id: memoryId }).pipe(as("bob"))).content, lines(3))
        assert.strictEqual((yield* memoryRead.run({ id: memoryId })).content, lines(3))
      }).pipe(Effect.provide(env))
    )

    it.effect("memory.list lists the caller's own entries, newest first, 20 unless told", () =>
      Effect.gen(function* () {
        const ids: Array<string> = []
        for (let n = 1; n <= 25; n++) {
          ids.push((yield* Summarized(grep).run({ n }).pipe(as("alice"))).memoryId)
          yield* Summarized(find).run({ n }).pipe(as("bob"))
          yield* TestClock.adjust("1 millis")
        }
        yield* Summarized(grep).run({ n: 1 })
        const listed = yield* memoryList.run({}).pipe(as("alice"))
        assert.deepStrictEqual(
          listed.entries.map((e) => e.id),
          ids.slice(5).reverse()
        )
        assert.isTrue(listed.hasMore)
        assert.deepStrictEqual(listed.entries[0], {
          id: ids[24]!,
          tool: "search.grep",
          summary: `25 line(s), ${lines(25).length} chars. Starts: src/file0.ts:1: const match = 0`,
          size: lines(25).length,
          lines: 25,
          createdAt: 24,
          // Forgotten a day after it was stored (the default time to live).
          expiresAt: 24 + 86_400_000
        })
        const all = yield* memoryList.run({ limit: 100 }).pipe(as("alice"))
        assert.strictEqual(all.entries.length, 25)
        assert.isFalse(all.hasMore)
        assert.isTrue(
          (yield* memoryList.run({ limit: 100 }).pipe(as("bob"))).entries.every((e) => e.tool === "search.find")
        )
        assert.strictEqual((yield* memoryList.run({ tool: "search.find" }).pipe(as("alice"))).entries.length, 0)
        assert.strictEqual((yield* memoryList.run({ limit: 100 }).pipe(as("carol"))).entries.length, 0)
        // Without an Observer: the entries no one owns.
        assert.strictEqual((yield* memoryList.run({ limit: 100 })).entries.length, 1)
        assert.strictEqual(memoryList.name, "memory.list")
        assert.strictEqual(Summarized.list, memoryList)
      }).pipe(Effect.provide(env))
    )

    it.effect("memory.list refuses a limit out of range at the boundary", () =>
      Effect.gen(function* () {
        for (const limit of [0, 201, 1.5]) {
          const result = yield* Boundary.runJson(memoryList, { limit })
          assert.isFalse(result.ok, `limit ${limit}`)
        }
      }).pipe(Effect.provide(env))
    )
  })

  describe("forgetting and staleness", () => {
    it.effect("memory.delete forgets the caller's own entry; another caller's is MemoryNotFound and stays", () =>
      Effect.gen(function* () {
        const mine = yield* Summarized(grep).run({ n: 2 }).pipe(as("alice"))
        const theirs = yield* Summarized(grep).run({ n: 2 }).pipe(as("bob"))
        assert.deepStrictEqual(yield* Summarized.delete.run({ id: mine.memoryId }).pipe(as("alice")), {
          id: mine.memoryId,
          deleted: true
        })
        assert.strictEqual(
          (yield* Effect.flip(memoryRead.run({ id: mine.memoryId }).pipe(as("alice"))))._tag,
          "MemoryNotFound"
        )
        const refused = yield* Effect.flip(Summarized.delete.run({ id: theirs.memoryId }).pipe(as("alice")))
        assert.strictEqual(refused._tag, "MemoryNotFound")
        assert.strictEqual((yield* memoryRead.run({ id: theirs.memoryId }).pipe(as("bob"))).content, lines(2))
      }).pipe(Effect.provide(env))
    )

    it.effect(
      "a result kept from a file says, when read after the file changed, that it is stale and how to read it afresh",
      () =>
        Effect.gen(function* () {
          const proof = yield* ReadProof.issue({ path: "notes.md", content: "v1\n", coverage: { _tag: "Whole" } })
          const read = Tool.make({
            name: "file.read",
            description: "Reads.",
            input: Schema.Struct({ path: Schema.String }),
            output: Schema.Struct({ content: Schema.String, proof: ReadProof.ReadProofFromToken }),
            run: () => Effect.succeed({ content: "v1", proof })
          })
          const { memoryId } = yield* Summarized(read).run({ path: "notes.md" })
          assert.deepStrictEqual((yield* MemoryStore.MemoryStore.use((m) => m.get(memoryId))).source, {
            path: "notes.md",
            hash: proof.hash
          })
          let now: MemoryStore.SourceState = { state: "unchanged" }
          const checked = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
            Effect.provideService(effect, MemoryStore.SourceCheck, () => Effect.succeed(now))
          assert.isFalse("stale" in (yield* checked(memoryRead.run({ id: memoryId }))))
          now = { state: "changed", next: 'file.read {"path":"notes.md"}' }
          const stale = yield* checked(memoryRead.run({ id: memoryId, line: 1 }))
          assert.deepStrictEqual(stale.stale, {
            path: "notes.md",
            reason: "changed",
            next: 'file.read {"path":"notes.md"}'
          })
          now = { state: "deleted" }
          assert.deepStrictEqual((yield* checked(memoryRead.run({ id: memoryId }))).stale, {
            path: "notes.md",
            reason: "deleted"
          })
        }).pipe(Effect.provide(env))
    )
  })

  describe("hints", () => {
    it.effect("name the memory tools as MemoryTools says, so a server names the paths it serves", () =>
      Effect.gen(function* () {
        const answer = yield* Summarized(grep).run({ n: 500 })
        assert.strictEqual(answer.hint, `Full result: self.memory.read {"id":"${answer.memoryId}"}`)
        const page = yield* memoryRead.run({ id: answer.memoryId, length: 10 })
        assert.strictEqual(page.next, `self.memory.read {"id":"${answer.memoryId}","offset":10}`)
        const lines = yield* memoryRead.run({ id: answer.memoryId, line: 1, lines: 2 })
        assert.strictEqual(lines.next, `self.memory.read {"id":"${answer.memoryId}","line":3}`)
      }).pipe(
        Effect.provideService(Summarized.MemoryTools, { read: "self.memory.read", list: "self.memory.list" }),
        Effect.provide(env)
      )
    )

    it("nextHint writes the input as JSON, whatever the id holds", () => {
      const hint = Summarized.nextHint("self.memory.read", 'a"b\\c', { offset: 3 })
      assert.strictEqual(hint, 'self.memory.read {"id":"a\\"b\\\\c","offset":3}')
      assert.deepStrictEqual(JSON.parse(hint.slice("self.memory.read ".length)), { id: 'a"b\\c', offset: 3 })
    })
  })

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
