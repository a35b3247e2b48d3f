/**
 * The read-before-write rule set: the laws of `CausalLaws` over generated
 * file contents (non-empty, distinct, with newlines and non-ASCII text) and
 * every kind of forgery. `Laws.causal` registers it with vitest; the file
 * tools' authors describe their tools once, as a `CausalOptions`.
 *
 * @since 0.1.0
 */
import { ReadProof } from "@ugent/core"
import { Arbitrary, Effect, Schema } from "effect"
import * as CausalLaws from "./CausalLaws.ts"
import * as Law from "./Law.ts"
import * as RuleSet from "./RuleSet.ts"

/**
 * What the causal laws need from the file tools under test. `modify` and
 * `contents` default to `node:fs` on the path `makeFile` returned (absolute,
 * or relative to the current directory).
 *
 * @category models
 * @since 0.1.0
 */
export interface CausalOptions<R = never> {
  readonly makeFile: CausalLaws.Fixture<R>["makeFile"]
  readonly read: CausalLaws.Fixture<R>["read"]
  readonly write: CausalLaws.Fixture<R>["write"]
  readonly modify?: CausalLaws.Fixture<R>["modify"] | undefined
  readonly contents?: CausalLaws.Fixture<R>["contents"] | undefined
  /** Whether an error is the refusal a law expects; {@link CausalLaws.proofRejected} by default. */
  readonly rejected?: CausalLaws.Fixture<R>["rejected"] | undefined
  /** The fresh proof a successful write returned: adds the law that write -> write chains need no re-read. */
  readonly proofOf?: CausalLaws.Fixture<R>["proofOf"] | undefined
  /** Takes back the newest write of a file: adds the law that restore after write is identity on an unchanged file. */
  readonly undo?: CausalLaws.Fixture<R>["undo"] | undefined
  /** The host's approvals bound to bytes: adds the law that an approval never runs other bytes than approved. */
  readonly approve?: CausalLaws.Fixture<R>["approve"] | undefined
  /** The file contents to generate; short multi-line text by default. */
  readonly content?: Arbitrary.Arbitrary<string> | undefined
  /** The forgeries to try; all by default. */
  readonly forgeries?: ReadonlyArray<CausalLaws.Forgery> | undefined
}

type RequirementsOf<F> = F extends (...args: never) => Effect.Effect<infer _A, infer _E, infer R> ? R : never

/**
 * The services the functions of some causal options need, together: what
 * `provide` must supply (besides the trust capabilities and the scope, which
 * the runner provides).
 *
 * @category models
 * @since 0.1.0
 */
export type Services<O> =
  O extends CausalOptions<unknown>
    ?
        | RequirementsOf<O["makeFile"]>
        | RequirementsOf<O["read"]>
        | RequirementsOf<O["write"]>
        | RequirementsOf<O["modify"]>
        | RequirementsOf<O["contents"]>
        | RequirementsOf<O["undo"]>
        | RequirementsOf<NonNullable<O["approve"]>["request"]>
        | RequirementsOf<NonNullable<O["approve"]>["run"]>
    : never

const words = Schema.Literals(["alpha", "beta", "gamma", "δέλτα", "x", "  ", "\n", "\t", "42", "é"])

/**
 * The default contents: one to eight words of short text, with newlines,
 * tabs and non-ASCII letters.
 *
 * **Example** (Generated contents are never empty)
 * ```ts
 * import { CausalTests } from "@ugent/laws"
 * import { Arbitrary, Effect } from "effect"
 * const samples = Effect.runSync(Arbitrary.sampleEffect(CausalTests.defaultContent, { count: 20, seed: 1 }))
 * console.log(samples.every((s) => s.length > 0))
 * // => true
 * ```
 *
 * @category generators
 * @since 0.1.0
 */
export const defaultContent: Arbitrary.Arbitrary<string> = Arbitrary.map(
  Arbitrary.array(Arbitrary.schema(words), { minLength: 1, maxLength: 8 }),
  (ws) => ws.join(" ")
)

// File names unique across every case of the process, so fixtures that share one directory never collide.
let counter = 0

/** Three pairwise-distinct contents and two fresh file names. */
const contentsOf = (content: Arbitrary.Arbitrary<string>): Arbitrary.Arbitrary<CausalLaws.Contents> =>
  Arbitrary.map(Arbitrary.all({ before: content, after: content, changed: content }), ({ before, after, changed }) => {
    const n = ++counter
    const after2 = after === before ? `${after}\nafter` : after
    const changed2 = changed === before || changed === after2 ? `${changed}\nchanged ${before.length}` : changed
    return {
      names: [`causal-${n}-a.txt`, `causal-${n}-b.txt`] as const,
      before,
      after: after2,
      changed: changed2 === before || changed2 === after2 ? `${changed2}!` : changed2
    }
  })

