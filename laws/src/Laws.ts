/**
 * The one-line entry points of the kit, for vitest: each call registers a
 * `describe` block with one named test per law (inherited laws included), in
 * the spirit of discipline's `checkAll`. A falsified law fails its test with
 * the sides that differed, the shrunk input, the seed and a replay token.
 *
 * Outside vitest, use the same rule sets programmatically with
 * `RuleSet.check`, which returns a `Report` per law.
 *
 * @since 0.1.0
 */
import { Effect, type Layer } from "effect"
import * as ArrowTests from "./ArrowTests.ts"
import * as CategoryTests from "./CategoryTests.ts"
import * as CausalTests from "./CausalTests.ts"
import * as CombinatorTests from "./CombinatorTests.ts"
import type * as Observation from "./Observation.ts"
import * as Report from "./Report.ts"
import * as RuleSet from "./RuleSet.ts"
import * as WrapperTests from "./WrapperTests.ts"

/**
 * Vitest, when it is installed: an optional peer, needed only to register
 * laws as tests, so the rest of the kit (`RuleSet.check`) loads without it.
 */
const vitest: typeof import("vitest") | undefined = await import("vitest").catch(() => undefined)

const runner = (): typeof import("vitest") => {
  if (vitest === undefined) {
    throw new Error(
      "Laws registers the laws as vitest tests, and vitest is not installed: npm install -D vitest @effect/vitest, or check them with RuleSet.check (no test runner needed)."
    )
  }
  return vitest
}

/**
 * How laws are checked (seed, replay, runs, equality, services) plus the
 * vitest timeout of each law's test.
 *
 * @category models
 * @since 0.1.0
 */
export interface CheckOptions extends RuleSet.CheckOptions {
  /** The vitest timeout of each law's test, in milliseconds (the project's default otherwise). */
  readonly testTimeout?: number | undefined
}

/**
 * `provide` is required exactly when the services `R` include something the
 * runner does not provide itself (the trust capabilities, the effect log, a
 * scope).
 *
 * @category models
 * @since 0.1.0
 */
export type ProvideFor<R> = [Exclude<R, Observation.Provided>] extends [never]
  ? { readonly provide?: Layer.Layer<never, unknown, never> | undefined }
  : { readonly provide: Layer.Layer<Exclude<R, Observation.Provided>, unknown, never> }

/**
 * Registers a rule set with vitest: a `describe` named after the instance,
 * with one test per law. Every other entry point is built on it.
 *
 * Outside vitest, the same check is `RuleSet.check(name, ruleSet, options)`:
 *
 * **Example** (The programmatic twin of checkAll)
 * ```ts
 * import { Tool } from "@ugent/core"
 * import { CategoryTests, Report, RuleSet } from "@ugent/laws"
 * import { Effect, Schema } from "effect"
 * const trim = Tool.fromFunction({ name: "trim", input: Schema.String, output: Schema.String, f: (s: string) => s.trim() })
 * const reports = await Effect.runPromise(RuleSet.check("trim", CategoryTests.category({ tool: trim }), { seed: 5, runs: 25 }))
 * console.log(reports.length, reports.every(Report.isPassed))
 * // => 6 true
 * ```
 *
 * @category registration
 * @since 0.1.0
 */
export const checkAll = (name: string, ruleSet: RuleSet.RuleSet, options?: CheckOptions): void => {
  // Resolved once at registration, so every law of the block runs with the seed a failure prints.
  const seed = RuleSet.resolveSeed(options?.seed)
  const { describe, it } = runner()
  describe(`${name} (${ruleSet.name} laws)`, () => {
    for (const { ruleSet: rs, law } of RuleSet.laws(ruleSet)) {
      it(
        Report.lawName({ ruleSet: rs, law: law.name }),
        async () => {
          const report = await Effect.runPromise(RuleSet.checkLaw(name, rs, law, { ...options, seed }))
          if (!Report.isPassed(report)) throw new LawFailed(Report.format(report))
        },
        options?.testTimeout
      )
    }
  })
}

