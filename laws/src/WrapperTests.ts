/**
 * The rule sets of wrappers: {@link wrapper} turns the laws of `WrapperLaws`
 * into named laws over generated tools (every family, so effects, sleeps and
 * typed failures all pass through the wrapper) and generated inputs, plus the
 * user's own tool when one is given. `Laws.wrapper` registers them with vitest.
 *
 * @since 0.1.0
 */
import type { Tool } from "@ugent/core"
import { Arbitrary, type Layer, Predicate, Schema } from "effect"
import * as Law from "./Law.ts"
import * as RuleSet from "./RuleSet.ts"
import * as ToolArbitrary from "./ToolArbitrary.ts"
import * as WrapperLaws from "./WrapperLaws.ts"

/**
 * The input generated tools take when none is given.
 *
 * **Example** (The default input)
 * ```ts
 * import { WrapperTests } from "@ugent/laws"
 * import { Schema } from "effect"
 * console.log(Schema.decodeUnknownSync(WrapperTests.defaultInput)({ text: "hi", n: 1 }))
 * // => { text: 'hi', n: 1 }
 * ```
 *
 * @category constants
 * @since 0.1.0
 */
export const defaultInput = Schema.Struct({ text: Schema.String, n: Schema.Int })

/**
 * What to check about a wrapper.
 *
 * @category models
 * @since 0.1.0
 */
export interface WrapperOptions<A = unknown> {
  /** The wrapper: `(tool) => Retry.make(tool, policy)`. Called afresh for every case, so wrapper state never leaks between cases. */
  readonly wrap: WrapperLaws.Wrap
  /** The inputs of generated tools: a schema or an `Arbitrary`; {@link defaultInput} by default, or the input of `tool`. */
  readonly input?: ToolArbitrary.Input<A> | undefined
  /** A tool of yours to check the wrapper on too, besides the generated ones. */
  readonly tool?: Tool.Any | undefined
  /** Which generated tools: families and trust level (a gate needs tools above L0 to deny). */
  readonly tools?: ToolArbitrary.Options | undefined
  /** Also require transparency when the bare tool fails (off by default: Retry may retry). */
  readonly failures?: boolean | undefined
  /** Also check `wrap(wrap(t)) <-> wrap(t)`. */
  readonly idempotent?: boolean | undefined
  /** Services under which the wrapper (a gate) allows everything: checks `wrap(t) <-> t` under them. */
  readonly allow?: Layer.Layer<never, unknown, never> | undefined
  /** Services under which the wrapper (a gate) denies everything: checks that every call fails and no effect happens. */
  readonly deny?: Layer.Layer<never, unknown, never> | undefined
  /** Which failures are denials; by default any typed failure that is not a generated tool's own. */
  readonly denied?: ((error: unknown) => boolean) | undefined
}

const notGenerated = (error: unknown) => !Predicate.isTagged(error, "GeneratedFailure")

/**
 * The wrapper rule set: transparency, and idempotence / allow-all / deny-all
 * when asked for.
 *
 * **Example** (Checking a transparent wrapper outside vitest)
 * ```ts
 * import { Tool } from "@ugent/core"
 * import { Report, RuleSet, WrapperTests } from "@ugent/laws"
 * import { Effect } from "effect"
 * const renamed = WrapperTests.wrapper({ wrap: (t) => Tool.withName(t, `renamed(${t.name})`), idempotent: true })
 * const reports = await Effect.runPromise(RuleSet.check("withName", renamed, { seed: 1, runs: 30 }))
 * console.log(reports.map((r) => `${Report.lawName(r)}: ${r._tag}`))
 * // => [ 'wrapper: transparency: Passed', 'wrapper: idempotence: Passed' ]
 * ```
 *
 * @category rule sets
 * @since 0.1.0
 */
export const wrapper = <A>(options: WrapperOptions<A>): RuleSet.RuleSet => {
  const input: ToolArbitrary.Input<unknown> =
    options.input ??
    (options.tool !== undefined
      ? (options.tool.input as ToolArbitrary.Input<unknown>)
      : (defaultInput as ToolArbitrary.Input<unknown>))
  const { arbitrary } = ToolArbitrary.resolve(input)
  const generated = ToolArbitrary.endo(input, options.tools)
  const cases = (name: string, evidence: (tool: Tool.Any, a: unknown) => Law.Evidence): ReadonlyArray<Law.Any> => {
    const laws: Array<Law.Any> = [
      Law.make(name, Arbitrary.all({ tool: generated, a: arbitrary }), ({ tool, a }) => evidence(tool, a))
    ]
    const own = options.tool
    if (own !== undefined) {
      laws.push(Law.make(`${name} (${own.name})`, Arbitrary.all({ a: arbitrary }), ({ a }) => evidence(own, a)))
    }
    return laws
  }
  const laws: Array<Law.Any> = [
    ...cases("transparency", (tool, a) =>
      WrapperLaws.transparency(options.wrap, tool, a, { failures: options.failures === true })
    )
  ]
  if (options.idempotent === true) {
    laws.push(...cases("idempotence", (tool, a) => WrapperLaws.idempotence(options.wrap, tool, a)))
  }
  const allow = options.allow
  if (allow !== undefined) {
    laws.push(...cases("allow-all is identity", (tool, a) => WrapperLaws.allowAll(options.wrap, allow, tool, a)))
  }
  const deny = options.deny
  if (deny !== undefined) {
    const denied = options.denied ?? notGenerated
    laws.push(...cases("deny-all fails", (tool, a) => WrapperLaws.denyAll(options.wrap, deny, tool, a, denied)))
  }
  return RuleSet.make("wrapper", laws)
}

/**
 * The gate rule set alone: allow-all is the identity and deny-all fails, for
 * a wrapper that is not transparent without its allowing services.
 *
 * **Example** (Trust.gate as a gate)
 * ```ts
 * import { Observer, Trust } from "@ugent/core"
 * import { Report, RuleSet, WrapperTests } from "@ugent/laws"
 * import { Effect } from "effect"
 * const rules = WrapperTests.gate({
 *   wrap: Trust.gate,
 *   tools: { trust: 1 },
 *   allow: Observer.layer({ id: "admin", trust: 3 }),
 *   deny: Observer.layer({ id: "guest", trust: 0 })
 * })
 * const reports = await Effect.runPromise(RuleSet.check("Trust.gate", rules, { seed: 1, runs: 20 }))
 * console.log(reports.map((r) => `${r.law}: ${r._tag}`))
 * // => [ 'allow-all is identity: Passed', 'deny-all fails: Passed' ]
 * ```
 *
 * @category rule sets
 * @since 0.1.0
 */
export const gate = <A>(
  options: Omit<WrapperOptions<A>, "allow" | "deny" | "idempotent" | "failures"> & {
    readonly allow: Layer.Layer<never, unknown, never>
    readonly deny: Layer.Layer<never, unknown, never>
  }
): RuleSet.RuleSet => {
  const all = wrapper({ ...options, allow: options.allow, deny: options.deny })
  return RuleSet.make(
    "gate",
    all.laws.filter((l) => !l.name.startsWith("transparency"))
  )
}
