/**
 * The category laws of an {@link Instance}, each a pair of sides: identity is
 * neutral on both sides, composition is associative, composition means
 * "run `f`, then `g` on its output" (Kleisli composition over `Effect`),
 * identity returns its input, and a pipeline is the fold of its steps.
 *
 * The "composition runs f then g" law pins the meaning: without it, a
 * composition that runs its arguments in the opposite order would satisfy
 * the other laws (it is the opposite category).
 *
 * @since 0.1.0
 */
import type { Tool } from "@ugent/core"
import { Effect } from "effect"
import type { Instance } from "./Instance.ts"
import * as Law from "./Law.ts"

/**
 * `id >> f <-> f`.
 *
 * **Example** (Evaluating a law on one input)
 * ```ts
 * import { Tool } from "@ugent/core"
 * import { CategoryLaws, Instance, RuleSet } from "@ugent/laws"
 * import { Effect, Schema } from "effect"
 * const inc = Tool.fromFunction({ name: "inc", input: Schema.Int, output: Schema.Int, f: (n: number) => n + 1 })
 * console.log(await Effect.runPromise(RuleSet.evaluate(CategoryLaws.leftIdentity(Instance.tool, inc, 41))))
 * // => undefined
 * ```
 *
 * @category laws
 * @since 0.1.0
 */
export const leftIdentity = (I: Instance, f: Tool.Any, a: unknown): Law.IsEq =>
  Law.isEq(
    "id >> f",
    Effect.suspend(() => I.andThen(I.identity(f.input), f).run(a)),
    "f",
    Effect.suspend(() => f.run(a))
  )

/**
 * `f >> id <-> f`.
 *
 * **Example** (f >> id on one input)
 * ```ts
 * import { Tool } from "@ugent/core"
 * import { CategoryLaws, Instance, RuleSet } from "@ugent/laws"
 * import { Effect, Schema } from "effect"
 * const inc = Tool.fromFunction({ name: "inc", input: Schema.Int, output: Schema.Int, f: (n: number) => n + 1 })
 * const double = Tool.fromFunction({ name: "double", input: Schema.Int, output: Schema.Int, f: (n: number) => n * 2 })
 * console.log(await Effect.runPromise(RuleSet.evaluate(CategoryLaws.rightIdentity(Instance.tool, inc, 1))))
 * // => undefined
 * ```
 *
 * @category laws
 * @since 0.1.0
 */
export const rightIdentity = (I: Instance, f: Tool.Any, a: unknown): Law.IsEq =>
  Law.isEq(
    "f >> id",
    Effect.suspend(() => I.andThen(f, I.identity(f.output)).run(a)),
    "f",
    Effect.suspend(() => f.run(a))
  )

/**
 * `(f >> g) >> h <-> f >> (g >> h)`.
 *
 * **Example** (Associativity on one input)
 * ```ts
 * import { Tool } from "@ugent/core"
 * import { CategoryLaws, Instance, RuleSet } from "@ugent/laws"
 * import { Effect, Schema } from "effect"
 * const inc = Tool.fromFunction({ name: "inc", input: Schema.Int, output: Schema.Int, f: (n: number) => n + 1 })
 * const double = Tool.fromFunction({ name: "double", input: Schema.Int, output: Schema.Int, f: (n: number) => n * 2 })
 * console.log(await Effect.runPromise(RuleSet.evaluate(CategoryLaws.associativity(Instance.tool, inc, double, inc, 1))))
 * // => undefined
 * ```
 *
 * @category laws
 * @since 0.1.0
 */
export const associativity = (I: Instance, f: Tool.Any, g: Tool.Any, h: Tool.Any, a: unknown): Law.IsEq =>
  Law.isEq(
    "(f >> g) >> h",
    Effect.suspend(() => I.andThen(I.andThen(f, g), h).run(a)),
    "f >> (g >> h)",
    Effect.suspend(() => I.andThen(f, I.andThen(g, h)).run(a))
  )

