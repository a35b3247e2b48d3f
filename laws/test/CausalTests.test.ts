/**
 * The causal rule set on a small file writer over a real temporary directory:
 * the careful writer passes every law, and each careless variant is caught by
 * the law about the check it skips.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, assert, describe, it } from "@effect/vitest"
import { ReadProof } from "@ugent/core"
import { CausalTests, Laws, Report, RuleSet } from "@ugent/laws"
import { Effect, Option } from "effect"

const root = mkdtempSync(join(tmpdir(), "ugent-laws-causal-"))
afterAll(() => rmSync(root, { recursive: true, force: true }))

interface Careless {
  /** Accepts a write with no proof. */
  readonly noProof?: boolean
  /** Trusts the proof object's fields instead of the payload its token signs. */
  readonly trustFields?: boolean
  /** Does not compare the proof's path with the target. */
  readonly anyPath?: boolean
  /** Does not compare the file's hash with the proof's. */
  readonly noHash?: boolean
}

const writer =
  (careless: Careless = {}) =>
  ({
    path,
    proof,
    content
  }: {
    readonly path: string
    readonly proof: ReadProof.ReadProof | undefined
    readonly content: string
  }) =>
    Effect.gen(function* () {
      if (proof === undefined) {
        if (!careless.noProof) return yield* new ReadProof.ProofRejected({ path, reason: "never-read" })
      } else {
        // The careless check asks only whether the token verifies; the careful one whether the proof is its token.
        const genuine = careless.trustFields
          ? Option.isSome(yield* ReadProof.fromToken(proof.token))
          : yield* ReadProof.isReadProof(proof)
        if (!genuine) return yield* new ReadProof.ProofRejected({ path, reason: "invalid" })
        // The payload the server signed, not the fields of the object that carries the token.
        const signed = careless.trustFields
          ? proof
          : Option.getOrElse(yield* ReadProof.fromToken(proof.token), () => proof)
        if (!careless.anyPath && signed.path !== path) {
          return yield* new ReadProof.ProofRejected({ path, reason: "other-file" })
        }
        const current = ReadProof.hash(readFileSync(path))
        if (!careless.noHash && ReadProof.verdict(signed, { hash: current }) !== "unchanged") {
          return yield* new ReadProof.ProofRejected({ path, reason: "changed" })
        }
      }
      writeFileSync(path, content, "utf8")
      return yield* ReadProof.issue({ path, content, coverage: { _tag: "Whole" } })
    })

const fixture = (careless?: Careless): CausalTests.CausalOptions => ({
  makeFile: ({ name, content }) =>
    Effect.acquireRelease(
      Effect.sync(() => {
        const path = join(root, name)
        writeFileSync(path, content, "utf8")
        return path
      }),
      (path) => Effect.sync(() => rmSync(path, { force: true }))
    ),
  read: (path) =>
    Effect.suspend(() => ReadProof.issue({ path, content: readFileSync(path), coverage: { _tag: "Whole" } })),
  write: writer(careless),
  proofOf: (result) => result as ReadProof.ReadProof
})

Laws.causal("a careful writer", { ...fixture(), runs: 50 })

const check = (careless: Careless) =>
  Effect.map(RuleSet.check("careless", CausalTests.causal(fixture(careless)), { seed: 5, runs: 60 }), (reports) =>
    Object.fromEntries(reports.map((r) => [r.law, r._tag]))
  )

