/**
 * The laws of a wrapper, a function `Tool -> Tool` (Traced, Cached, Retry,
 * a gate…), stated as pairs of sides or properties:
 *
 * - transparency: `wrap(t) <-> t` for a tool that succeeds;
 * - idempotence: `wrap(wrap(t)) <-> wrap(t)`;
 * - an allow-all gate is the identity: under its allowing services, `wrap(t) <-> t`;
 * - a deny-all gate fails for every input, and runs none of `t`'s effects.
 *
 * `WrapperTests` pairs them with generated tools and inputs.
 *
 * @since 0.1.0
 */
import type { Tool } from "@ugent/core"
import { Cause, Effect, Exit, Layer } from "effect"
import { show } from "./internal/show.ts"
import * as Law from "./Law.ts"

/**
 * A wrapper under test.
 *
 * @category models
 * @since 0.1.0
 */
export type Wrap = (tool: Tool.Any) => Tool.Any

const succeeded = (o: { readonly exit: Exit.Exit<unknown, unknown> }) => Exit.isSuccess(o.exit)

/**
 * Transparency: for a tool that succeeds on `a`, the wrapped tool gives the
 * same result with the same effects. With `failures: true` it must also fail
 * as the bare tool fails.
 *
 * **Example** (A transparent logging wrapper)
 * ```ts
 * import { Tool } from "@ugent/core"
 * import { RuleSet, WrapperLaws } from "@ugent/laws"
 * import { Effect } from "effect"
 * const inc = Tool.fromFunction({ name: "inc", f: (n: number) => n + 1 })
 * const logged = (t: Tool.Any) => Tool.wrap(t, (run) => (a) => Effect.tap(run(a), () => Effect.void))
 * const diff = await Effect.runPromise(RuleSet.evaluate(WrapperLaws.transparency(logged, inc, 1)))
 * console.log(diff)
 * // => undefined
 * ```
 *
 * @category laws
 * @since 0.1.0
 */
export const transparency = (
  wrap: Wrap,
  tool: Tool.Any,
  a: unknown,
  options?: { readonly failures?: boolean }
): Law.IsEq =>
  Law.isEq(
    `wrap(${tool.name})`,
    Effect.suspend(() => wrap(tool).run(a)),
    tool.name,
    Effect.suspend(() => tool.run(a)),
    options?.failures === true ? undefined : succeeded
  )

/**
 * Idempotence: wrapping twice is wrapping once.
 *
 * **Example** (Renaming twice is renaming once)
 * ```ts
 * import { Tool } from "@ugent/core"
 * import { RuleSet, WrapperLaws } from "@ugent/laws"
 * import { Effect } from "effect"
 * const inc = Tool.fromFunction({ name: "inc", f: (n: number) => n + 1 })
 * const renamed = (t: Tool.Any) => Tool.withName(t, "renamed")
 * console.log(await Effect.runPromise(RuleSet.evaluate(WrapperLaws.idempotence(renamed, inc, 1))))
 * // => undefined
 * ```
 *
 * @category laws
 * @since 0.1.0
 */
export const idempotence = (wrap: Wrap, tool: Tool.Any, a: unknown): Law.IsEq =>
  Law.isEq(
    `wrap(wrap(${tool.name}))`,
    Effect.suspend(() => wrap(wrap(tool)).run(a)),
    `wrap(${tool.name})`,
    Effect.suspend(() => wrap(tool).run(a))
  )

/**
 * An allow-all gate is the identity: under the services `allow` provides,
 * `wrap(t) <-> t` (failures included).
 *
 * **Example** (Trust.gate under an L3 observer)
 * ```ts
 * import { Observer, Tool, Trust } from "@ugent/core"
 * import { RuleSet, WrapperLaws } from "@ugent/laws"
 * import { Effect, Schema } from "effect"
 * const note = Tool.make({ name: "note.add", description: "Adds a note.", trust: 1, input: Schema.String, output: Schema.String, run: (s) => Effect.succeed(`noted: ${s}`) })
 * const admin = Observer.layer({ id: "admin", trust: 3 })
 * console.log(await Effect.runPromise(RuleSet.evaluate(WrapperLaws.allowAll(Trust.gate, admin, note, "hi"))))
 * // => undefined
 * ```
 *
 * @category laws
 * @since 0.1.0
 */
export const allowAll = (wrap: Wrap, allow: Layer.Layer<never, unknown, never>, tool: Tool.Any, a: unknown): Law.IsEq =>
  Law.isEq(
    `wrap(${tool.name}) allowing all`,
    Effect.suspend(() => wrap(tool).run(a)).pipe(Effect.provide(Layer.fresh(allow))),
    tool.name,
    Effect.suspend(() => tool.run(a))
  )

/**
 * A deny-all gate fails for every input, with a failure `denied` accepts, and
 * none of the tool's effects happen (its effect log stays empty).
 *
 * **Example** (Trust.gate under an L0 observer)
 * ```ts
 * import { Observer, Tool, Trust } from "@ugent/core"
 * import { RuleSet, WrapperLaws } from "@ugent/laws"
 * import { Effect, Predicate, Schema } from "effect"
 * const note = Tool.make({ name: "note.add", description: "Adds a note.", trust: 1, input: Schema.String, output: Schema.String, run: (s) => Effect.succeed(`noted: ${s}`) })
 * const guest = Observer.layer({ id: "guest", trust: 0 })
 * const law = WrapperLaws.denyAll(Trust.gate, guest, note, "hi", (e) => Predicate.isTagged(e, "TrustDenied"))
 * console.log(await Effect.runPromise(RuleSet.evaluate(law)))
 * // => undefined
 * ```
 *
 * @category laws
 * @since 0.1.0
 */
export const denyAll = (
  wrap: Wrap,
  deny: Layer.Layer<never, unknown, never>,
  tool: Tool.Any,
  a: unknown,
  denied: (error: unknown) => boolean
): Law.Holds =>
  Law.holds(
    `wrap(${tool.name}) denying all`,
    Effect.suspend(() => wrap(tool).run(a)).pipe(Effect.provide(Layer.fresh(deny))),
    "a typed failure that the gate's `denied` accepts, and no effect of the tool",
    (o) => {
      if (Exit.isSuccess(o.exit)) return `it succeeded with ${show(o.exit.value)}`
      const failure = o.exit.cause.reasons.find(Cause.isFailReason)
      if (failure === undefined) return `it did not fail with a typed failure: ${show(o.exit)}`
      if (!denied(failure.error)) return `its failure ${show(failure.error)} is not a denial`
      if (o.log.length > 0) return `the tool ran anyway: its effects ${o.log.map((e) => e.label).join(", ")} happened`
      return undefined
    }
  )
