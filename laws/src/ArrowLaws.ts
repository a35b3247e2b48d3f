/**
 * The arrow laws of an {@link Instance}, each a pair of sides, after Hughes'
 * arrows (and cats' `ArrowLaws`), for Kleisli arrows over `Effect`:
 *
 * - `arr id = id`; `arr (l ∘ k) = arr k >> arr l`;
 * - `first (arr k) = arr (first k)`; `first (f >> g) = first f >> first g`;
 * - `first f >> arr fst = arr fst >> f`;
 * - `first f >> arr (id *** k) = arr (id *** k) >> first f`;
 * - `first (first f) >> arr assoc = arr assoc >> first f`;
 * - `second f = arr swap >> first f >> arr swap`;
 * - `split f g = first f >> second g` (the sequential split);
 * - `fanout f g = arr dup >> split f g`;
 * - `map f k = f >> arr k`; `contramap f k = arr k >> f`.
 *
 * `k` and `l` are pure functions; `f` and `g` are tools (effects, sleeps and
 * typed failures included).
 *
 * @since 0.1.0
 */
import type { Tool } from "@ugent/core"
import { Effect } from "effect"
import type { Instance } from "./Instance.ts"
import * as Law from "./Law.ts"

/**
 * A pure function the laws lift with `arr`.
 *
 * @category models
 * @since 0.1.0
 */
export type Fn = (a: unknown) => unknown

const run = (tool: () => Tool.Any, a: unknown) => Effect.suspend(() => tool().run(a))

type Pair = readonly [unknown, unknown]
const fst = (p: unknown) => (p as Pair)[0]
const swap = (p: unknown) => [(p as Pair)[1], (p as Pair)[0]] as const
const dup = (a: unknown) => [a, a] as const
const assoc = (p: unknown) => {
  const [[a, b], c] = p as readonly [Pair, unknown]
  return [a, [b, c] as const] as const
}

/**
 * `arr id <-> id`.
 *
 * **Example** (arr id on 7)
 * ```ts
 * import { Tool } from "@ugent/core"
 * import { ArrowLaws, Instance, RuleSet } from "@ugent/laws"
 * import { Effect, Schema } from "effect"
 * const inc = Tool.fromFunction({ name: "inc", input: Schema.Int, output: Schema.Int, f: (n: number) => n + 1 })
 * const double = Tool.fromFunction({ name: "double", input: Schema.Int, output: Schema.Int, f: (n: number) => n * 2 })
 * console.log(await Effect.runPromise(RuleSet.evaluate(ArrowLaws.arrIdentity(Instance.tool, Schema.Int, 7))))
 * // => undefined
 * ```
 *
 * @category laws
 * @since 0.1.0
 */
export const arrIdentity = (I: Instance, schema: Tool.AnySchema, a: unknown): Law.IsEq =>
  Law.isEq(
    "arr(id)",
    run(() => I.arr((x) => x), a),
    "id",
    run(() => I.identity(schema), a)
  )

/**
 * `arr (l ∘ k) <-> arr k >> arr l`.
 *
 * **Example** (arr of a composite function)
 * ```ts
 * import { Tool } from "@ugent/core"
 * import { ArrowLaws, Instance, RuleSet } from "@ugent/laws"
 * import { Effect, Schema } from "effect"
 * const inc = Tool.fromFunction({ name: "inc", input: Schema.Int, output: Schema.Int, f: (n: number) => n + 1 })
 * const double = Tool.fromFunction({ name: "double", input: Schema.Int, output: Schema.Int, f: (n: number) => n * 2 })
 * console.log(await Effect.runPromise(RuleSet.evaluate(ArrowLaws.arrComposition(Instance.tool, (n) => (n as number) + 1, (n) => (n as number) * 2, 3))))
 * // => undefined
 * ```
 *
 * @category laws
 * @since 0.1.0
 */
export const arrComposition = (I: Instance, k: Fn, l: Fn, a: unknown): Law.IsEq =>
  Law.isEq(
    "arr(l ∘ k)",
    run(() => I.arr((x) => l(k(x))), a),
    "arr(k) >> arr(l)",
    run(() => I.andThen(I.arr(k), I.arr(l)), a)
  )