describe("the causal rule set catches careless writers", () => {
  it.effect("one that writes without a proof", () =>
    Effect.gen(function* () {
      const verdicts = yield* check({ noProof: true })
      assert.strictEqual(verdicts["a missing proof fails"], "Falsified")
      assert.strictEqual(verdicts["a fresh proof succeeds"], "Passed")
    })
  )

  it.effect("one that does not compare hashes (stale and spent proofs)", () =>
    Effect.gen(function* () {
      const verdicts = yield* check({ noHash: true })
      assert.strictEqual(verdicts["a stale proof fails"], "Falsified")
      assert.strictEqual(verdicts["a spent proof fails"], "Falsified")
    })
  )

  it.effect("one that does not compare paths", () =>
    Effect.gen(function* () {
      const verdicts = yield* check({ anyPath: true })
      assert.strictEqual(verdicts["a proof of another file fails"], "Falsified")
    })
  )

  it.effect("one that trusts the fields of a proof object rather than its signed token", () =>
    Effect.gen(function* () {
      const reports = yield* RuleSet.check("trusting", CausalTests.causal(fixture({ trustFields: true })), {
        seed: 5,
        runs: 60
      })
      const forged = reports.find((r) => r.law === "a forged proof fails")!
      assert.strictEqual(forged._tag, "Falsified")
      assert.include(Report.format(forged), 'forgery: "transplanted"')
      assert.include(Report.format(forged), "the write succeeded")
    })
  )

  it.effect("each forgery alone is refused by the careful writer", () =>
    Effect.gen(function* () {
      for (const forgery of ["literal", "tampered", "foreign", "transplanted"] as const) {
        const [, , , report] = yield* RuleSet.check(
          forgery,
          CausalTests.causal({ ...fixture(), forgeries: [forgery] }),
          { seed: 6, runs: 10 }
        )
        assert.deepStrictEqual([report!.law, report!._tag], ["a forged proof fails", "Passed"])
      }
    })
  )

  it.effect("a fixture step that fails is reported as a set-up problem", () =>
    Effect.gen(function* () {
      const broken = { ...fixture(), read: () => Effect.fail("disk on fire") }
      const [fresh] = yield* RuleSet.check("broken fixture", CausalTests.causal(broken), { seed: 7, runs: 5 })
      assert.strictEqual(fresh!._tag, "Falsified")
      assert.include(Report.format(fresh!), 'the set-up step "read" failed: "disk on fire"')
    })
  )

  it.effect("the restore law passes an undo that puts the old bytes back, and catches one that does not", () =>
    Effect.gen(function* () {
      const previous = new Map<string, string>()
      const keeping = (careless?: Careless): CausalTests.CausalOptions => {
        const base = fixture(careless)
        return {
          ...base,
          write: (request) =>
            Effect.suspend(() => {
              previous.set(request.path, readFileSync(request.path, "utf8"))
              return base.write(request)
            }),
          undo: (path) => Effect.sync(() => writeFileSync(path, previous.get(path)!, "utf8"))
        }
      }
      const verdict = (options: CausalTests.CausalOptions) =>
        Effect.map(RuleSet.check("undo", CausalTests.causal(options), { seed: 8, runs: 20 }), (reports) =>
          reports.find((r) => r.law === "restore after write is identity on an unchanged file")
        )
      assert.strictEqual((yield* verdict(keeping()))!._tag, "Passed")
      const forgetful = yield* verdict({ ...keeping(), undo: () => Effect.void })
      assert.strictEqual(forgetful!._tag, "Falsified")
      assert.include(Report.format(forgetful!), "instead of")
    })
  )

  it.effect(
    "the approval law passes approvals bound to the bytes shown, and catches one that runs on other bytes",
    () =>
      Effect.gen(function* () {
        // An approval host in miniature: a request keeps the bytes it was shown; `careful` compares them at run time.
        const shown = new Map<string, string>()
        const approving = (careful: boolean): CausalTests.CausalOptions => {
          const base = fixture()
          let n = 0
          return {
            ...base,
            approve: {
              request: (request) =>
                Effect.sync(() => {
                  const id = `ap-${++n}`
                  shown.set(id, readFileSync(request.path, "utf8"))
                  return id
                }),
              run: (id, request) =>
                Effect.suspend(() =>
                  careful && readFileSync(request.path, "utf8") !== shown.get(id)
                    ? Effect.fail({ _tag: "ApprovalStale", id })
                    : base.write(request)
                ),
              stale: (error) => (error as { readonly _tag?: unknown })._tag === "ApprovalStale"
            }
          }
        }
        const verdict = (options: CausalTests.CausalOptions) =>
          Effect.map(RuleSet.check("approve", CausalTests.causal(options), { seed: 9, runs: 20 }), (reports) =>
            reports.find((r) => r.law === "an approval never runs other bytes than approved")
          )
        assert.strictEqual((yield* verdict(approving(true)))!._tag, "Passed")
        const blind = yield* verdict(approving(false))
        assert.strictEqual(blind!._tag, "Falsified")
        assert.include(Report.format(blind!), "the approval ran on other bytes")
      })
  )
})
