/**
 * The category rule set: the laws of `CategoryLaws` over generated inputs and
 * generated tools. With a `tool`, the laws are checked with that tool in the
 * middle (generated tools before and after it); without one, over generated
 * tools of the `input` schema, which checks the instance's composition itself.
 * `Laws.category` registers it with vitest.
 *
 * @since 0.1.0
 */
import type { Tool } from "@ugent/core"
import { Arbitrary } from "effect"
import * as CategoryLaws from "./CategoryLaws.ts"
import type * as Instance from "./Instance.ts"
import { subjectOf } from "./internal/subject.ts"
import * as Law from "./Law.ts"
import * as RuleSet from "./RuleSet.ts"
import type * as ToolArbitrary from "./ToolArbitrary.ts"

/**
 * What the algebraic rule sets (category, arrow, combinators) are checked on.
 *
 * @category models
 * @since 0.1.0
 */
export interface Options<A = unknown, B = unknown, E = unknown, R = unknown> {
  /** The tool under test; without it, `f` is generated from `input` (to check the instance itself). */
  readonly tool?: Tool.Tool<A, B, E, R> | undefined
  /** Inputs: a schema or an Arbitrary; the tool's input schema by default. */
  readonly input?: ToolArbitrary.Input<A> | undefined
  /** Values of the tool's output, for the generated tools placed after it; the tool's output schema by default. */
  readonly output?: ToolArbitrary.Input<B> | undefined
  /** The instance whose operations are checked; `Instance.tool` (ugent's `Tool`) by default. */
  readonly instance?: Instance.Instance | undefined
  /** Which generated tools: families and trust level. */
  readonly tools?: ToolArbitrary.Options | undefined
  /** The longest generated pipeline around the tool; 8 by default. */
  readonly pipelineLength?: number | undefined
}

/**
 * The category rule set: identity, left and right identity, composition
 * runs `f` then `g`, associativity, pipeline is a fold.
 *
 * **Example** (Checking a tool's category laws outside vitest)
 * ```ts
 * import { Tool } from "@ugent/core"
 * import { CategoryTests, Report, RuleSet } from "@ugent/laws"
 * import { Effect, Schema } from "effect"
 * const inc = Tool.fromFunction({ name: "inc", input: Schema.Int, output: Schema.Int, f: (n: number) => n + 1 })
 * const reports = await Effect.runPromise(RuleSet.check("inc", CategoryTests.category({ tool: inc }), { seed: 1, runs: 20 }))
 * for (const r of reports) console.log(`${r.law}: ${r._tag}`)
 * // => identity returns its input: Passed
 * // => left identity: Passed
 * // => right identity: Passed
 * // => composition runs f then g: Passed
 * // => associativity: Passed
 * // => pipeline is a fold of andThen: Passed
 * ```
 *
 * @category rule sets
 * @since 0.1.0
 */
export const category = <A, B, E, R>(options: Options<A, B, E, R>): RuleSet.RuleSet => {
  const s = subjectOf(options as Options, "CategoryTests.category")
  const I = s.instance
  const max = options.pipelineLength ?? 8
  const side = Math.max(0, Math.floor((max - 1) / 2))
  return RuleSet.make("category", [
    Law.make("identity returns its input", s.input, (a) => CategoryLaws.identity(I, s.inputSchema, a)),
    Law.make("left identity", Arbitrary.all({ f: s.f, a: s.input }), ({ f, a }) => CategoryLaws.leftIdentity(I, f, a)),
    Law.make("right identity", Arbitrary.all({ f: s.f, a: s.input }), ({ f, a }) =>
      CategoryLaws.rightIdentity(I, f, a)
    ),
    Law.make("composition runs f then g", Arbitrary.all({ f: s.f, g: s.post, a: s.input }), ({ f, g, a }) =>
      CategoryLaws.composition(I, f, g, a)
    ),
    Law.make("associativity", Arbitrary.all({ pre: s.pre, f: s.f, post: s.post, a: s.input }), ({ pre, f, post, a }) =>
      CategoryLaws.associativity(I, pre, f, post, a)
    ),
    Law.make(
      "pipeline is a fold of andThen",
      Arbitrary.all({
        before: Arbitrary.array(s.pre, { maxLength: side }),
        f: s.f,
        after: Arbitrary.array(s.post, { maxLength: side }),
        a: s.input
      }),
      ({ before, f, after, a }) => CategoryLaws.pipelineIsFold(I, [...before, f, ...after], a)
    )
  ])
}
