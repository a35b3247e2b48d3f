/**
 * The arrow rule set: the laws of `ArrowLaws` over generated inputs, pairs,
 * generated tools and generated pure functions. It inherits the category
 * rule set, so `Laws.arrow` checks the category laws too.
 *
 * @since 0.1.0
 */
import { Arbitrary } from "effect"
import * as ArrowLaws from "./ArrowLaws.ts"
import * as CategoryTests from "./CategoryTests.ts"
import { subjectOf } from "./internal/subject.ts"
import * as Law from "./Law.ts"
import * as RuleSet from "./RuleSet.ts"
import * as ToolArbitrary from "./ToolArbitrary.ts"

/**
 * The options of the arrow rule set: those of the category rule set.
 *
 * @category models
 * @since 0.1.0
 */
export type Options<A = unknown, B = unknown, E = unknown, R = unknown> = CategoryTests.Options<A, B, E, R>

/**
 * The arrow rule set (with the category rule set as its parent).
 *
 * **Example** (Arrow laws of a tool, programmatically)
 * ```ts
 * import { Tool } from "@ugent/core"
 * import { ArrowTests, Report, RuleSet } from "@ugent/laws"
 * import { Effect, Schema } from "effect"
 * const len = Tool.fromFunction({ name: "len", input: Schema.String, output: Schema.Int, f: (s: string) => s.length })
 * const reports = await Effect.runPromise(RuleSet.check("len", ArrowTests.arrow({ tool: len }), { seed: 2, runs: 20 }))
 * console.log(reports.length, reports.every(Report.isPassed))
 * // => 18 true
 * ```
 *
 * @category rule sets
 * @since 0.1.0
 */
export const arrow = <A, B, E, R>(options: Options<A, B, E, R>): RuleSet.RuleSet => {
  const s = subjectOf(options as Options, "ArrowTests.arrow")
  const I = s.instance
  const a = s.input
  const c = s.inputValues
  const k = ToolArbitrary.pureFunction(s.inputValues)
  const kOut = ToolArbitrary.pureFunction(s.outputValues ?? Arbitrary.Constant(undefined))
  const pair = Arbitrary.all([a, c])
  const fn = (named: ToolArbitrary.NamedFunction<unknown, unknown>): ArrowLaws.Fn => named.apply
  return RuleSet.make(
    "arrow",
    [
      Law.make("arr id = id", a, (x) => ArrowLaws.arrIdentity(I, s.inputSchema, x)),
      Law.make("arr (l . k) = arr k >> arr l", Arbitrary.all({ k, l: k, a }), (x) =>
        ArrowLaws.arrComposition(I, fn(x.k), fn(x.l), x.a)
      ),
      Law.make("first (arr k) = arr (first k)", Arbitrary.all({ k, pair }), (x) =>
        ArrowLaws.firstArr(I, fn(x.k), x.pair)
      ),
      Law.make("first (f >> g) = first f >> first g", Arbitrary.all({ f: s.f, g: s.post, pair }), (x) =>
        ArrowLaws.firstComposition(I, x.f, x.g, x.pair)
      ),
      Law.make("first f >> arr fst = arr fst >> f", Arbitrary.all({ f: s.f, pair }), (x) =>
        ArrowLaws.firstFst(I, x.f, x.pair)
      ),
      Law.make("first f >> arr (id *** k) = arr (id *** k) >> first f", Arbitrary.all({ f: s.f, k, pair }), (x) =>
        ArrowLaws.firstExchange(I, x.f, fn(x.k), x.pair)
      ),
      Law.make(
        "first (first f) >> arr assoc = arr assoc >> first f",
        Arbitrary.all({ f: s.f, nested: Arbitrary.all([pair, c]) }),
        (x) => ArrowLaws.firstAssociation(I, x.f, x.nested)
      ),
      Law.make(
        "second f = arr swap >> first f >> arr swap",
        Arbitrary.all({ f: s.f, pair: Arbitrary.all([c, a]) }),
        (x) => ArrowLaws.secondIsSwappedFirst(I, x.f, x.pair)
      ),
      Law.make("split f g = first f >> second g", Arbitrary.all({ f: s.f, g: s.pre, pair }), (x) =>
        ArrowLaws.splitIsFirstThenSecond(I, x.f, x.g, x.pair)
      ),
      Law.make("fanout f g = arr dup >> split f g", Arbitrary.all({ f: s.f, g: s.pre, a }), (x) =>
        ArrowLaws.fanoutIsDupThenSplit(I, x.f, x.g, x.a)
      ),
      Law.make("map f k = f >> arr k", Arbitrary.all({ f: s.f, k: kOut, a }), (x) =>
        ArrowLaws.mapIsPostComposition(I, x.f, fn(x.k), x.a)
      ),
      Law.make("contramap f k = arr k >> f", Arbitrary.all({ f: s.f, k, a }), (x) =>
        ArrowLaws.contramapIsPreComposition(I, x.f, fn(x.k), x.a)
      )
    ],
    [CategoryTests.category(options)]
  )
}
