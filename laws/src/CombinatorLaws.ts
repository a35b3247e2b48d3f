/**
 * The laws of the tool combinators `all`, `orElse` and `choice`, each a pair
 * of sides:
 *
 * - `all` in collect-all mode runs every branch and reports every failure,
 *   keyed by branch; in fail-fast mode, one branch at a time, it is `fanout`;
 *   concurrently, it fails as `Effect.all` does; over one tool it is a `map`
 *   of that tool;
 * - `orElse(f, g)` is `f` where `f` succeeds and `g` (on the same input, after
 *   `f`'s effects) where `f` fails; an always-failing tool is its left unit;
 *   it is associative;
 * - `choice` dispatches each tagged input to its branch.
 *
 * @since 0.1.0
 */
import { type Tool, ToolError } from "@ugent/core"
import { Effect, Result } from "effect"
import type { Instance } from "./Instance.ts"
import * as Law from "./Law.ts"

const run = (tool: () => Tool.Any, a: unknown) => Effect.suspend(() => tool().run(a))

/**
 * `all({ f, g })` (collect-all) <-> run both concurrently; if any failed,
 * fail with `AllFailed` listing every failure with its key, else succeed with
 * both outputs.
 *
 * **Example** (Two failing branches, both reported)
 * ```ts
 * import { Tool } from "@ugent/core"
 * import { CombinatorLaws, Instance, RuleSet, ToolArbitrary } from "@ugent/laws"
 * import { Effect, Schema } from "effect"
 * const inc = Tool.fromFunction({ name: "inc", input: Schema.Int, output: Schema.Int, f: (n: number) => n + 1 })
 * const fails = ToolArbitrary.fromSpec({ _tag: "failWhen", modulus: 1, label: "a" }, Schema.Int)
 * console.log(await Effect.runPromise(RuleSet.evaluate(CombinatorLaws.allCollectsEveryFailure(Instance.tool, fails, fails, 1))))
 * // => undefined
 * ```
 *
 * @category laws
 * @since 0.1.0
 */
export const allCollectsEveryFailure = (I: Instance, f: Tool.Any, g: Tool.Any, a: unknown): Law.IsEq =>
  Law.isEq(
    "all({ f, g }) collect-all",
    run(() => I.all({ f, g }, { mode: "collect-all" }), a),
    "both run, every failure collected",
    Effect.suspend(() =>
      Effect.flatMap(
        Effect.all([Effect.result(f.run(a)), Effect.result(g.run(a))], { concurrency: "unbounded" }),
        ([rf, rg]) => {
          const failures: Array<{ key: string; error: unknown }> = []
          if (Result.isFailure(rf)) failures.push({ key: "f", error: rf.failure })
          if (Result.isFailure(rg)) failures.push({ key: "g", error: rg.failure })
          return Result.isSuccess(rf) && Result.isSuccess(rg)
            ? Effect.succeed({ f: rf.success, g: rg.success })
            : Effect.fail(ToolError.allFailed(failures))
        }
      )
    )
  )

/**
 * `all([f, g])` in fail-fast mode, one branch at a time <-> `f &&& g`: the
 * first failure stops the rest.
 *
 * **Example** (Fail-fast, one at a time)
 * ```ts
 * import { Tool } from "@ugent/core"
 * import { CombinatorLaws, Instance, RuleSet, ToolArbitrary } from "@ugent/laws"
 * import { Effect, Schema } from "effect"
 * const inc = Tool.fromFunction({ name: "inc", input: Schema.Int, output: Schema.Int, f: (n: number) => n + 1 })
 * const fails = ToolArbitrary.fromSpec({ _tag: "failWhen", modulus: 1, label: "a" }, Schema.Int)
 * console.log(await Effect.runPromise(RuleSet.evaluate(CombinatorLaws.allSequentialFailFastIsFanout(Instance.tool, inc, fails, 1))))
 * // => undefined
 * ```
 *
 * @category laws
 * @since 0.1.0
 */
export const allSequentialFailFastIsFanout = (I: Instance, f: Tool.Any, g: Tool.Any, a: unknown): Law.IsEq =>
  Law.isEq(
    "all([f, g]) fail-fast, one at a time",
    run(() => I.all([f, g], { mode: "fail-fast", concurrency: 1 }), a),
    "f &&& g",
    run(() => I.fanout(f, g), a)
  )