/**
 * The error a law's vitest test fails with; its message is the report.
 *
 * **Example** (The error of a failed law test)
 * ```ts
 * import { Laws } from "@ugent/laws"
 * const e = new Laws.LawFailed("inc / category: associativity: falsified after 3 run(s)")
 * console.log(e.name, e instanceof Error)
 * // => LawFailed true
 * ```
 *
 * @category errors
 * @since 0.1.0
 */
export class LawFailed extends Error {
  override readonly name = "LawFailed"
}

/**
 * The options of the algebraic entry points: what to check (the tool, its
 * inputs, the instance) and how (seed, runs, equality, services).
 * `provide` is required when the tool needs services of its own.
 *
 * @category models
 * @since 0.1.0
 */
export type AlgebraOptions<A, B, E, R> = CategoryTests.Options<A, B, E, R> &
  Omit<CheckOptions, "provide"> &
  ProvideFor<R>

/**
 * Checks the category laws of a tool (or, without a tool, of the instance
 * over generated tools of `input`): identity returns its input, left and
 * right identity, composition runs `f` then `g`, associativity, pipeline is a
 * fold. Registers `describe(name)` with one test per law.
 *
 * Programmatically: `RuleSet.check(name, CategoryTests.category(options), options)`.
 *
 * **Example** (The programmatic twin)
 * ```ts
 * import { Tool } from "@ugent/core"
 * import { CategoryTests, Report, RuleSet } from "@ugent/laws"
 * import { Effect, Schema } from "effect"
 * const upper = Tool.fromFunction({ name: "upper", input: Schema.String, output: Schema.String, f: (s: string) => s.toUpperCase() })
 * const reports = await Effect.runPromise(RuleSet.check("upper", CategoryTests.category({ tool: upper }), { seed: 8, runs: 25 }))
 * console.log(reports.every(Report.isPassed))
 * // => true
 * ```
 *
 * @category registration
 * @since 0.1.0
 */
export const category = <A, B = A, E = never, R = never>(name: string, options: AlgebraOptions<A, B, E, R>): void =>
  checkAll(name, CategoryTests.category(options), options)

/**
 * Checks the arrow laws (and, inherited, the category laws) of a tool or of
 * the instance. Registers `describe(name)` with one test per law.
 *
 * Programmatically: `RuleSet.check(name, ArrowTests.arrow(options), options)`.
 *
 * **Example** (The programmatic twin, over generated tools)
 * ```ts
 * import { ArrowTests, Report, RuleSet } from "@ugent/laws"
 * import { Effect, Schema } from "effect"
 * const reports = await Effect.runPromise(RuleSet.check("Tool", ArrowTests.arrow({ input: Schema.String }), { seed: 8, runs: 25 }))
 * console.log(reports.filter((r) => r.ruleSet === "arrow").length, reports.every(Report.isPassed))
 * // => 12 true
 * ```
 *
 * @category registration
 * @since 0.1.0
 */
export const arrow = <A, B = A, E = never, R = never>(name: string, options: AlgebraOptions<A, B, E, R>): void =>
  checkAll(name, ArrowTests.arrow(options), options)

/**
 * Checks the combinator laws (`all`, `orElse`, `choice`) and, inherited, the
 * arrow and category laws. Registers `describe(name)` with one test per law.
 *
 * Programmatically: `RuleSet.check(name, CombinatorTests.combinators(options), options)`.
 *
 * **Example** (The programmatic twin)
 * ```ts
 * import { CombinatorTests, Report, RuleSet } from "@ugent/laws"
 * import { Effect, Schema } from "effect"
 * const reports = await Effect.runPromise(RuleSet.check("Tool", CombinatorTests.combinators({ input: Schema.Int }), { seed: 3, runs: 15 }))
 * console.log(reports.length, reports.every(Report.isPassed))
 * // => 28 true
 * ```
 *
 * @category registration
 * @since 0.1.0
 */