/**
 * `first (arr k) <-> arr (first k)`.
 *
 * **Example** (first of a lifted function)
 * ```ts
 * import { Tool } from "@ugent/core"
 * import { ArrowLaws, Instance, RuleSet } from "@ugent/laws"
 * import { Effect, Schema } from "effect"
 * const inc = Tool.fromFunction({ name: "inc", input: Schema.Int, output: Schema.Int, f: (n: number) => n + 1 })
 * const double = Tool.fromFunction({ name: "double", input: Schema.Int, output: Schema.Int, f: (n: number) => n * 2 })
 * console.log(await Effect.runPromise(RuleSet.evaluate(ArrowLaws.firstArr(Instance.tool, (n) => (n as number) + 1, [1, "kept"]))))
 * // => undefined
 * ```
 *
 * @category laws
 * @since 0.1.0
 */
export const firstArr = (I: Instance, k: Fn, pair: Pair): Law.IsEq =>
  Law.isEq(
    "first(arr(k))",
    run(() => I.first(I.arr(k)), pair),
    "arr(first(k))",
    run(() => I.arr((p) => [k(fst(p)), (p as Pair)[1]] as const), pair)
  )

/**
 * `first (f >> g) <-> first f >> first g`.
 *
 * **Example** (first distributes over composition)
 * ```ts
 * import { Tool } from "@ugent/core"
 * import { ArrowLaws, Instance, RuleSet } from "@ugent/laws"
 * import { Effect, Schema } from "effect"
 * const inc = Tool.fromFunction({ name: "inc", input: Schema.Int, output: Schema.Int, f: (n: number) => n + 1 })
 * const double = Tool.fromFunction({ name: "double", input: Schema.Int, output: Schema.Int, f: (n: number) => n * 2 })
 * console.log(await Effect.runPromise(RuleSet.evaluate(ArrowLaws.firstComposition(Instance.tool, inc, double, [1, "kept"]))))
 * // => undefined
 * ```
 *
 * @category laws
 * @since 0.1.0
 */
export const firstComposition = (I: Instance, f: Tool.Any, g: Tool.Any, pair: Pair): Law.IsEq =>
  Law.isEq(
    "first(f >> g)",
    run(() => I.first(I.andThen(f, g)), pair),
    "first(f) >> first(g)",
    run(() => I.andThen(I.first(f), I.first(g)), pair)
  )

/**
 * `first f >> arr fst <-> arr fst >> f`.
 *
 * **Example** (first then fst)
 * ```ts
 * import { Tool } from "@ugent/core"
 * import { ArrowLaws, Instance, RuleSet } from "@ugent/laws"
 * import { Effect, Schema } from "effect"
 * const inc = Tool.fromFunction({ name: "inc", input: Schema.Int, output: Schema.Int, f: (n: number) => n + 1 })
 * const double = Tool.fromFunction({ name: "double", input: Schema.Int, output: Schema.Int, f: (n: number) => n * 2 })
 * console.log(await Effect.runPromise(RuleSet.evaluate(ArrowLaws.firstFst(Instance.tool, inc, [1, "dropped"]))))
 * // => undefined
 * ```
 *
 * @category laws
 * @since 0.1.0
 */
export const firstFst = (I: Instance, f: Tool.Any, pair: Pair): Law.IsEq =>
  Law.isEq(
    "first(f) >> arr(fst)",
    run(() => I.andThen(I.first(f), I.arr(fst)), pair),
    "arr(fst) >> f",
    run(() => I.andThen(I.arr(fst), f), pair)
  )

/**
 * `first f >> arr (id *** k) <-> arr (id *** k) >> first f`.
 *
 * **Example** (first commutes with a function of the second component)
 * ```ts
 * import { Tool } from "@ugent/core"
 * import { ArrowLaws, Instance, RuleSet } from "@ugent/laws"
 * import { Effect, Schema } from "effect"
 * const inc = Tool.fromFunction({ name: "inc", input: Schema.Int, output: Schema.Int, f: (n: number) => n + 1 })
 * const double = Tool.fromFunction({ name: "double", input: Schema.Int, output: Schema.Int, f: (n: number) => n * 2 })
 * console.log(await Effect.runPromise(RuleSet.evaluate(ArrowLaws.firstExchange(Instance.tool, inc, (s) => `${s}!`, [1, "c"]))))
 * // => undefined
 * ```
 *
 * @category laws
 * @since 0.1.0
 */