/**
 * `all([f, g])` in fail-fast mode <-> `Effect.all` of both runs, concurrently:
 * the first failure interrupts the other branch.
 *
 * **Example** (Fail-fast, concurrently)
 * ```ts
 * import { Tool } from "@ugent/core"
 * import { CombinatorLaws, Instance, RuleSet, ToolArbitrary } from "@ugent/laws"
 * import { Effect, Schema } from "effect"
 * const inc = Tool.fromFunction({ name: "inc", input: Schema.Int, output: Schema.Int, f: (n: number) => n + 1 })
 * const fails = ToolArbitrary.fromSpec({ _tag: "failWhen", modulus: 1, label: "a" }, Schema.Int)
 * console.log(await Effect.runPromise(RuleSet.evaluate(CombinatorLaws.allFailFastIsEffectAll(Instance.tool, inc, fails, 1))))
 * // => undefined
 * ```
 *
 * @category laws
 * @since 0.1.0
 */
export const allFailFastIsEffectAll = (I: Instance, f: Tool.Any, g: Tool.Any, a: unknown): Law.IsEq =>
  Law.isEq(
    "all([f, g]) fail-fast",
    run(() => I.all([f, g], { mode: "fail-fast" }), a),
    "Effect.all([f(a), g(a)]) concurrently",
    Effect.suspend(() => Effect.all([f.run(a), g.run(a)], { concurrency: "unbounded" }))
  )

/**
 * `all({ k: f })` <-> `map(f, b => ({ k: b }))`, in fail-fast mode; in
 * collect-all mode a failure is reported as `AllFailed([{ key: "k", error }])`.
 *
 * **Example** (all over one failing tool, collect-all)
 * ```ts
 * import { Tool } from "@ugent/core"
 * import { CombinatorLaws, Instance, RuleSet, ToolArbitrary } from "@ugent/laws"
 * import { Effect, Schema } from "effect"
 * const inc = Tool.fromFunction({ name: "inc", input: Schema.Int, output: Schema.Int, f: (n: number) => n + 1 })
 * const fails = ToolArbitrary.fromSpec({ _tag: "failWhen", modulus: 1, label: "a" }, Schema.Int)
 * console.log(await Effect.runPromise(RuleSet.evaluate(CombinatorLaws.allOfOneIsMap(Instance.tool, fails, 1, "collect-all"))))
 * // => undefined
 * ```
 *
 * @category laws
 * @since 0.1.0
 */
export const allOfOneIsMap = (I: Instance, f: Tool.Any, a: unknown, mode: "fail-fast" | "collect-all"): Law.IsEq =>
  Law.isEq(
    `all({ k: f }) ${mode}`,
    run(() => I.all({ k: f }, { mode }), a),
    mode === "fail-fast" ? "map(f, b => ({ k: b }))" : "map(f, b => ({ k: b })), failure as AllFailed",
    Effect.suspend(() => {
      const mapped = I.map(f, (b) => ({ k: b })).run(a)
      return mode === "fail-fast"
        ? mapped
        : Effect.mapError(mapped, (error) => ToolError.allFailed([{ key: "k", error }]))
    })
  )

/**
 * `orElse(f, g)` <-> `f(a)`, and where it fails with a typed failure, `g(a)`
 * (after `f`'s effects). Defects are not recovered.
 *
 * **Example** (A fallback after a failure)
 * ```ts
 * import { Tool } from "@ugent/core"
 * import { CombinatorLaws, Instance, RuleSet, ToolArbitrary } from "@ugent/laws"
 * import { Effect, Schema } from "effect"
 * const inc = Tool.fromFunction({ name: "inc", input: Schema.Int, output: Schema.Int, f: (n: number) => n + 1 })
 * const fails = ToolArbitrary.fromSpec({ _tag: "failWhen", modulus: 1, label: "a" }, Schema.Int)
 * console.log(await Effect.runPromise(RuleSet.evaluate(CombinatorLaws.orElseIsFallback(Instance.tool, fails, inc, 1))))
 * // => undefined
 * ```
 *
 * @category laws
 * @since 0.1.0
 */
export const orElseIsFallback = (I: Instance, f: Tool.Any, g: Tool.Any, a: unknown): Law.IsEq =>
  Law.isEq(
    "orElse(f, g)",
    run(() => I.orElse(f, g), a),
    "f(a), else g(a)",
    Effect.suspend(() => Effect.catch(f.run(a), () => g.run(a)))
  )

/**
 * `orElse(f, g)` <-> `f` for a tool `f` that succeeds.
 *
 * **Example** (A tool that succeeds needs no fallback)
 * ```ts
 * import { Tool } from "@ugent/core"
 * import { CombinatorLaws, Instance, RuleSet, ToolArbitrary } from "@ugent/laws"
 * import { Effect, Schema } from "effect"
 * const inc = Tool.fromFunction({ name: "inc", input: Schema.Int, output: Schema.Int, f: (n: number) => n + 1 })
 * const fails = ToolArbitrary.fromSpec({ _tag: "failWhen", modulus: 1, label: "a" }, Schema.Int)
 * console.log(await Effect.runPromise(RuleSet.evaluate(CombinatorLaws.orElseOfSuccess(Instance.tool, inc, fails, 1))))
 * // => undefined
 * ```
 *
 * @category laws
 * @since 0.1.0
 */
