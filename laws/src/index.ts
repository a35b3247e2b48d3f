/**
 * `@ugent/laws`: the law kit. Laws of the tool algebra (category, arrow,
 * combinators), of wrappers and of read-before-write, stated as pairs of
 * sides, turned into named rule sets over generated inputs and generated
 * tools, and checked with shrinking and replayable seeds: one line per
 * instance in vitest (`Laws.category`, `Laws.arrow`, `Laws.wrapper`,
 * `Laws.causal`), or programmatically (`RuleSet.check`).
 *
 * @since 0.1.0
 */

/** @since 0.1.0 */
export * as ArrowLaws from "./ArrowLaws.ts"
/** @since 0.1.0 */
export * as ArrowTests from "./ArrowTests.ts"
/** @since 0.1.0 */
export * as CategoryLaws from "./CategoryLaws.ts"
/** @since 0.1.0 */
export * as CategoryTests from "./CategoryTests.ts"
/** @since 0.1.0 */
export * as CausalLaws from "./CausalLaws.ts"
/** @since 0.1.0 */
export * as CausalTests from "./CausalTests.ts"
/** @since 0.1.0 */
export * as CombinatorLaws from "./CombinatorLaws.ts"
/** @since 0.1.0 */
export * as CombinatorTests from "./CombinatorTests.ts"
/** @since 0.1.0 */
export * as EffectLog from "./EffectLog.ts"
/** @since 0.1.0 */
export * as Instance from "./Instance.ts"
/** @since 0.1.0 */
export * as Law from "./Law.ts"
/** @since 0.1.0 */
export * as Laws from "./Laws.ts"
/** @since 0.1.0 */
export * as Observation from "./Observation.ts"
/** @since 0.1.0 */
export * as Report from "./Report.ts"
/** @since 0.1.0 */
export * as RuleSet from "./RuleSet.ts"
/** @since 0.1.0 */
export * as ToolArbitrary from "./ToolArbitrary.ts"
/** @since 0.1.0 */
export * as WrapperLaws from "./WrapperLaws.ts"
/** @since 0.1.0 */
export * as WrapperTests from "./WrapperTests.ts"
