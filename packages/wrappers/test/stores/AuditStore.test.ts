import { assert, describe, it } from "@effect/vitest"
import { AuditStore } from "@ugent/wrappers"
import { Effect } from "effect"
import { backends, withStores } from "./backends.ts"

const audit = AuditStore.AuditStore

const after = (id: string, fields: Partial<AuditStore.AuditEntry> = {}): AuditStore.AuditEntry => ({
  id,
  callId: id,
  phase: "after",
  at: 1_000,
  observerId: "alice",
  path: "file.read",
  inputSummary: "{}",
  status: "success",
  ...fields
})

const before = (id: string, fields: Partial<AuditStore.AuditEntry> = {}): AuditStore.AuditEntry =>
  after(id, { phase: "before", status: "pending", ...fields })

/** The error of failure `i` of file.read (15..19): four refusals and a missing file. */
const failures: Record<number, AuditStore.AuditError> = {
  15: { tag: "Forbidden", message: "no", kind: "denied" },
  16: { tag: "Forbidden", message: "no", kind: "denied" },
  17: { tag: "RateLimited", message: "slow down", kind: "rate_limited" },
  18: { tag: "FileNotFound", message: "missing", kind: "not_found" },
  19: { tag: "TrustDenied", message: "L0", kind: "denied" }
}

/**
 * A fixture whose numbers are worked out by hand below: file.read has 20
 * calls (durations 10..200, the last 5 failed, 4 of them refused),
 * alternating bob / alice; git.log has 4 calls by alice (durations 5, 1, 3
 * and one without; one failure recorded without a kind). Pending entries and
 * entries outside [500, 5000) (a refusal among them) must not count.
 */
const fixture: ReadonlyArray<AuditStore.AuditEntry> = [
  ...Array.from({ length: 20 }, (_, i) => [
    before(`fr${i}/b`, { callId: `fr${i}`, at: 999 + i, observerId: i % 2 ? "alice" : "bob" }),
    after(`fr${i}/a`, {
      callId: `fr${i}`,
      at: 1_000 + i,
      observerId: i % 2 ? "alice" : "bob",
      durationMillis: 10 * (i + 1),
      ...(i < 15 ? { status: "success" as const } : { status: "failure" as const, error: failures[i]! })
    })
  ]).flat(),
  after("gl0", { path: "git.log", at: 2_000, durationMillis: 5 }),
  after("gl1", { path: "git.log", at: 2_001, durationMillis: 1 }),
  after("gl2", { path: "git.log", at: 2_002, durationMillis: 3 }),
  after("gl3", { path: "git.log", at: 2_003, status: "failure", error: { tag: "Boom", message: "boom" } }),
  after("early", {
    at: 10,
    durationMillis: 9_999,
    status: "failure",
    error: { tag: "Forbidden", message: "no", kind: "denied" }
  }),
  after("late", { at: 5_000, durationMillis: 9_999 })
]

const expected: AuditStore.AuditAnalytics = {
  byTool: [
    {
      key: "file.read",
      calls: 20,
      successes: 15,
      failures: 5,
      refusals: 4,
      successRate: 0.75,
      averageDurationMillis: 105,
      p50DurationMillis: 100, // rank ceil(0.5 · 20) = 10
      p95DurationMillis: 190 // rank ceil(0.95 · 20) = 19
    },
    {
      key: "git.log",
      calls: 4,
      successes: 3,
      failures: 1,
      refusals: 0,
      successRate: 0.75,
      averageDurationMillis: 3,
      p50DurationMillis: 3, // rank ceil(0.5 · 3) = 2
      p95DurationMillis: 5 // rank ceil(0.95 · 3) = 3
    }
  ],
  byObserver: [
    {
      key: "alice",
      calls: 14,
      successes: 10,
      failures: 4,
      refusals: 3, // fr15, fr17, fr19
      successRate: 10 / 14,
      averageDurationMillis: 85.308, // (1 + 3 + 5 + 20 + 40 + … + 200) / 13, rounded to the microsecond
      p50DurationMillis: 80, // rank ceil(0.5 · 13) = 7 of 1, 3, 5, 20, 40, 60, 80, …
      p95DurationMillis: 200 // rank ceil(0.95 · 13) = 13
    },
    {
      key: "bob",
      calls: 10,
      successes: 8,
      failures: 2,
      refusals: 1, // fr16; fr18 is a missing file, not a refusal
      successRate: 0.8,
      averageDurationMillis: 100,
      p50DurationMillis: 90, // rank ceil(0.5 · 10) = 5 of 10, 30, 50, 70, 90, …
      p95DurationMillis: 190 // rank ceil(0.95 · 10) = 10
    }
  ],
  // Most frequent first, then by reason.
  refusals: [
    { reason: "Forbidden", kind: "denied", count: 2 },
    { reason: "RateLimited", kind: "rate_limited", count: 1 },
    { reason: "TrustDenied", kind: "denied", count: 1 }
  ],
  // Each observer's calls of each tool: alice has file.read fr1, fr3, …, fr19 and git.log; bob file.read fr0, …, fr18.
  byObserverTool: [
    { observerId: "alice", path: "file.read", calls: 10, successes: 7, failures: 3, refusals: 3 },
    { observerId: "alice", path: "git.log", calls: 4, successes: 3, failures: 1, refusals: 0 },
    { observerId: "bob", path: "file.read", calls: 10, successes: 8, failures: 2, refusals: 1 }
  ],
  // Every failure by its error, refusals and the rest, most frequent first, then by reason.
  failures: [
    { reason: "Forbidden", kind: "denied", count: 2, lastAt: 1_016 },
    { reason: "Boom", count: 1, lastAt: 2_003 },
    { reason: "FileNotFound", kind: "not_found", count: 1, lastAt: 1_018 },
    { reason: "RateLimited", kind: "rate_limited", count: 1, lastAt: 1_017 },
    { reason: "TrustDenied", kind: "denied", count: 1, lastAt: 1_019 }
  ],
  totals: { calls: 24, successes: 18, failures: 6, refusals: 4 }
}