export const orElseOfSuccess = (I: Instance, f: Tool.Any, g: Tool.Any, a: unknown): Law.IsEq =>
  Law.isEq(
    "orElse(f, g)",
    run(() => I.orElse(f, g), a),
    "f",
    run(() => f, a),
    (rhs) => rhs.exit._tag === "Success"
  )

/**
 * `orElse(fail, g)` <-> `g` for a tool that always fails with a typed
 * failure and has no effects.
 *
 * **Example** (An always-failing tool is the left unit)
 * ```ts
 * import { Tool } from "@ugent/core"
 * import { CombinatorLaws, Instance, RuleSet, ToolArbitrary } from "@ugent/laws"
 * import { Effect, Schema } from "effect"
 * const inc = Tool.fromFunction({ name: "inc", input: Schema.Int, output: Schema.Int, f: (n: number) => n + 1 })
 * const fails = ToolArbitrary.fromSpec({ _tag: "failWhen", modulus: 1, label: "a" }, Schema.Int)
 * console.log(await Effect.runPromise(RuleSet.evaluate(CombinatorLaws.orElseOfFailure(Instance.tool, fails, inc, 1))))
 * // => undefined
 * ```
 *
 * @category laws
 * @since 0.1.0
 */
export const orElseOfFailure = (I: Instance, fail: Tool.Any, g: Tool.Any, a: unknown): Law.IsEq =>
  Law.isEq(
    "orElse(fail, g)",
    run(() => I.orElse(fail, g), a),
    "g",
    run(() => g, a)
  )

/**
 * `orElse(orElse(f, g), h)` <-> `orElse(f, orElse(g, h))`.
 *
 * **Example** (Associativity of orElse)
 * ```ts
 * import { Tool } from "@ugent/core"
 * import { CombinatorLaws, Instance, RuleSet, ToolArbitrary } from "@ugent/laws"
 * import { Effect, Schema } from "effect"
 * const inc = Tool.fromFunction({ name: "inc", input: Schema.Int, output: Schema.Int, f: (n: number) => n + 1 })
 * const fails = ToolArbitrary.fromSpec({ _tag: "failWhen", modulus: 1, label: "a" }, Schema.Int)
 * console.log(await Effect.runPromise(RuleSet.evaluate(CombinatorLaws.orElseAssociativity(Instance.tool, fails, fails, inc, 1))))
 * // => undefined
 * ```
 *
 * @category laws
 * @since 0.1.0
 */
export const orElseAssociativity = (I: Instance, f: Tool.Any, g: Tool.Any, h: Tool.Any, a: unknown): Law.IsEq =>
  Law.isEq(
    "orElse(orElse(f, g), h)",
    run(() => I.orElse(I.orElse(f, g), h), a),
    "orElse(f, orElse(g, h))",
    run(() => I.orElse(f, I.orElse(g, h)), a)
  )

/**
 * `choice({ A: f, B: g })` on an input tagged `A` <-> `f`, on one tagged `B` <-> `g`.
 *
 * **Example** (Dispatching an input tagged A)
 * ```ts
 * import { Tool } from "@ugent/core"
 * import { CombinatorLaws, Instance, RuleSet, ToolArbitrary } from "@ugent/laws"
 * import { Effect, Schema } from "effect"
 * const inc = Tool.fromFunction({ name: "inc", input: Schema.Int, output: Schema.Int, f: (n: number) => n + 1 })
 * const fails = ToolArbitrary.fromSpec({ _tag: "failWhen", modulus: 1, label: "a" }, Schema.Int)
 * const branches = { A: Tool.contramap(inc, (x: { readonly n: number }) => x.n), B: fails }
 * console.log(await Effect.runPromise(RuleSet.evaluate(CombinatorLaws.choiceDispatches(Instance.tool, branches, { _tag: "A", n: 1 } as { readonly _tag: string }))))
 * // => undefined
 * ```
 *
 * @category laws
 * @since 0.1.0
 */
export const choiceDispatches = (
  I: Instance,
  branches: Readonly<Record<string, Tool.Any>>,
  input: { readonly _tag: string }
): Law.IsEq =>
  Law.isEq(
    `choice(…) on ${input._tag}`,
    run(() => I.choice(branches), input),
    `branch ${input._tag}`,
    Effect.suspend(() => branches[input._tag]!.run(input))
  )