export const firstExchange = (I: Instance, f: Tool.Any, k: Fn, pair: Pair): Law.IsEq => {
  const idTimesK = (p: unknown) => [fst(p), k((p as Pair)[1])] as const
  return Law.isEq(
    "first(f) >> arr(id *** k)",
    run(() => I.andThen(I.first(f), I.arr(idTimesK)), pair),
    "arr(id *** k) >> first(f)",
    run(() => I.andThen(I.arr(idTimesK), I.first(f)), pair)
  )
}

/**
 * `first (first f) >> arr assoc <-> arr assoc >> first f`.
 *
 * **Example** (first of first, reassociated)
 * ```ts
 * import { Tool } from "@ugent/core"
 * import { ArrowLaws, Instance, RuleSet } from "@ugent/laws"
 * import { Effect, Schema } from "effect"
 * const inc = Tool.fromFunction({ name: "inc", input: Schema.Int, output: Schema.Int, f: (n: number) => n + 1 })
 * const double = Tool.fromFunction({ name: "double", input: Schema.Int, output: Schema.Int, f: (n: number) => n * 2 })
 * console.log(await Effect.runPromise(RuleSet.evaluate(ArrowLaws.firstAssociation(Instance.tool, inc, [[1, "b"], "c"]))))
 * // => undefined
 * ```
 *
 * @category laws
 * @since 0.1.0
 */
export const firstAssociation = (I: Instance, f: Tool.Any, nested: readonly [Pair, unknown]): Law.IsEq =>
  Law.isEq(
    "first(first(f)) >> arr(assoc)",
    run(() => I.andThen(I.first(I.first(f)), I.arr(assoc)), nested),
    "arr(assoc) >> first(f)",
    run(() => I.andThen(I.arr(assoc), I.first(f)), nested)
  )

/**
 * `second f <-> arr swap >> first f >> arr swap`.
 *
 * **Example** (second is first under a swap)
 * ```ts
 * import { Tool } from "@ugent/core"
 * import { ArrowLaws, Instance, RuleSet } from "@ugent/laws"
 * import { Effect, Schema } from "effect"
 * const inc = Tool.fromFunction({ name: "inc", input: Schema.Int, output: Schema.Int, f: (n: number) => n + 1 })
 * const double = Tool.fromFunction({ name: "double", input: Schema.Int, output: Schema.Int, f: (n: number) => n * 2 })
 * console.log(await Effect.runPromise(RuleSet.evaluate(ArrowLaws.secondIsSwappedFirst(Instance.tool, inc, ["c", 1]))))
 * // => undefined
 * ```
 *
 * @category laws
 * @since 0.1.0
 */
export const secondIsSwappedFirst = (I: Instance, f: Tool.Any, pair: Pair): Law.IsEq =>
  Law.isEq(
    "second(f)",
    run(() => I.second(f), pair),
    "arr(swap) >> first(f) >> arr(swap)",
    run(() => I.andThen(I.andThen(I.arr(swap), I.first(f)), I.arr(swap)), pair)
  )

/**
 * `split f g <-> first f >> second g`: `f` runs first, and its failure skips `g`.
 *
 * **Example** (split is first then second)
 * ```ts
 * import { Tool } from "@ugent/core"
 * import { ArrowLaws, Instance, RuleSet } from "@ugent/laws"
 * import { Effect, Schema } from "effect"
 * const inc = Tool.fromFunction({ name: "inc", input: Schema.Int, output: Schema.Int, f: (n: number) => n + 1 })
 * const double = Tool.fromFunction({ name: "double", input: Schema.Int, output: Schema.Int, f: (n: number) => n * 2 })
 * console.log(await Effect.runPromise(RuleSet.evaluate(ArrowLaws.splitIsFirstThenSecond(Instance.tool, inc, double, [1, 5]))))
 * // => undefined
 * ```
 *
 * @category laws
 * @since 0.1.0
 */