export const combinators = <A, B = A, E = never, R = never>(name: string, options: AlgebraOptions<A, B, E, R>): void =>
  checkAll(name, CombinatorTests.combinators(options), options)

/**
 * Checks a wrapper: transparency over generated tools (pure, effectful,
 * failing) and inputs, and, when asked, idempotence, allow-all is identity
 * and deny-all fails. Registers `describe(name)` with one test per law.
 *
 * Programmatically: `RuleSet.check(name, WrapperTests.wrapper(options), options)`.
 *
 * **Example** (The programmatic twin, for a wrapper that adds a timeout)
 * ```ts
 * import { Tool } from "@ugent/core"
 * import { Report, RuleSet, WrapperTests } from "@ugent/laws"
 * import { Effect } from "effect"
 * const withTimeout = (t: Tool.Any) => Tool.wrap(t, (run) => (a) => Effect.timeout(run(a), "1 hour"))
 * const reports = await Effect.runPromise(RuleSet.check("timeout", WrapperTests.wrapper({ wrap: withTimeout, failures: true }), { seed: 9, runs: 40 }))
 * console.log(reports.map((r) => r._tag))
 * // => [ 'Passed' ]
 * ```
 *
 * @category registration
 * @since 0.1.0
 */
export const wrapper = <A>(name: string, options: WrapperTests.WrapperOptions<A> & CheckOptions): void =>
  checkAll(name, WrapperTests.wrapper(options), options)

/**
 * Checks read-before-write for file tools: a write or edit with a fresh proof
 * succeeds; with a missing, stale, forged, foreign or spent proof, or a proof
 * of another file, it fails and the file keeps its content. Registers
 * `describe(name)` with one test per law.
 *
 * Programmatically: `RuleSet.check(name, CausalTests.causal(options), options)`.
 *
 * **Example** (The programmatic twin, for a toy in-memory file tool)
 * ```ts
 * import { ReadProof } from "@ugent/core"
 * import { CausalTests, Report, RuleSet } from "@ugent/laws"
 * import { Effect } from "effect"
 * const files = new Map<string, string>()
 * const reports = await Effect.runPromise(RuleSet.check("memfs", CausalTests.causal({
 *   makeFile: ({ name, content }) => Effect.sync(() => { files.set(name, content); return name }),
 *   read: (path) => ReadProof.issue({ path, content: files.get(path)!, coverage: { _tag: "Whole" } }),
 *   write: ({ path, proof, content }) => Effect.gen(function* () {
 *     if (proof === undefined) return yield* new ReadProof.ProofRejected({ path, reason: "never-read" })
 *     if (!(yield* ReadProof.isReadProof(proof))) return yield* new ReadProof.ProofRejected({ path, reason: "invalid" })
 *     const token = (yield* ReadProof.fromToken(proof.token)).pipe((o) => o._tag === "Some" ? o.value : proof)
 *     if (token.path !== path) return yield* new ReadProof.ProofRejected({ path, reason: "other-file" })
 *     if (ReadProof.verdict(token, { hash: ReadProof.hash(files.get(path)!) }) !== "unchanged") return yield* new ReadProof.ProofRejected({ path, reason: "changed" })
 *     files.set(path, content)
 *   }),
 *   modify: (path, content) => Effect.sync(() => { files.set(path, content) }),
 *   contents: (path) => Effect.sync(() => files.get(path)!)
 * }), { seed: 3, runs: 10 }))
 * console.log(reports.every(Report.isPassed))
 * // => true
 * ```
 *
 * @category registration
 * @since 0.1.0
 */
export const causal = <const O extends CausalTests.CausalOptions<unknown>>(
  name: string,
  options: O & Omit<CheckOptions, "provide"> & ProvideFor<CausalTests.Services<O>>
): void => checkAll(name, CausalTests.causal(options), options)
