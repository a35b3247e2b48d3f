/**
 * A `RuleSet` is a named list of laws with parents, in the spirit of
 * discipline's `RuleSet`: checking `arrow` checks `category` too, because the
 * arrow rule set inherits it. {@link check} is the programmatic way to run
 * one: an Effect returning a {@link Report} per law, for use outside vitest;
 * `Laws.checkAll` registers the same checks as vitest tests.
 *
 * Every law is checked with Effect's own property engine
 * (`Arbitrary.checkEffect`): generated arguments, shrinking, a seed, and a
 * replay token that reruns one failure exactly.
 *
 * @since 0.1.0
 */
import { Arbitrary, Cause, Effect } from "effect"
import type * as Law from "./Law.ts"
import * as Observation from "./Observation.ts"
import * as Report from "./Report.ts"

/**
 * A named list of laws, with the rule sets it inherits.
 *
 * @category models
 * @since 0.1.0
 */
export interface RuleSet {
  readonly name: string
  readonly laws: ReadonlyArray<Law.Any>
  readonly parents: ReadonlyArray<RuleSet>
}

/**
 * Builds a rule set.
 *
 * **Example** (A rule set that inherits another)
 * ```ts
 * import { Law, RuleSet } from "@ugent/laws"
 * import { Arbitrary, Effect, Schema } from "effect"
 * const ints = Arbitrary.schema(Schema.Int)
 * const reflexive = Law.make("reflexivity", ints, (n) => Law.isEq("n", Effect.succeed(n), "n", Effect.succeed(n)))
 * const zero = Law.make("zero", ints, (n) => Law.isEq("n + 0", Effect.succeed(n + 0), "n", Effect.succeed(n)))
 * const eq = RuleSet.make("eq", [reflexive])
 * const monoid = RuleSet.make("monoid", [zero], [eq])
 * console.log(RuleSet.laws(monoid).map((l) => `${l.ruleSet}: ${l.law.name}`))
 * // => [ 'eq: reflexivity', 'monoid: zero' ]
 * ```
 *
 * @category constructors
 * @since 0.1.0
 */
export const make = (name: string, laws: ReadonlyArray<Law.Any>, parents: ReadonlyArray<RuleSet> = []): RuleSet => ({
  name,
  laws,
  parents
})

/**
 * Every law of a rule set, inherited ones first. A law is listed once, under
 * the first rule set that states it (a parent shared by two branches counts
 * once).
 *
 * **Example** (Arrow laws include the category laws, first)
 * ```ts
 * import { ArrowTests, RuleSet } from "@ugent/laws"
 * import { Schema } from "effect"
 * const all = RuleSet.laws(ArrowTests.arrow({ input: Schema.Int }))
 * console.log(all[0]!.ruleSet, all.at(-1)!.ruleSet, all.length)
 * // => category arrow 18
 * ```
 *
 * @category getters
 * @since 0.1.0
 */
export const laws = (self: RuleSet): ReadonlyArray<{ readonly ruleSet: string; readonly law: Law.Any }> => {
  const out: Array<{ readonly ruleSet: string; readonly law: Law.Any }> = []
  const seen = new Set<string>()
  const visit = (rs: RuleSet) => {
    for (const p of rs.parents) visit(p)
    for (const law of rs.laws) {
      const key = `${rs.name}: ${law.name}`
      if (seen.has(key)) continue
      seen.add(key)
      out.push({ ruleSet: rs.name, law })
    }
  }
  visit(self)
  return out
}

/**
 * How laws are checked.
 *
 * @category models
 * @since 0.1.0
 */