const nodeModify = (path: string, content: string): Effect.Effect<void, unknown> =>
  Effect.tryPromise(async () => {
    const fs = await import("node:fs/promises")
    await fs.writeFile(path, content, "utf8")
  })

const nodeContents = (path: string): Effect.Effect<string, unknown> =>
  Effect.tryPromise(async () => {
    const fs = await import("node:fs/promises")
    return fs.readFile(path, "utf8")
  })

const foreignKey = new Uint8Array(32).fill(7)

const issueForeign = (genuine: ReadProof.ReadProof, content: string): Effect.Effect<ReadProof.ReadProof> =>
  ReadProof.issue({ path: genuine.path, content, coverage: genuine.coverage }).pipe(
    Effect.provide(ReadProof.layerKey(foreignKey))
  )

const forgeries: ReadonlyArray<CausalLaws.Forgery> = ["literal", "tampered", "foreign", "transplanted"]

/**
 * The causal rule set.
 *
 * **Example** (A writer that checks nothing)
 * ```ts
 * import { ReadProof } from "@ugent/core"
 * import { CausalTests, Report, RuleSet } from "@ugent/laws"
 * import { Effect } from "effect"
 * // A writer that checks nothing: every refusal law is falsified.
 * const files = new Map<string, string>()
 * const careless = CausalTests.causal({
 *   makeFile: ({ name, content }) => Effect.sync(() => (files.set(name, content), name)),
 *   read: (path) => ReadProof.issue({ path, content: files.get(path)!, coverage: { _tag: "Whole" } }),
 *   write: ({ path, content }) => Effect.sync(() => void files.set(path, content)),
 *   modify: (path, content) => Effect.sync(() => void files.set(path, content)),
 *   contents: (path) => Effect.sync(() => files.get(path)!)
 * })
 * const reports = await Effect.runPromise(RuleSet.check("careless", careless, { seed: 1, runs: 10 }))
 * console.log(reports.filter((r) => !Report.isPassed(r)).map((r) => r.law))
 * // => [ 'a missing proof fails', 'a stale proof fails', 'a forged proof fails', 'a proof of another file fails', 'a spent proof fails' ]
 * ```
 *
 * @category rule sets
 * @since 0.1.0
 */
export const causal = (options: CausalOptions<unknown>): RuleSet.RuleSet => {
  // The services are provided by the check (`provide`); the laws see the fixture erased.
  const fixture: CausalLaws.Fixture<unknown> = {
    makeFile: options.makeFile,
    read: options.read,
    write: options.write,
    modify: options.modify ?? nodeModify,
    contents: options.contents ?? nodeContents,
    rejected: options.rejected ?? CausalLaws.proofRejected,
    proofOf: options.proofOf,
    undo: options.undo,
    approve: options.approve
  }
  const args = contentsOf(options.content ?? defaultContent)
  const chosen = options.forgeries ?? forgeries
  const forgery = Arbitrary.schema(Schema.Literals(chosen as [CausalLaws.Forgery, ...Array<CausalLaws.Forgery>]))
  const laws: Array<Law.Any> = [
    Law.make("a fresh proof succeeds", args, (c) => CausalLaws.freshProof(fixture, c)),
    Law.make("a missing proof fails", args, (c) => CausalLaws.missingProof(fixture, c)),
    Law.make("a stale proof fails", args, (c) => CausalLaws.staleProof(fixture, c)),
    Law.make("a forged proof fails", Arbitrary.all({ c: args, forgery }), ({ c, forgery }) =>
      CausalLaws.forgedProof(fixture, c, forgery, issueForeign)
    ),
    Law.make("a proof of another file fails", args, (c) => CausalLaws.otherFileProof(fixture, c)),
    Law.make("a spent proof fails", args, (c) => CausalLaws.spentProof(fixture, c))
  ]
  const proofOf = options.proofOf
  if (proofOf !== undefined) {
    laws.push(Law.make("a write returns a fresh proof", args, (c) => CausalLaws.chainedProof(fixture, c, proofOf)))
  }
  const undo = options.undo
  if (undo !== undefined) {
    laws.push(
      Law.make("restore after write is identity on an unchanged file", args, (c) =>
        CausalLaws.restoreAfterWrite(fixture, c, undo)
      )
    )
  }
  const approve = options.approve
  if (approve !== undefined) {
    laws.push(
      Law.make("an approval never runs other bytes than approved", args, (c) =>
        CausalLaws.approvedBytes(fixture, c, approve)
      )
    )
  }
  return RuleSet.make("causal", laws)
}
