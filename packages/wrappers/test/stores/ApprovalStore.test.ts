/**
 * The approval store on every backend: a request is answered once, before it
 * expires; an approved one is used once; two answers or two uses racing on
 * one request (two servers on one database) have exactly one winner; a
 * durable store keeps requests across a reopen (a restart).
 */
import { assert, describe, it } from "@effect/vitest"
import { ApprovalStore } from "@ugent/wrappers"
import { Effect } from "effect"
import { backends, withStores } from "./backends.ts"

const request = (id: string, over: Partial<ApprovalStore.Approval> = {}): ApprovalStore.Approval => ({
  id,
  key: "call-key",
  tool: "world.tools.file.edit",
  observerId: "agent",
  input: { path: "a.txt", oldText: "a", newText: "b" },
  arguments: 'path: "a.txt", oldText: "a", newText: "b"',
  text: "agent asks to run world.tools.file.edit",
  preview: "@@ -1 +1 @@\n-a\n+b",
  files: [{ path: "a.txt", hash: "ab".repeat(32) }],
  status: "pending",
  createdAt: 1_000,
  expiresAt: 61_000,
  ...over
})

const store = ApprovalStore.ApprovalStore

for (const { backend, skip } of backends) {
  describe.skipIf(skip !== undefined)(`ApprovalStore (${backend.name})${skip ? ` ${skip}` : ""}`, () => {
    it.live("keeps a request as it was made, and finds it by its call's key", () =>
      withStores(
        backend,
        Effect.gen(function* () {
          const s = yield* store
          yield* s.create(request("ap-1"))
          assert.deepStrictEqual(yield* s.get("ap-1"), request("ap-1"))
          assert.strictEqual((yield* s.find("call-key"))?.id, "ap-1")
          assert.strictEqual(yield* s.find("other"), undefined)
          assert.deepStrictEqual(
            (yield* s.pending(2_000)).map((a) => a.id),
            ["ap-1"]
          )
          // Past its expiry it is no longer listed.
          assert.deepStrictEqual(yield* s.pending(61_000), [])
        })
      )
    )

    it.live("bad input: an unknown, expired or already answered id is a typed refusal", () =>
      withStores(
        backend,
        Effect.gen(function* () {
          const s = yield* store
          yield* s.create(request("ap-1"))
          yield* s.create(request("ap-2", { key: "k2" }))
          const unknown = yield* Effect.flip(s.answer("ap-9", "approved", { channel: "cli", now: 2_000 }))
          assert.strictEqual(unknown._tag, "UnknownApproval")
          const expired = yield* Effect.flip(s.answer("ap-2", "approved", { channel: "cli", now: 61_000 }))
          assert.strictEqual(expired._tag, "ApprovalExpired")
          assert.match(expired.message, /expired/)
          const approved = yield* s.answer("ap-1", "approved", { channel: "http-pending", now: 2_000 })
          assert.deepStrictEqual(
            [approved.status, approved.answeredBy, approved.answeredAt],
            ["approved", "http-pending", 2_000]
          )
          const again = yield* Effect.flip(s.answer("ap-1", "denied", { channel: "cli", now: 3_000 }))
          assert.strictEqual(again._tag, "AlreadyAnswered")
          assert.match(again.message, /already answered through http-pending: it is approved/)
          assert.strictEqual((yield* s.get("ap-1"))?.status, "approved")
        })
      )
    )

    it.live("an approved request is used once, and not after it expired", () =>
      withStores(
        backend,
        Effect.gen(function* () {
          const s = yield* store
          yield* s.create(request("ap-1"))
          yield* s.create(request("ap-2", { key: "k2" }))
          assert.strictEqual(yield* s.use("ap-1", 2_000), false)
          yield* s.answer("ap-1", "approved", { channel: "cli", now: 2_000 })
          yield* s.answer("ap-2", "approved", { channel: "cli", now: 2_000 })
          assert.strictEqual(yield* s.use("ap-2", 61_000), false)
          assert.strictEqual(yield* s.use("ap-1", 3_000), true)
          assert.strictEqual(yield* s.use("ap-1", 3_000), false)
          // A used request is no longer the call's.
          assert.strictEqual((yield* s.find("call-key"))?.id, undefined)
        })
      )
    )

    it.live("two answers, and two uses, racing on one request: exactly one wins", () =>
      withStores(
        backend,
        Effect.gen(function* () {
          const s = yield* store
          yield* s.create(request("ap-1"))
          const answers = yield* Effect.all(
            Array.from({ length: 8 }, (_, i) =>
              Effect.result(s.answer("ap-1", i % 2 === 0 ? "approved" : "denied", { channel: `c${i}`, now: 2_000 }))
            ),
            { concurrency: "unbounded" }
          )
          assert.strictEqual(answers.filter((r) => r._tag === "Success").length, 1)
          yield* s.create(request("ap-2", { key: "k2" }))
          yield* s.answer("ap-2", "approved", { channel: "cli", now: 2_000 })
          const uses = yield* Effect.all(
            Array.from({ length: 8 }, () => s.use("ap-2", 3_000)),
            { concurrency: "unbounded" }
          )
          assert.strictEqual(uses.filter(Boolean).length, 1)
        })
      )
    )
  })
}

describe("ApprovalStore (sqlite) across a reopen", () => {
  it.live("a pending request survives the store being closed and opened again, and is answered then", () =>
    Effect.scoped(
      Effect.gen(function* () {
        const { sqlite } = yield* Effect.promise(() => import("./backends.ts"))
        const db = yield* sqlite.database
        yield* Effect.provide(
          ApprovalStore.ApprovalStore.use((s) => s.create(request("ap-1"))),
          db.open()
        )
        const answered = yield* Effect.provide(
          ApprovalStore.ApprovalStore.use((s) => s.answer("ap-1", "approved", { channel: "cli", now: 2_000 })),
          db.open()
        )
        assert.strictEqual(answered.status, "approved")
      })
    )
  )
})