export interface CheckOptions extends Observation.RunOptions {
  /** The equality of observations; {@link Observation.equivalence} by default. */
  readonly equivalence?: Observation.Equivalence | undefined
  /** A seed for every law; otherwise `UGENT_LAWS_SEED`, otherwise a random one (printed on failure). */
  readonly seed?: number | string | undefined
  /** A token printed by a falsified law; otherwise `UGENT_LAWS_REPLAY`. Only the law it names is replayed. */
  readonly replay?: string | undefined
  /** Generated arguments per law; 100 by default. */
  readonly runs?: number | undefined
  /** Bound on the shrink candidates tried after a failure. */
  readonly maxShrinks?: number | undefined
  /** The largest size of generated values. */
  readonly size?: number | undefined
}

const env = (name: string): string | undefined => {
  const value = globalThis.process?.env?.[name]
  return value === undefined || value === "" ? undefined : value
}

/**
 * The seed a check uses: the option, else `UGENT_LAWS_SEED`, else a fresh
 * random one.
 *
 * **Example** (An explicit seed wins)
 * ```ts
 * import { RuleSet } from "@ugent/laws"
 * console.log(RuleSet.resolveSeed(42))
 * // => 42
 * ```
 *
 * @category seeds
 * @since 0.1.0
 */
export const resolveSeed = (seed?: number | string | undefined): number | string => {
  if (seed !== undefined) return seed
  const fromEnv = env("UGENT_LAWS_SEED")
  if (fromEnv !== undefined) return /^-?\d+$/.test(fromEnv) ? Number(fromEnv) : fromEnv
  return Math.floor(Math.random() * 0x7fffffff)
}

const problemOf = (lhs: Observation.Observation, rhs: Observation.Observation): string => {
  const parts = Observation.differences(lhs, rhs)
  if (parts.length === 0) return "the equivalence in use says they differ"
  const names = { completion: "completion", exit: "exits", log: "effect logs" } as const
  return `the ${parts.map((p) => names[p]).join(" and the ")} differ`
}

/**
 * Observes a law's evidence: `undefined` when it holds, otherwise the
 * difference.
 *
 * **Example** (One equation on one input)
 * ```ts
 * import { Law, RuleSet } from "@ugent/laws"
 * import { Effect } from "effect"
 * const diff = await Effect.runPromise(RuleSet.evaluate(Law.isEq("1 + 1", Effect.succeed(2), "3", Effect.succeed(3))))
 * console.log(diff?.problem)
 * // => the exits differ
 * ```
 *
 * @category checking
 * @since 0.1.0
 */
export const evaluate = (
  evidence: Law.Evidence,
  options?: CheckOptions
): Effect.Effect<Report.Difference | undefined> =>
  Effect.gen(function* () {
    if (evidence._tag === "Holds") {
      const seen = yield* Observation.run(evidence.side.run, options)
      const problem = seen.completed ? evidence.check(seen) : "it did not complete"
      return problem === undefined
        ? undefined
        : { sides: [{ label: evidence.side.label, observation: seen }], expected: evidence.expected, problem }
    }
    const rhs = yield* Observation.run(evidence.rhs.run, options)
    if (evidence.when !== undefined && !evidence.when(rhs)) return undefined
    const lhs = yield* Observation.run(evidence.lhs.run, options)
    const equivalent = options?.equivalence ?? Observation.equivalence
    if (equivalent(lhs, rhs)) return undefined
    return {
      sides: [
        { label: evidence.lhs.label, observation: lhs },
        { label: evidence.rhs.label, observation: rhs }
      ],
      problem: problemOf(lhs, rhs)
    }
  })

/**
 * Checks one law and reports.
 *
 * **Example** (A falsified law, shrunk)
 * ```ts
 * import { Law, Report, RuleSet } from "@ugent/laws"
 * import { Arbitrary, Effect, Schema } from "effect"
 * const small = Law.make("n < 10", Arbitrary.schema(Schema.Int), (n) => Law.isEq("n < 10", Effect.succeed(n < 10), "true", Effect.succeed(true)))
 * const report = await Effect.runPromise(RuleSet.checkLaw("ints", "order", small, { seed: 1 }))
 * console.log(report._tag, (report as Report.Falsified).shrunkInput)
 * // => Falsified 10
 * ```
 *
 * @category checking
 * @since 0.1.0
 */
