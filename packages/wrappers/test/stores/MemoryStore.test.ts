import { assert, describe, it } from "@effect/vitest"
import { MemoryStore } from "@ugent/wrappers"
import { Effect } from "effect"
import { backends, withStores } from "./backends.ts"

const memory = MemoryStore.MemoryStore

const text = "alpha\nbeta\n\ngamma\ndelta\n"

for (const { backend, skip } of backends) {
  describe.skipIf(skip !== undefined)(`MemoryStore (${backend.name})${skip ? ` ${skip}` : ""}`, () => {
    describe("put / get", () => {
      it.live("keeps text with its size in characters and lines", () =>
        withStores(
          backend,
          Effect.gen(function* () {
            const store = yield* memory
            const id = yield* store.put({ id: "t", tool: "search.grep", content: text, summary: "5 lines" })
            const entry = yield* store.get(id)
            assert.strictEqual(id, "t")
            assert.strictEqual(entry.content, text)
            assert.strictEqual(entry.kind, "text")
            assert.strictEqual(entry.size, 24)
            assert.strictEqual(entry.lines, 5)
            assert.strictEqual(entry.tool, "search.grep")
            assert.strictEqual(entry.summary, "5 lines")
            // Reading it again is another use: all but its time of last use is the same.
            const { usedAt: _, ...info } = yield* store.info(id)
            const { usedAt: __, ...fromEntry } = MemoryStore.infoOf(entry)
            assert.deepStrictEqual(info, fromEntry)
          })
        )
      )

      it.live("keeps JSON as indented JSON text", () =>
        withStores(
          backend,
          Effect.gen(function* () {
            const store = yield* memory
            const content = { files: ["a.ts", "b.ts"], total: 2, truncated: false, note: null }
            const id = yield* store.put({ tool: "file.list", content, summary: "2 files" })
            const entry = yield* store.get(id)
            assert.strictEqual(entry.kind, "json")
            assert.strictEqual(entry.content, JSON.stringify(content, null, 2))
            assert.deepStrictEqual(JSON.parse(entry.content), content)
            assert.strictEqual(entry.lines, entry.content.split("\n").length)
          })
        )
      )

      it.live("keeps characters outside the BMP and counts them as JavaScript does", () =>
        withStores(
          backend,
          Effect.gen(function* () {
            const store = yield* memory
            const id = yield* store.put({ tool: "web.fetch", content: "naïve 🙂 日本", summary: "" })
            const entry = yield* store.get(id)
            assert.strictEqual(entry.content, "naïve 🙂 日本")
            assert.strictEqual(entry.size, "naïve 🙂 日本".length)
          })
        )
      )

      it.live("makes a fresh id for each put without one", () =>
        withStores(
          backend,
          Effect.gen(function* () {
            const store = yield* memory
            const ids = yield* Effect.forEach(
              Array.from({ length: 20 }, (_, i) => i),
              (i) => store.put({ tool: "t", content: `${i}`, summary: "" })
            )
            assert.strictEqual(new Set(ids).size, 20)
            for (const [i, id] of ids.entries()) assert.strictEqual((yield* store.get(id)).content, `${i}`)
          })
        )
      )

      it.live("replaces the entry stored under a given id", () =>
        withStores(
          backend,
          Effect.gen(function* () {
            const store = yield* memory
            yield* store.put({ id: "r", tool: "a", content: "old", summary: "old" })
            yield* store.put({ id: "r", tool: "b", content: "new\ncontent", summary: "new" })
            const entry = yield* store.get("r")
            assert.deepStrictEqual(
              [entry.tool, entry.content, entry.summary, entry.lines],
              ["b", "new\ncontent", "new", 2]
            )
          })
        )
      )

      it.live("fails with MemoryNotFound for an unknown id, in every read", () =>
        withStores(
          backend,
          Effect.gen(function* () {
            const store = yield* memory
            const errors = yield* Effect.all([
              Effect.flip(store.get("nope")),
              Effect.flip(store.info("nope")),
              Effect.flip(store.getRange("nope", { offset: 0, length: 1 })),
              Effect.flip(store.getLines("nope", { start: 1, count: 1 }))
            ])
            for (const error of errors) {
              assert.instanceOf(error, MemoryStore.MemoryNotFound)
              assert.strictEqual(error._tag === "MemoryNotFound" && error.id, "nope")
            }
          })
        )
      )

      it.live("deletes an entry once", () =>
        withStores(
          backend,
          Effect.gen(function* () {
            const store = yield* memory
            const id = yield* store.put({ tool: "t", content: "x", summary: "" })
            assert.isTrue(yield* store.delete(id))
            assert.isFalse(yield* store.delete(id))
            assert.instanceOf(yield* Effect.flip(store.get(id)), MemoryStore.MemoryNotFound)
          })
        )
      )
    })

    describe("ranges", () => {
      it.live("reads a character range, clamped to the content", () =>
        withStores(
          backend,
          Effect.gen(function* () {
            const store = yield* memory
            yield* store.put({ id: "t", tool: "t", content: text, summary: "" })
            assert.deepStrictEqual(yield* store.getRange("t", { offset: 6, length: 4 }), {
              id: "t",
              content: "beta",
              offset: 6,
              length: 4,
              size: 24,
              hasMore: true
            })
            const tail = yield* store.getRange("t", { offset: 18, length: 100 })
            assert.deepStrictEqual([tail.content, tail.length, tail.hasMore], ["delta\n", 6, false])
            const past = yield* store.getRange("t", { offset: 100, length: 5 })
            assert.deepStrictEqual([past.content, past.offset, past.length, past.hasMore], ["", 24, 0, false])
            const negative = yield* store.getRange("t", { offset: -3, length: 5 })
            assert.deepStrictEqual([negative.content, negative.offset], ["alpha", 0])
          })
        )
      )

      it.live("reads lines from a 1-based start, clamped to the content", () =>
        withStores(
          backend,
          Effect.gen(function* () {
            const store = yield* memory
            yield* store.put({ id: "t", tool: "t", content: text, summary: "" })
            assert.deepStrictEqual(yield* store.getLines("t", { start: 2, count: 3 }), {
              id: "t",
              content: "beta\n\ngamma",
              start: 2,
              end: 4,
              lines: 5,
              hasMore: true
            })
            const last = yield* store.getLines("t", { start: 5, count: 10 })
            assert.deepStrictEqual([last.content, last.end, last.hasMore], ["delta", 5, false])
            const past = yield* store.getLines("t", { start: 9, count: 2 })
            assert.deepStrictEqual([past.content, past.start, past.end, past.hasMore], ["", 9, 8, false])
            const zero = yield* store.getLines("t", { start: 0, count: 1 })
            assert.deepStrictEqual([zero.content, zero.start], ["alpha", 1])
          })
        )
      )

      it.live("walks a large entry by lines and gets all of it back", () =>
        withStores(
          backend,
          Effect.gen(function* () {
            const store = yield* memory
            const big = Array.from({ length: 2_000 }, (_, i) => `line ${i} ${"x".repeat(i % 50)}`).join("\n")
            const id = yield* store.put({ tool: "t", content: big, summary: "" })
            const pieces: Array<string> = []
            for (let start = 1, more = true; more; start += 300) {
              const page = yield* store.getLines(id, { start, count: 300 })
              pieces.push(page.content)
              more = page.hasMore
            }
            assert.strictEqual(pieces.join("\n"), big)
          })
        )
      )
    })

    describe("list", () => {
      it.live("lists infos newest first, optionally of one tool, at most limit", () =>
        withStores(
          backend,
          Effect.gen(function* () {
            const store = yield* memory
            yield* store.put({ id: "a", tool: "git.log", content: "1", summary: "a" })
            yield* Effect.sleep("5 millis")
            yield* store.put({ id: "b", tool: "file.read", content: "22", summary: "b" })
            yield* Effect.sleep("5 millis")
            yield* store.put({ id: "c", tool: "git.log", content: "333", summary: "c" })
            const all = yield* store.list({ limit: 10 })
            assert.deepStrictEqual(
              all.map((i) => [i.id, i.size]),
              [
                ["c", 3],
                ["b", 2],
                ["a", 1]
              ]
            )
            assert.isFalse("content" in (all[0] ?? {}))
            assert.deepStrictEqual(
              (yield* store.list({ tool: "git.log", limit: 1 })).map((i) => i.id),
              ["c"]
            )
          })
        )
      )

      it.live("filters by owner: an owner's own entries, null for the unowned ones, every entry without one", () =>
        withStores(
          backend,
          Effect.gen(function* () {
            const store = yield* memory
            yield* store.put({ id: "a1", tool: "git.log", content: "1", summary: "", owner: "alice" })
            yield* Effect.sleep("5 millis")
            yield* store.put({ id: "b1", tool: "git.log", content: "2", summary: "", owner: "bob" })
            yield* Effect.sleep("5 millis")
            yield* store.put({ id: "n1", tool: "git.log", content: "3", summary: "" })
            yield* Effect.sleep("5 millis")
            yield* store.put({ id: "a2", tool: "file.read", content: "4", summary: "", owner: "alice" })
            const ids = (query: MemoryStore.MemoryListQuery) =>
              Effect.map(store.list(query), (infos) => infos.map((i) => i.id))
            assert.deepStrictEqual(yield* ids({ owner: "alice", limit: 10 }), ["a2", "a1"])
            assert.deepStrictEqual(yield* ids({ owner: "bob", limit: 10 }), ["b1"])
            assert.deepStrictEqual(yield* ids({ owner: "carol", limit: 10 }), [])
            assert.deepStrictEqual(yield* ids({ owner: null, limit: 10 }), ["n1"])
            assert.deepStrictEqual(yield* ids({ limit: 10 }), ["a2", "n1", "b1", "a1"])
            assert.deepStrictEqual(yield* ids({ owner: "alice", tool: "git.log", limit: 10 }), ["a1"])
            assert.deepStrictEqual(yield* ids({ owner: "alice", limit: 1 }), ["a2"])
          })
        )
      )

      it.live("keeps the owner with the entry, and a replacement takes the new one", () =>
        withStores(
          backend,
          Effect.gen(function* () {
            const store = yield* memory
            yield* store.put({ id: "x", tool: "t", content: "1", summary: "", owner: "alice" })
            assert.strictEqual((yield* store.get("x")).owner, "alice")
            assert.strictEqual((yield* store.info("x")).owner, "alice")
            yield* store.put({ id: "x", tool: "t", content: "2", summary: "" })
            assert.isFalse("owner" in (yield* store.get("x")))
            assert.deepStrictEqual(
              (yield* store.list({ owner: null, limit: 10 })).map((i) => i.id),
              ["x"]
            )
          })
        )
      )
    })

    describe("forgetting", () => {
      it.live("an entry past its time to live is gone from reads and lists", () =>
        withStores(
          backend,
          Effect.gen(function* () {
            const store = yield* memory
            yield* store.put({ id: "old", tool: "t", content: "soon gone", summary: "", owner: "me" })
            const info = yield* store.info("old")
            assert.isAtMost(info.expiresAt! - info.createdAt, 200)
            yield* Effect.sleep("250 millis")
            assert.deepStrictEqual(yield* store.list({ owner: "me", limit: 10 }), [])
            const gone = yield* Effect.flip(store.get("old"))
            assert.strictEqual(gone._tag, "MemoryNotFound")
            assert.include(gone.message, "forgotten")
          }),
          { memory: { ttl: "200 millis" } }
        )
      )

      it.live(
        "past a caller's cap its least recently used entries go first (a read is a use); others keep theirs",
        () =>
          withStores(
            backend,
            Effect.gen(function* () {
              const store = yield* memory
              const put = (id: string, owner: string) =>
                store.put({ id, tool: "t", content: id.repeat(40).slice(0, 40), summary: "", owner })
              yield* put("a", "me")
              yield* Effect.sleep("5 millis")
              yield* put("b", "me")
              yield* put("z", "other")
              yield* Effect.sleep("5 millis")
              yield* store.getLines("a", { start: 1, count: 1 })
              yield* Effect.sleep("5 millis")
              yield* put("c", "me")
              const ids = (owner: string) =>
                Effect.map(store.list({ owner, limit: 10 }), (infos) => infos.map((i) => i.id).sort())
              assert.deepStrictEqual(yield* ids("me"), ["a", "c"])
              assert.deepStrictEqual(yield* ids("other"), ["z"])
            }),
            { memory: { maxCharsPerOwner: 100 } }
          )
      )

      it.live("keeps the file an entry was kept from, with its hash", () =>
        withStores(
          backend,
          Effect.gen(function* () {
            const store = yield* memory
            const source = { path: "src/a.ts", hash: "ab".repeat(32) }
            yield* store.put({ id: "f", tool: "file.read", content: "x", summary: "", source })
            assert.deepStrictEqual((yield* store.get("f")).source, source)
            assert.deepStrictEqual((yield* store.list({ limit: 10 }))[0]!.source, source)
          })
        )
      )
    })
  })
}
