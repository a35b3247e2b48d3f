/**
 * The combinator rule set: the laws of `CombinatorLaws` (`all`, `orElse`,
 * `choice`) over generated inputs and generated tools, pure, effectful and
 * failing. It inherits the arrow rule set (and so the category rule set), as
 * arrow-choice extends arrow in cats.
 *
 * @since 0.1.0
 */
import { Arbitrary, Schema } from "effect"
import * as ArrowTests from "./ArrowTests.ts"
import * as CombinatorLaws from "./CombinatorLaws.ts"
import { subjectOf } from "./internal/subject.ts"
import * as Law from "./Law.ts"
import * as RuleSet from "./RuleSet.ts"
import * as ToolArbitrary from "./ToolArbitrary.ts"

/**
 * The options of the combinator rule set: those of the category rule set.
 *
 * @category models
 * @since 0.1.0
 */
export type Options<A = unknown, B = unknown, E = unknown, R = unknown> = ArrowTests.Options<A, B, E, R>

const tags = Arbitrary.schema(Schema.Literals(["A", "B"]))
const labels = Arbitrary.schema(Schema.Literals(["x", "y", "z"]))

/**
 * The combinator rule set (with the arrow rule set as its parent).
 *
 * **Example** (The combinator laws of ugent's Tool over generated tools)
 * ```ts
 * import { CombinatorTests, Report, RuleSet } from "@ugent/laws"
 * import { Effect, Schema } from "effect"
 * const rules = RuleSet.make("only combinators", CombinatorTests.combinators({ input: Schema.Int }).laws)
 * const reports = await Effect.runPromise(RuleSet.check("Tool", rules, { seed: 4, runs: 30 }))
 * console.log(reports.filter(Report.isPassed).length, "of", reports.length)
 * // => 10 of 10
 * ```
 *
 * @category rule sets
 * @since 0.1.0
 */
export const combinators = <A, B, E, R>(options: Options<A, B, E, R>): RuleSet.RuleSet => {
  const s = subjectOf(options as Options, "CombinatorTests.combinators")
  const I = s.instance
  const a = s.input
  const alwaysFails = Arbitrary.map(labels, (label) =>
    ToolArbitrary.fromSpec({ _tag: "failWhen", modulus: 1, label }, s.inputSchema, options.tools)
  )
  const tagged = Arbitrary.map(
    Arbitrary.all({ _tag: tags, value: a }),
    (x) => x as { readonly _tag: string; readonly value: unknown }
  )
  const value = (x: unknown) => (x as { readonly value: unknown }).value
  return RuleSet.make(
    "combinators",
    [
      Law.make("all collect-all reports every failure", Arbitrary.all({ f: s.fFaulty, g: s.faulty, a }), (x) =>
        CombinatorLaws.allCollectsEveryFailure(I, x.f, x.g, x.a)
      ),
      Law.make("all fail-fast one at a time = fanout", Arbitrary.all({ f: s.fFaulty, g: s.faulty, a }), (x) =>
        CombinatorLaws.allSequentialFailFastIsFanout(I, x.f, x.g, x.a)
      ),
      Law.make("all fail-fast fails with the first failure", Arbitrary.all({ f: s.fFaulty, g: s.faulty, a }), (x) =>
        CombinatorLaws.allFailFastIsEffectAll(I, x.f, x.g, x.a)
      ),
      Law.make("all over one tool = map (fail-fast)", Arbitrary.all({ f: s.fFaulty, a }), (x) =>
        CombinatorLaws.allOfOneIsMap(I, x.f, x.a, "fail-fast")
      ),
      Law.make("all over one tool = map (collect-all)", Arbitrary.all({ f: s.fFaulty, a }), (x) =>
        CombinatorLaws.allOfOneIsMap(I, x.f, x.a, "collect-all")
      ),
      Law.make("orElse = f, else g", Arbitrary.all({ f: s.fFaulty, g: s.faulty, a }), (x) =>
        CombinatorLaws.orElseIsFallback(I, x.f, x.g, x.a)
      ),
      Law.make("orElse(f, g) = f when f succeeds", Arbitrary.all({ f: s.total, g: s.pre, a }), (x) =>
        CombinatorLaws.orElseOfSuccess(I, x.f, x.g, x.a)
      ),
      Law.make("orElse(f, g) = g when f fails", Arbitrary.all({ fail: alwaysFails, g: s.pre, a }), (x) =>
        CombinatorLaws.orElseOfFailure(I, x.fail, x.g, x.a)
      ),
      Law.make("orElse is associative", Arbitrary.all({ f: s.fFaulty, g: s.faulty, h: s.faulty, a }), (x) =>
        CombinatorLaws.orElseAssociativity(I, x.f, x.g, x.h, x.a)
      ),
      Law.make("choice dispatches on _tag", Arbitrary.all({ f: s.f, g: s.pre, input: tagged }), (x) =>
        CombinatorLaws.choiceDispatches(I, { A: I.contramap(x.f, value), B: I.contramap(x.g, value) }, x.input)
      )
    ],
    [ArrowTests.arrow(options)]
  )
}