export const checkLaw = (
  suite: string,
  ruleSet: string,
  law: Law.Any,
  options?: CheckOptions
): Effect.Effect<Report.Report> => {
  const seed = resolveSeed(options?.seed)
  const name = Report.lawName({ ruleSet, law: law.name })
  const token = options?.replay ?? env("UGENT_LAWS_REPLAY")
  const decoded = token === undefined ? undefined : Report.decodeReplay(token)
  const replay = decoded !== undefined && decoded.suite === suite && decoded.law === name ? decoded.replay : undefined
  const common = { suite, ruleSet, law: law.name, seed }
  const property = (argument: unknown) =>
    Effect.flatMap(
      Effect.suspend(() => evaluate(law.evidence(argument), options)),
      (difference) => (difference === undefined ? Effect.succeed(true) : Effect.fail(difference))
    )
  return Arbitrary.checkEffect(law.arbitrary, property, {
    runs: options?.runs ?? 100,
    seed,
    replay,
    maxShrinks: options?.maxShrinks,
    size: options?.size
  }).pipe(
    Effect.map((result) => toReport(result, common, suite, name)),
    Effect.catchCause((cause) =>
      Cause.hasInterruptsOnly(cause)
        ? Effect.failCause(cause)
        : Effect.succeed<Report.Report>({ _tag: "Errored", ...common, error: errorMessage(cause) })
    )
  )
}

const toReport = (
  result: Arbitrary.CheckResult<unknown, Report.Difference>,
  common: { readonly suite: string; readonly ruleSet: string; readonly law: string; readonly seed: number | string },
  suite: string,
  name: string
): Report.Report => {
  switch (result._tag) {
    case "Passed":
      return { _tag: "Passed", ...common, runs: result.runs }
    case "Exhausted":
      return { _tag: "Exhausted", ...common, runs: result.runs, discards: result.discards }
    case "ReplayMismatch":
      return { _tag: "ReplayMismatch", ...common, reason: result.reason }
    case "Falsified":
      return {
        _tag: "Falsified",
        ...common,
        runs: result.runs,
        shrinks: result.shrinks,
        initialInput: result.initialInput,
        shrunkInput: result.shrunkInput,
        difference:
          result.failure._tag === "PropertyError"
            ? result.failure.error
            : { sides: [], problem: "the property returned false" },
        replay: Report.encodeReplay(suite, name, result.replay)
      }
  }
}

const errorMessage = (cause: Cause.Cause<unknown>): string => {
  for (const r of cause.reasons) {
    if (Cause.isDieReason(r) && r.defect instanceof Observation.SetupError) return r.defect.message
  }
  return Cause.pretty(cause)
}

/**
 * Checks every law of a rule set (inherited ones first) and returns a report
 * per law. The programmatic API: it runs anywhere an Effect runs.
 *
 * **Example** (Checking the category laws of a tool outside vitest)
 * ```ts
 * import { Tool } from "@ugent/core"
 * import { CategoryTests, Report, RuleSet } from "@ugent/laws"
 * import { Effect, Schema } from "effect"
 * const inc = Tool.fromFunction({ name: "inc", input: Schema.Int, output: Schema.Int, f: (n: number) => n + 1 })
 * const reports = await Effect.runPromise(RuleSet.check("inc", CategoryTests.category({ tool: inc }), { seed: 42, runs: 20 }))
 * console.log(reports.every(Report.isPassed), reports.length)
 * // => true 6
 * ```
 *
 * @category checking
 * @since 0.1.0
 */
export const check = (
  suite: string,
  self: RuleSet,
  options?: CheckOptions
): Effect.Effect<ReadonlyArray<Report.Report>> => {
  // One seed for the whole suite, so the seed printed by any failure reruns them all.
  const seed = resolveSeed(options?.seed)
  return Effect.forEach(laws(self), ({ ruleSet, law }) => checkLaw(suite, ruleSet, law, { ...options, seed }))
}