/**
 * `f >> g <-> a => f(a).flatMap(g)`: composition runs `f`, then `g` on its
 * output; a failure of `f` skips `g`.
 *
 * **Example** (A swapped composition is caught)
 * ```ts
 * import { Tool } from "@ugent/core"
 * import { CategoryLaws, Instance, RuleSet } from "@ugent/laws"
 * import { Effect, Schema } from "effect"
 * const inc = Tool.fromFunction({ name: "inc", input: Schema.Int, output: Schema.Int, f: (n: number) => n + 1 })
 * const double = Tool.fromFunction({ name: "double", input: Schema.Int, output: Schema.Int, f: (n: number) => n * 2 })
 * // A composition that runs its arguments in the opposite order breaks this law.
 * const swapped = { ...Instance.tool, andThen: (f: Tool.Any, g: Tool.Any) => Tool.andThen(g, f) }
 * const diff = await Effect.runPromise(RuleSet.evaluate(CategoryLaws.composition(swapped, inc, double, 1)))
 * console.log(diff?.problem)
 * // => the exits differ
 * ```
 *
 * @category laws
 * @since 0.1.0
 */
export const composition = (I: Instance, f: Tool.Any, g: Tool.Any, a: unknown): Law.IsEq =>
  Law.isEq(
    "f >> g",
    Effect.suspend(() => I.andThen(f, g).run(a)),
    "f(a).flatMap(g)",
    Effect.suspend(() => Effect.flatMap(f.run(a), (b) => g.run(b)))
  )

/**
 * `id(a) <-> a`.
 *
 * **Example** (The identity returns its input)
 * ```ts
 * import { Tool } from "@ugent/core"
 * import { CategoryLaws, Instance, RuleSet } from "@ugent/laws"
 * import { Effect, Schema } from "effect"
 * const inc = Tool.fromFunction({ name: "inc", input: Schema.Int, output: Schema.Int, f: (n: number) => n + 1 })
 * const double = Tool.fromFunction({ name: "double", input: Schema.Int, output: Schema.Int, f: (n: number) => n * 2 })
 * console.log(await Effect.runPromise(RuleSet.evaluate(CategoryLaws.identity(Instance.tool, Schema.Int, 5))))
 * // => undefined
 * ```
 *
 * @category laws
 * @since 0.1.0
 */
export const identity = (I: Instance, schema: Tool.AnySchema, a: unknown): Law.IsEq =>
  Law.isEq(
    "id(a)",
    Effect.suspend(() => I.identity(schema).run(a)),
    "a",
    Effect.succeed(a)
  )

/**
 * `pipeline(f1, …, fn) <-> f1 >> … >> fn`.
 *
 * **Example** (A pipeline is the fold of its steps)
 * ```ts
 * import { Tool } from "@ugent/core"
 * import { CategoryLaws, Instance, RuleSet } from "@ugent/laws"
 * import { Effect, Schema } from "effect"
 * const inc = Tool.fromFunction({ name: "inc", input: Schema.Int, output: Schema.Int, f: (n: number) => n + 1 })
 * const double = Tool.fromFunction({ name: "double", input: Schema.Int, output: Schema.Int, f: (n: number) => n * 2 })
 * console.log(await Effect.runPromise(RuleSet.evaluate(CategoryLaws.pipelineIsFold(Instance.tool, [inc, double, inc], 1))))
 * // => undefined
 * ```
 *
 * @category laws
 * @since 0.1.0
 */
export const pipelineIsFold = (I: Instance, steps: ReadonlyArray<Tool.Any>, a: unknown): Law.IsEq =>
  Law.isEq(
    "pipeline(f1, …, fn)",
    Effect.suspend(() => I.pipeline(steps).run(a)),
    "f1 >> … >> fn",
    Effect.suspend(() => steps.reduce((acc, s) => I.andThen(acc, s)).run(a))
  )
