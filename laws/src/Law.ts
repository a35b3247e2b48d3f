/**
 * A `Law` is a named statement checked over generated arguments. For each
 * argument it gives its evidence: either an equation between two sides
 * ({@link IsEq}, as cats' `lhs <-> rhs`), or a property one side must satisfy
 * ({@link Holds}, for laws such as "a write without a proof fails"). Sides are
 * Effects, run on their own and compared as {@link Observation}s.
 *
 * The modules `CategoryLaws`, `ArrowLaws`, … state the laws; the rule sets of
 * `CategoryTests`, `ArrowTests`, … pair them with generators and names.
 *
 * @since 0.1.0
 */
import type { Arbitrary, Effect } from "effect"
import type { Observation } from "./Observation.ts"

/**
 * One side of a law: what it is (`"(f >> g) >> h"`) and the Effect that runs it.
 *
 * @category models
 * @since 0.1.0
 */
export interface Side {
  readonly label: string
  readonly run: Effect.Effect<unknown, unknown, unknown>
}

/**
 * An equation: both sides must be observed equal.
 *
 * @category models
 * @since 0.1.0
 */
export interface IsEq {
  readonly _tag: "IsEq"
  readonly lhs: Side
  readonly rhs: Side
  /**
   * A precondition on the observed right side: when it returns `false` the
   * case does not apply and counts as a pass ("for a tool that succeeds, …").
   */
  readonly when?: ((rhs: Observation) => boolean) | undefined
}

/**
 * A property: the side must be observed as `expected` says (`check` returns
 * `undefined` when it is, or what is wrong).
 *
 * @category models
 * @since 0.1.0
 */
export interface Holds {
  readonly _tag: "Holds"
  readonly side: Side
  readonly expected: string
  readonly check: (observation: Observation) => string | undefined
}

/**
 * The evidence of a law for one argument.
 *
 * @category models
 * @since 0.1.0
 */
export type Evidence = IsEq | Holds

/**
 * A law: a name, a generator of its arguments, and its evidence for each.
 *
 * @category models
 * @since 0.1.0
 */
export interface Law<X = unknown> {
  readonly name: string
  readonly arbitrary: Arbitrary.Arbitrary<X>
  /**
   * Declared as a method so that a `Law<X>` is usable as a `Law<unknown>`: the
   * checker only ever applies it to values of its own `arbitrary`.
   */
  evidence(argument: X): Evidence
}

/**
 * Any law, whatever its argument.
 *
 * @category models
 * @since 0.1.0
 */
export type Any = Law<unknown>

/**
 * Builds an equation `lhs <-> rhs`.
 *
 * **Example** (An equation between two Effects)
 * ```ts
 * import { Law } from "@ugent/laws"
 * import { Effect } from "effect"
 * const eq = Law.isEq("1 + 1", Effect.succeed(1 + 1), "2", Effect.succeed(2))
 * console.log(eq.lhs.label, "<->", eq.rhs.label)
 * // => 1 + 1 <-> 2
 * ```
 *
 * @category constructors
 * @since 0.1.0
 */
export const isEq = (
  lhsLabel: string,
  lhs: Effect.Effect<unknown, unknown, unknown>,
  rhsLabel: string,
  rhs: Effect.Effect<unknown, unknown, unknown>,
  when?: (rhs: Observation) => boolean
): IsEq => ({ _tag: "IsEq", lhs: { label: lhsLabel, run: lhs }, rhs: { label: rhsLabel, run: rhs }, when })

/**
 * Builds a property of one side.
 *
 * **Example** (A property of one side)
 * ```ts
 * import { Law, RuleSet } from "@ugent/laws"
 * import { Effect, Exit } from "effect"
 * const refusal = Law.holds("divide by zero", Effect.fail("division by zero"), "a typed failure", (o) =>
 *   Exit.isFailure(o.exit) ? undefined : "it succeeded"
 * )
 * console.log(await Effect.runPromise(RuleSet.evaluate(refusal)))
 * // => undefined
 * ```
 *
 * @category constructors
 * @since 0.1.0
 */
export const holds = (
  label: string,
  run: Effect.Effect<unknown, unknown, unknown>,
  expected: string,
  check: (observation: Observation) => string | undefined
): Holds => ({ _tag: "Holds", side: { label, run }, expected, check })

/**
 * Builds a law.
 *
 * **Example** (A law of addition, checked programmatically)
 * ```ts
 * import { Law, RuleSet } from "@ugent/laws"
 * import { Effect, Schema, Arbitrary } from "effect"
 * const commutative = Law.make("commutativity", Arbitrary.schema(Schema.Tuple([Schema.Int, Schema.Int])), ([a, b]) =>
 *   Law.isEq("a + b", Effect.succeed(a + b), "b + a", Effect.succeed(b + a))
 * )
 * const reports = await Effect.runPromise(RuleSet.check("Int", RuleSet.make("addition", [commutative]), { seed: 1 }))
 * console.log(reports.map((r) => `${r.law}: ${r._tag}`))
 * // => [ 'commutativity: Passed' ]
 * ```
 *
 * @category constructors
 * @since 0.1.0
 */
export const make = <X>(
  name: string,
  arbitrary: Arbitrary.Arbitrary<X>,
  evidence: (argument: X) => Evidence
): Law<X> => ({
  name,
  arbitrary,
  evidence
})
