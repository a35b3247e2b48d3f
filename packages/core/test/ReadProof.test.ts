import { assert, describe, it } from "@effect/vitest"
import { ReadProof } from "@ugent/core"
import { Effect, Exit, Schema } from "effect"
import { TestClock } from "effect/testing"

const issue = (content: string, coverage: ReadProof.Coverage = { _tag: "Whole" }) =>
  ReadProof.issue({ path: "/ws/a.txt", content, coverage })
const decode = Schema.decodeUnknownEffect(ReadProof.ReadProofFromToken)
const encode = Schema.encodeEffect(ReadProof.ReadProofFromToken)

describe("ReadProof", () => {
  describe("issue", () => {
    it.effect("records path, hash, size, coverage and the clock's time", () =>
      Effect.gen(function* () {
        yield* TestClock.setTime(1_700_000_000_000)
        const proof = yield* issue("héllo\n")
        assert.strictEqual(proof.path, "/ws/a.txt")
        assert.strictEqual(proof.hash, ReadProof.hash("héllo\n"))
        assert.strictEqual(proof.size, Buffer.byteLength("héllo\n"))
        assert.deepStrictEqual(proof.coverage, { _tag: "Whole" })
        assert.strictEqual(proof.issuedAt, 1_700_000_000_000)
        assert.isTrue(Object.isFrozen(proof))
      })
    )

    it.effect("issueHashed agrees with issue", () =>
      Effect.gen(function* () {
        const a = yield* issue("x")
        const b = yield* ReadProof.issueHashed({
          path: "/ws/a.txt",
          hash: ReadProof.hash("x"),
          size: 1,
          coverage: { _tag: "Whole" }
        })
        assert.strictEqual(a.hash, b.hash)
        assert.isTrue(yield* ReadProof.isReadProof(b))
      })
    )
  })

  describe("unforgeable", () => {
    it.effect("a copy with the same fields is not a proof", () =>
      Effect.gen(function* () {
        const proof = yield* issue("x")
        assert.isTrue(yield* ReadProof.isReadProof(proof))
        assert.isFalse(yield* ReadProof.isReadProof({ ...proof }))
        assert.isFalse(yield* ReadProof.isReadProof(JSON.parse(JSON.stringify(proof))))
      })
    )

    it.effect("a token round-trips through its schema", () =>
      Effect.gen(function* () {
        const proof = yield* issue("x", { _tag: "Lines", start: 2, end: 9 })
        const token = yield* encode(proof)
        assert.match(token, /^rp1\.[\w-]+\.[\w-]+$/)
        const back = yield* decode(token)
        assert.strictEqual(back.hash, proof.hash)
        assert.deepStrictEqual(back.coverage, { _tag: "Lines", start: 2, end: 9 })
        assert.isTrue(yield* ReadProof.isReadProof(back))
      })
    )

    it.effect("an altered payload is refused", () =>
      Effect.gen(function* () {
        const proof = yield* issue("x")
        const [v, body, mac] = proof.token.split(".") as [string, string, string]
        const payload = JSON.parse(Buffer.from(body, "base64url").toString())
        payload.h = ReadProof.hash("something else")
        const altered = `${v}.${Buffer.from(JSON.stringify(payload)).toString("base64url")}.${mac}`
        const exit = yield* Effect.exit(decode(altered))
        assert.isTrue(Exit.isFailure(exit))
        assert.match(String(Exit.isFailure(exit) && exit.cause), /Invalid read proof/)
      })
    )

    it.effect("a token signed with another server's key is refused", () =>
      Effect.gen(function* () {
        const foreign = yield* issue("x").pipe(Effect.provide(ReadProof.layerKey("k".repeat(32))))
        assert.isTrue(Exit.isFailure(yield* Effect.exit(decode(foreign.token))))
        assert.isFalse(yield* ReadProof.isReadProof(foreign))
        // The same key accepts it: processes sharing a key share proofs.
        const ok = yield* decode(foreign.token).pipe(Effect.provide(ReadProof.layerKey("k".repeat(32))))
        assert.strictEqual(ok.hash, foreign.hash)
      })
    )

    it.effect("garbage is refused", () =>
      Effect.gen(function* () {
        for (const token of ["", "rp1", "rp1..", "rp2.a.b", "rp1.e30.AAAA", 42, null]) {
          assert.isTrue(Exit.isFailure(yield* Effect.exit(decode(token))), String(token))
        }
      })
    )

    it("a key shorter than 32 bytes is refused", () => {
      assert.throws(() => ReadProof.layerKey("short"), /at least 32 bytes/)
    })
  })

  describe("verification", () => {
    it.effect("verdicts: unchanged, changed, deleted, never read", () =>
      Effect.gen(function* () {
        const proof = yield* issue("v1")
        assert.strictEqual(ReadProof.verdict(proof, { hash: ReadProof.hash("v1") }), "unchanged")
        assert.strictEqual(ReadProof.verdict(proof, { hash: ReadProof.hash("v2") }), "changed")
        assert.strictEqual(ReadProof.verdict(proof, undefined), "deleted")
        assert.strictEqual(ReadProof.verdict(undefined, { hash: ReadProof.hash("v1") }), "never-read")
      })
    )

    it.effect("coverage: a whole-file proof covers every line; a range covers only its lines", () =>
      Effect.gen(function* () {
        const whole = yield* issue("x")
        const range = yield* issue("x", { _tag: "Lines", start: 10, end: 20 })
        assert.isTrue(ReadProof.covers(whole, 1, 1_000))
        assert.isTrue(ReadProof.covers(range, 10, 20))
        assert.isTrue(ReadProof.covers(range, 12, 12))
        assert.isFalse(ReadProof.covers(range, 9, 12))
        assert.isFalse(ReadProof.covers(range, 19, 21))
      })
    )

    it.effect("freshness is a second fence", () =>
      Effect.gen(function* () {
        const proof = yield* issue("x")
        assert.isTrue(ReadProof.isFresh(proof, proof.issuedAt + 1_000, 5_000))
        assert.isFalse(ReadProof.isFresh(proof, proof.issuedAt + 6_000, 5_000))
      })
    )

    it("rejections explain what to do next", () => {
      const e = new ReadProof.ProofRejected({ path: "a.txt", reason: "changed" })
      assert.match(e.message, /changed since you read it\. Read it again/)
      assert.match(new ReadProof.ProofRejected({ path: "a.txt", reason: "never-read" }).message, /Read it first/)
    })
  })
})

describe("ReadProof.verify", () => {
  it.effect(
    "trusts only the signed payload: a genuine token relabelled with another file's path or hash is refused",
    () =>
      Effect.gen(function* () {
        const b = yield* ReadProof.issue({ path: "/ws/b.txt", content: "b", coverage: { _tag: "Whole" } })
        const relabel = (fields: Partial<Record<"path" | "hash" | "size" | "issuedAt", unknown>>) =>
          Object.assign(Object.create(Object.getPrototypeOf(b)), { ...b, ...fields })
        assert.isTrue(yield* ReadProof.isReadProof(b))
        for (const fields of [
          { path: "/ws/a.txt" },
          { hash: ReadProof.hash("a") },
          { size: 999 },
          { issuedAt: b.issuedAt + 1 }
        ]) {
          assert.isFalse(yield* ReadProof.isReadProof(relabel(fields)), JSON.stringify(fields))
        }
        const verified = yield* ReadProof.verify(b)
        assert.strictEqual(verified._tag === "Some" && verified.value.path, "/ws/b.txt")
      })
  )
})