const recordAll = (entries: ReadonlyArray<AuditStore.AuditEntry>) =>
  Effect.flatMap(audit, (store) => Effect.forEach(entries, store.record, { discard: true }))

/** A deterministic generator (mulberry32), so every backend gets the same random data. */
const random = (seed: number) => () => {
  seed = (seed + 0x6d2b79f5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296
}

const generated = (): ReadonlyArray<AuditStore.AuditEntry> => {
  const next = random(42)
  const tools = ["file.read", "file.write", "search.grep", "git.log", "web.fetch"]
  const observers = ["claude", "ci", "ide", "shell"]
  // Refusals of several reasons and kinds, other kinds, and failures recorded without a kind.
  const errors: ReadonlyArray<AuditStore.AuditError> = [
    { tag: "Forbidden", message: "", kind: "denied" },
    { tag: "TrustDenied", message: "", kind: "denied" },
    { tag: "RateLimited", message: "", kind: "rate_limited" },
    { tag: "LoopDetected", message: "", kind: "rate_limited" },
    { tag: "FileNotFound", message: "", kind: "not_found" },
    { tag: "TimedOut", message: "", kind: "timeout" },
    { tag: "Boom", message: "" }
  ]
  return Array.from({ length: 600 }, (_, i) => {
    const pick = <A>(xs: ReadonlyArray<A>) => xs[Math.floor(next() * xs.length)] as A
    const phase = next() < 0.3 ? "before" : "after"
    const status = phase === "before" ? "pending" : next() < 0.8 ? "success" : "failure"
    const duration = next() < 0.1 ? undefined : next() * 500 // arbitrary doubles, not round numbers
    return after(`g${i}`, {
      phase,
      status,
      at: Math.floor(next() * 10_000),
      path: pick(tools),
      observerId: pick(observers),
      ...(phase === "after" && duration !== undefined ? { durationMillis: duration } : {}),
      ...(status === "failure" ? { error: pick(errors) } : {})
    })
  })
}

for (const { backend, skip } of backends) {
  describe.skipIf(skip !== undefined)(`AuditStore (${backend.name})${skip ? ` ${skip}` : ""}`, () => {
    describe("record / list", () => {
      it.live("lists an entry as it was recorded, optional fields included", () =>
        withStores(
          backend,
          Effect.gen(function* () {
            const full = after("full", {
              callId: "c-9",
              at: 1_795_000_000_123,
              observerId: "claude",
              path: "world.tools.file.write",
              inputSummary: '{"path":"notes.md"}',
              status: "failure",
              durationMillis: 12.5,
              error: { tag: "ProofRejected", message: "The file changed since it was read.", kind: "conflict" },
              resultSummary: "",
              estimatedTokens: 42
            })
            const pending = before("pending", { callId: "c-9", at: 1_795_000_000_000 })
            // An entry recorded before failures had kinds.
            const kindless = after("kindless", {
              at: 1_794_000_000_000,
              status: "failure",
              error: { tag: "Boom", message: "" }
            })
            yield* recordAll([full, pending, kindless])
            assert.deepStrictEqual(yield* (yield* audit).list({ limit: 10 }), [full, pending, kindless])
          })
        )
      )

      it.live("threat 50: an entry keeps at most 2,048 characters of each text, whatever its writer gave", () =>
        withStores(
          backend,
          Effect.gen(function* () {
            const store = yield* audit
            const huge = after("huge", {
              inputSummary: "i".repeat(100_000),
              resultSummary: "r".repeat(100_000),
              status: "failure",
              error: { tag: "Boom", message: "m".repeat(1_000_000), kind: "failed" }
            })
            yield* store.record(huge)
            yield* store.append(after("huge-appended", { inputSummary: "j".repeat(100_000) }))
            // Newest first, ties by id: "huge-appended" before "huge".
            const [appended, entry] = yield* store.list({ limit: 10 })
            assert.strictEqual(AuditStore.maxTextChars, 2048)
            assert.strictEqual(entry!.inputSummary, `${"i".repeat(2047)}…`)
            assert.strictEqual(entry!.resultSummary, `${"r".repeat(2047)}…`)
            assert.deepStrictEqual(entry!.error, { tag: "Boom", message: `${"m".repeat(2047)}…`, kind: "failed" })
            assert.strictEqual(appended!.inputSummary.length, 2048)
          })
        )
      )

      it.live("ignores a second entry with the same id", () =>
        withStores(
          backend,
          Effect.gen(function* () {
            yield* recordAll([after("x", { path: "first" }), after("x", { path: "second" })])
            assert.deepStrictEqual(
              (yield* (yield* audit).list({ limit: 10 })).map((e) => e.path),
              ["first"]
            )
          })
        )
      )

      it.live("an appended entry is seen by the next list and analytics, and a recorded one too", () =>
        withStores(
          backend,
          Effect.gen(function* () {
            const store = yield* audit
            yield* store.append(before("q1/b", { callId: "q1" }))
            yield* store.append(after("q1/a", { callId: "q1", at: 1_004, durationMillis: 4 }))
            assert.deepStrictEqual(
              (yield* store.list({ limit: 10 })).map((e) => e.id),
              ["q1/a", "q1/b"]
            )
            yield* store.append(after("q2/a", { callId: "q2", durationMillis: 6 }))
            yield* store.record(after("q3/a", { callId: "q3", durationMillis: 8 }))
            assert.strictEqual((yield* store.analytics({})).totals.calls, 3)
          })
        )
      )

      it.live("appended entries outlive the store: its end writes them", () =>
        Effect.scoped(
          Effect.gen(function* () {
            const db = yield* backend.database
            const ids = Array.from({ length: 50 }, (_, i) => `s${i}`)
            yield* Effect.scoped(
              Effect.provide(
                Effect.flatMap(audit, (store) =>
                  Effect.forEach(ids, (id) => store.append(after(id)), { discard: true })
                ),
                db.open()
              )
            )
            const listed = yield* Effect.provide(
              Effect.flatMap(audit, (store) => store.list({ limit: 100 })),
              db.open()
            )
            assert.strictEqual(listed.length, 50)
          })
        )
      )

      it.live("lists newest first (ties by id), at most limit", () =>
        withStores(
          backend,
          Effect.gen(function* () {
            yield* recordAll([
              after("a", { at: 1 }),
              after("b", { at: 3 }),
              after("c", { at: 3 }),
              after("d", { at: 2 })
            ])
            const store = yield* audit
            assert.deepStrictEqual(
              (yield* store.list({ limit: 10 })).map((e) => e.id),
              ["c", "b", "d", "a"]
            )
            assert.deepStrictEqual(
              (yield* store.list({ limit: 2 })).map((e) => e.id),
              ["c", "b"]
            )
          })
        )
      )

      it.live("filters by since (inclusive), until (exclusive), path and observer", () =>
        withStores(
          backend,
          Effect.gen(function* () {
            yield* recordAll(fixture)
            const store = yield* audit
            const ids = (query: AuditStore.ListQuery) =>
              Effect.map(store.list(query), (entries) => entries.map((e) => e.id))
            assert.deepStrictEqual(yield* ids({ since: 2_001, until: 2_003, limit: 10 }), ["gl2", "gl1"])
            assert.deepStrictEqual(yield* ids({ since: 5_000, limit: 10 }), ["late"])
            assert.deepStrictEqual(yield* ids({ until: 999, limit: 10 }), ["early"])
            assert.deepStrictEqual(yield* ids({ path: "git.log", limit: 2 }), ["gl3", "gl2"])
            assert.deepStrictEqual(yield* ids({ observerId: "bob", since: 1_017, limit: 10 }), ["fr18/a", "fr18/b"])
            assert.deepStrictEqual(yield* ids({ observerId: "bob", path: "git.log", limit: 10 }), [])
          })
        )
      )
    })

    describe("analytics", () => {
      it.live(
        "counts calls, refusals, success rate, average and nearest-rank p50 and p95 per tool and per observer",
        () =>
          withStores(
            backend,
            Effect.gen(function* () {
              yield* recordAll(fixture)
              assert.deepStrictEqual(yield* (yield* audit).analytics({ since: 500, until: 5_000 }), expected)
            })
          )
      )

      it.live("leaves the durations out of a group that recorded none", () =>
        withStores(
          backend,
          Effect.gen(function* () {
            yield* recordAll([after("x", { path: "bash", status: "failure" })])
            const { byTool } = yield* (yield* audit).analytics({})
            assert.deepStrictEqual(byTool, [
              { key: "bash", calls: 1, successes: 0, failures: 1, refusals: 0, successRate: 0 }
            ])
          })
        )
      )

      it.live("is empty for an empty window", () =>
        withStores(
          backend,
          Effect.gen(function* () {
            yield* recordAll(fixture)
            assert.deepStrictEqual(yield* (yield* audit).analytics({ since: 3_000, until: 4_000 }), {
              byTool: [],
              byObserver: [],
              refusals: [],
              byObserverTool: [],
              failures: [],
              totals: { calls: 0, successes: 0, failures: 0, refusals: 0 }
            })
          })
        )
      )

      it.live("gives one observer's own figures: a caller asking for its stats sees no one else's", () =>
        withStores(
          backend,
          Effect.gen(function* () {
            yield* recordAll(fixture)
            const mine = yield* (yield* audit).analytics({ since: 500, until: 5_000, observerId: "bob" })
            assert.deepStrictEqual(
              mine.byObserver.map((s) => s.key),
              ["bob"]
            )
            assert.deepStrictEqual(mine.byObserverTool, [expected.byObserverTool[2]!])
            assert.deepStrictEqual(mine.failures, [
              { reason: "FileNotFound", kind: "not_found", count: 1, lastAt: 1_018 },
              { reason: "Forbidden", kind: "denied", count: 1, lastAt: 1_016 }
            ])
            assert.deepStrictEqual(mine.totals, { calls: 10, successes: 8, failures: 2, refusals: 1 })
          })
        )
      )
    })
  })
}

describe("AuditStore analytics across backends", () => {
  const running = backends.filter((b) => b.skip === undefined).map((b) => b.backend)
  const windows: ReadonlyArray<AuditStore.TimeWindow> = [
    {},
    { since: 2_500 },
    { until: 7_000 },
    { since: 1_234, until: 8_765 }
  ]

  it.live(`every backend returns the same numbers on the same data (${running.map((b) => b.name).join(", ")})`, () =>
    Effect.gen(function* () {
      const entries = generated()
      const results = yield* Effect.forEach(running, (backend) =>
        withStores(
          backend,
          Effect.gen(function* () {
            yield* recordAll(entries)
            const store = yield* audit
            return yield* Effect.forEach(windows, store.analytics)
          })
        )
      )
      const [reference, ...others] = results
      assert.isDefined(reference)
      // The data is rich enough to mean something: several groups, p95 not the maximum.
      const first = reference?.[0]?.byTool[0]
      assert.isAtLeast(reference?.[0]?.byTool.length ?? 0, 5)
      assert.isAtLeast(first?.calls ?? 0, 50)
      assert.isAtLeast(first?.refusals ?? 0, 3)
      assert.isAtLeast(reference?.[0]?.refusals.length ?? 0, 4)
      assert.isAtLeast(reference?.[0]?.totals.refusals ?? 0, 20)
      for (const other of others) assert.deepStrictEqual(other, reference)
    })
  )

  it("p95 is the nearest rank, ceil(0.95 · n)", () => {
    assert.deepStrictEqual([1, 2, 19, 20, 21, 100, 101].map(AuditStore.p95Rank), [1, 2, 19, 19, 20, 95, 96])
  })

  it("p50 is the nearest rank, ceil(0.5 · n)", () => {
    assert.deepStrictEqual([1, 2, 3, 4, 13, 100, 101].map(AuditStore.p50Rank), [1, 1, 2, 2, 7, 50, 51])
  })
})