export const splitIsFirstThenSecond = (I: Instance, f: Tool.Any, g: Tool.Any, pair: Pair): Law.IsEq =>
  Law.isEq(
    "f *** g",
    run(() => I.split(f, g), pair),
    "first(f) >> second(g)",
    run(() => I.andThen(I.first(f), I.second(g)), pair)
  )

/**
 * `fanout f g <-> arr dup >> split f g`.
 *
 * **Example** (fanout is dup then split)
 * ```ts
 * import { Tool } from "@ugent/core"
 * import { ArrowLaws, Instance, RuleSet } from "@ugent/laws"
 * import { Effect, Schema } from "effect"
 * const inc = Tool.fromFunction({ name: "inc", input: Schema.Int, output: Schema.Int, f: (n: number) => n + 1 })
 * const double = Tool.fromFunction({ name: "double", input: Schema.Int, output: Schema.Int, f: (n: number) => n * 2 })
 * console.log(await Effect.runPromise(RuleSet.evaluate(ArrowLaws.fanoutIsDupThenSplit(Instance.tool, inc, double, 4))))
 * // => undefined
 * ```
 *
 * @category laws
 * @since 0.1.0
 */
export const fanoutIsDupThenSplit = (I: Instance, f: Tool.Any, g: Tool.Any, a: unknown): Law.IsEq =>
  Law.isEq(
    "f &&& g",
    run(() => I.fanout(f, g), a),
    "arr(dup) >> (f *** g)",
    run(() => I.andThen(I.arr(dup), I.split(f, g)), a)
  )

/**
 * `map f k <-> f >> arr k`.
 *
 * **Example** (map is post-composition)
 * ```ts
 * import { Tool } from "@ugent/core"
 * import { ArrowLaws, Instance, RuleSet } from "@ugent/laws"
 * import { Effect, Schema } from "effect"
 * const inc = Tool.fromFunction({ name: "inc", input: Schema.Int, output: Schema.Int, f: (n: number) => n + 1 })
 * const double = Tool.fromFunction({ name: "double", input: Schema.Int, output: Schema.Int, f: (n: number) => n * 2 })
 * console.log(await Effect.runPromise(RuleSet.evaluate(ArrowLaws.mapIsPostComposition(Instance.tool, inc, (n) => `n=${n}`, 4))))
 * // => undefined
 * ```
 *
 * @category laws
 * @since 0.1.0
 */
export const mapIsPostComposition = (I: Instance, f: Tool.Any, k: Fn, a: unknown): Law.IsEq =>
  Law.isEq(
    "map(f, k)",
    run(() => I.map(f, k), a),
    "f >> arr(k)",
    run(() => I.andThen(f, I.arr(k)), a)
  )

/**
 * `contramap f k <-> arr k >> f`.
 *
 * **Example** (contramap is pre-composition)
 * ```ts
 * import { Tool } from "@ugent/core"
 * import { ArrowLaws, Instance, RuleSet } from "@ugent/laws"
 * import { Effect, Schema } from "effect"
 * const inc = Tool.fromFunction({ name: "inc", input: Schema.Int, output: Schema.Int, f: (n: number) => n + 1 })
 * const double = Tool.fromFunction({ name: "double", input: Schema.Int, output: Schema.Int, f: (n: number) => n * 2 })
 * console.log(await Effect.runPromise(RuleSet.evaluate(ArrowLaws.contramapIsPreComposition(Instance.tool, inc, (s) => (s as string).length, "abc"))))
 * // => undefined
 * ```
 *
 * @category laws
 * @since 0.1.0
 */
export const contramapIsPreComposition = (I: Instance, f: Tool.Any, k: Fn, a: unknown): Law.IsEq =>
  Law.isEq(
    "contramap(f, k)",
    run(() => I.contramap(f, k), a),
    "arr(k) >> f",
    run(() => I.andThen(I.arr(k), f), a)
  )
