/**
 * Generators of tools. Laws about combinators must hold for every tool, so the
 * kit generates tools as well as inputs: endomorphisms `A -> A` over any
 * schema, in families that a combinator can get wrong in different ways:
 * pure ones (`pass`, `constant`, `table`), effectful ones that append to the
 * {@link EffectLog} (`log`) or sleep under the test clock first (`sleep`), so
 * the order and timing of effects is observable, and failing ones
 * (`failWhen`: a typed {@link GeneratedFailure} for some inputs).
 *
 * A generated tool comes from a {@link Spec}, a plain value that Effect's
 * `Arbitrary` shrinks like any other, so a falsified law reports the simplest
 * tools that still break it. Tools are real: built with `Tool.fromFunction`
 * and `Tool.make`.
 *
 * @since 0.1.0
 */
import { Tool, type Trust } from "@ugent/core"
import { Arbitrary, Effect, Schema } from "effect"
import * as EffectLog from "./EffectLog.ts"
import { NamedFunction, show, stableHash } from "./internal/show.ts"

export {
  /**
   * A pure function with a name, so that a report can say which one was generated.
   *
   * @category models
   * @since 0.1.0
   */
  NamedFunction
}

/**
 * Where inputs come from: a schema (values generated with `Arbitrary.schema`,
 * and the schema becomes the generated tools' input and output schema), or an
 * `Arbitrary` (the tools' schemas are then `Schema.Unknown`).
 *
 * @category models
 * @since 0.1.0
 */
export type Input<A> = Schema.Codec<A, unknown, never, never> | Arbitrary.Arbitrary<A>

/**
 * An {@link Input} with both of its parts.
 *
 * @category models
 * @since 0.1.0
 */
export interface Resolved<A> {
  readonly schema: Schema.Codec<A, unknown, never, never>
  readonly arbitrary: Arbitrary.Arbitrary<A>
}

/**
 * Splits an {@link Input} into a schema and an arbitrary. Deriving an
 * arbitrary from a schema throws when the schema cannot be generated (a
 * `Schema.declare` without an arbitrary annotation): give an `Arbitrary` then.
 *
 * **Example** (A schema or an Arbitrary)
 * ```ts
 * import { ToolArbitrary } from "@ugent/laws"
 * import { Arbitrary, Schema } from "effect"
 * console.log(ToolArbitrary.resolve(Schema.Int).schema === Schema.Int, ToolArbitrary.resolve(Arbitrary.Constant(1)).schema === Schema.Unknown)
 * // => true true
 * ```
 *
 * @category constructors
 * @since 0.1.0
 */
export const resolve = <A>(input: Input<A>): Resolved<A> => {
  if (Arbitrary.isArbitrary(input)) {
    // Schema.Unknown decodes and encodes every value, so it describes any A.
    return {
      schema: Schema.Unknown as Schema.Codec<unknown, unknown, never, never> as Schema.Codec<A, unknown, never, never>,
      arbitrary: input as Arbitrary.Arbitrary<A>
    }
  }
  return { schema: input, arbitrary: Arbitrary.schema(input) as Arbitrary.Arbitrary<A> }
}

/**
 * The typed failure of generated failing tools: which tool failed, and the
 * hash of the input it failed on.
 *
 * **Example** (The failure of a generated tool)
 * ```ts
 * import { ToolArbitrary } from "@ugent/laws"
 * const e = new ToolArbitrary.GeneratedFailure({ tool: "failWhen(%2)#a", input: 42 })
 * console.log(e._tag, e.input)
 * // => GeneratedFailure 42
 * ```
 *
 * @category errors
 * @since 0.1.0
 */
export class GeneratedFailure extends Schema.TaggedError<GeneratedFailure>()("GeneratedFailure", {
  tool: Schema.String,
  input: Schema.Number
}) {
  override get message(): string {
    return `${this.tool} failed on purpose for input #${this.input}: a generated failing tool. If a law reports it, the combinator under test mishandled a typed failure.`
  }
}

/**
 * The families of generated tools.
 *
 * - `pass`: returns its input (a real step, not `Tool.identity`);
 * - `constant`: returns a generated value;
 * - `table`: maps each input to one of a few generated values, by its hash;
 * - `log`: appends a label to the {@link EffectLog}, returns its input;
 * - `sleep`: sleeps (virtual time), then logs, then returns its input;
 * - `failWhen`: fails with {@link GeneratedFailure} when the input's hash is
 *   divisible by a generated modulus (1: always), else returns its input.
 *
 * @category models
 * @since 0.1.0
 */
export type Family = "pass" | "constant" | "table" | "log" | "sleep" | "failWhen"

/**
 * Every family, simplest first (shrinking moves towards the first).
 *
 * **Example** (Every family)
 * ```ts
 * import { ToolArbitrary } from "@ugent/laws"
 * console.log(ToolArbitrary.families)
 * // => [ 'pass', 'constant', 'table', 'log', 'sleep', 'failWhen' ]
 * ```
 *
 * @category constants
 * @since 0.1.0
 */
export const families: ReadonlyArray<Family> = ["pass", "constant", "table", "log", "sleep", "failWhen"]

/**
 * The families whose tools never fail.
 *
 * **Example** (No failing family)
 * ```ts
 * import { ToolArbitrary } from "@ugent/laws"
 * console.log(ToolArbitrary.totalFamilies.includes("failWhen"))
 * // => false
 * ```
 *
 * @category constants
 * @since 0.1.0
 */
export const totalFamilies: ReadonlyArray<Family> = ["pass", "constant", "table", "log", "sleep"]

/**
 * The families whose tools are pure functions.
 *
 * **Example** (The pure families)
 * ```ts
 * import { ToolArbitrary } from "@ugent/laws"
 * console.log(ToolArbitrary.pureFamilies)
 * // => [ 'pass', 'constant', 'table' ]
 * ```
 *
 * @category constants
 * @since 0.1.0
 */
export const pureFamilies: ReadonlyArray<Family> = ["pass", "constant", "table"]

/**
 * The description of one generated tool.
 *
 * @category models
 * @since 0.1.0
 */
export type Spec<A> =
  | { readonly _tag: "pass" }
  | { readonly _tag: "constant"; readonly value: A }
  | { readonly _tag: "table"; readonly values: ReadonlyArray<A> }
  | { readonly _tag: "log"; readonly label: string }
  | { readonly _tag: "sleep"; readonly millis: number; readonly label: string }
  | { readonly _tag: "failWhen"; readonly modulus: number; readonly label: string }

/**
 * A generated endomorphism.
 *
 * @category models
 * @since 0.1.0
 */
export type Generated<A> = Tool.Tool<A, A, GeneratedFailure, EffectLog.EffectLog | Trust.Capability>

/**
 * @category models
 * @since 0.1.0
 */
export interface Options {
  /** The families to draw from, in shrinking order (simplest first); {@link families} by default. A family listed twice is drawn twice as often. */
  readonly families?: ReadonlyArray<Family> | undefined
  /** The trust level of the generated tools (0 by default); above 0 every tool is built with `Tool.make`. */
  readonly trust?: Trust.TrustLevel | undefined
}

const labels = Arbitrary.schema(Schema.Literals(["a", "b", "c", "d", "e", "f", "g", "h"]))
const millis = Arbitrary.schema(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 1000 })))
const moduli = Arbitrary.schema(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 4 })))

/**
 * Generates specs of tools over values of `A`.
 *
 * **Example** (Specs of effectful tools only)
 * ```ts
 * import { ToolArbitrary } from "@ugent/laws"
 * import { Arbitrary, Effect, Schema } from "effect"
 * const specs = Effect.runSync(Arbitrary.sampleEffect(ToolArbitrary.spec(Arbitrary.schema(Schema.Int), { families: ["log", "sleep"] }), { count: 20, seed: 1 }))
 * console.log(specs.every((s) => s._tag === "log" || s._tag === "sleep"))
 * // => true
 * ```
 *
 * @category generators
 * @since 0.1.0
 */
export const spec = <A>(values: Arbitrary.Arbitrary<A>, options?: Options): Arbitrary.Arbitrary<Spec<A>> => {
  const chosen = options?.families ?? families
  if (chosen.length === 0) throw new Error("ToolArbitrary.spec: no family to generate from")
  // An index rather than a literal, so that a family listed twice is drawn twice as often; it shrinks towards the first.
  const index = Arbitrary.schema(Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: chosen.length - 1 })))
  return Arbitrary.flatMap(index, (i): Arbitrary.Arbitrary<Spec<A>> => {
    const tag = chosen[i]!
    switch (tag) {
      case "pass":
        return Arbitrary.Constant({ _tag: "pass" })
      case "constant":
        return Arbitrary.map(values, (value) => ({ _tag: "constant", value }))
      case "table":
        return Arbitrary.map(Arbitrary.array(values, { minLength: 1, maxLength: 4 }), (vs) => ({
          _tag: "table",
          values: vs
        }))
      case "log":
        return Arbitrary.map(labels, (label) => ({ _tag: "log", label }))
      case "sleep":
        return Arbitrary.map(Arbitrary.all({ millis, label: labels }), ({ millis, label }) => ({
          _tag: "sleep",
          millis,
          label
        }))
      case "failWhen":
        return Arbitrary.map(Arbitrary.all({ modulus: moduli, label: labels }), ({ modulus, label }) => ({
          _tag: "failWhen",
          modulus,
          label
        }))
    }
  })
}

/**
 * The name a spec's tool carries: `"const(1)"`, `"sleep(20ms)>log(a)"`, …
 *
 * **Example** (Names of generated tools)
 * ```ts
 * import { ToolArbitrary } from "@ugent/laws"
 * console.log(ToolArbitrary.nameOf({ _tag: "constant", value: { n: 1 } }), ToolArbitrary.nameOf({ _tag: "failWhen", modulus: 2, label: "b" }))
 * // => const({ n: 1 }) failWhen(%2)#b
 * ```
 *
 * @category getters
 * @since 0.1.0
 */
export const nameOf = <A>(self: Spec<A>): string => {
  switch (self._tag) {
    case "pass":
      return "pass"
    case "constant":
      return `const(${show(self.value)})`
    case "table":
      return `table(${self.values.map(show).join(" | ")})`
    case "log":
      return `log(${self.label})`
    case "sleep":
      return `sleep(${self.millis}ms)>log(${self.label})`
    case "failWhen":
      return `failWhen(%${self.modulus})#${self.label}`
  }
}

/** The pure function of a pure spec. */
const pureOf = <A>(self: Spec<A>): ((a: A) => A) | undefined => {
  switch (self._tag) {
    case "pass":
      return (a) => a
    case "constant":
      return () => self.value
    case "table": {
      const values = self.values
      return (a) => values[stableHash(a) % values.length]!
    }
    default:
      return undefined
  }
}

/**
 * Builds the tool a spec describes, over `schema`.
 *
 * **Example** (A generated effectful tool)
 * ```ts
 * import { EffectLog, Observation, ToolArbitrary } from "@ugent/laws"
 * import { Effect, Schema } from "effect"
 * const tool = ToolArbitrary.fromSpec({ _tag: "sleep", millis: 5, label: "a" }, Schema.Int)
 * console.log(tool.name, Observation.format(await Effect.runPromise(Observation.run(tool.run(1)))))
 * // => sleep(5ms)>log(a) Success(1); log [a@5ms]
 * ```
 *
 * @category constructors
 * @since 0.1.0
 */
export const fromSpec = <A>(
  self: Spec<A>,
  schema: Schema.Codec<A, unknown, never, never>,
  options?: Pick<Options, "trust">
): Generated<A> => {
  const name = nameOf(self)
  const trust = options?.trust ?? 0
  const pure = pureOf(self)
  if (pure !== undefined && trust === 0) {
    return Tool.fromFunction({
      name,
      description: `A generated pure tool: ${name}.`,
      input: schema,
      output: schema,
      f: pure
    })
  }
  const run = (a: A): Effect.Effect<A, GeneratedFailure, EffectLog.EffectLog> => {
    switch (self._tag) {
      case "log":
        return Effect.as(EffectLog.append(self.label), a)
      case "sleep":
        return Effect.sleep(self.millis).pipe(Effect.andThen(EffectLog.append(self.label)), Effect.as(a))
      case "failWhen": {
        const h = stableHash(a)
        return h % self.modulus === 0 ? Effect.fail(new GeneratedFailure({ tool: name, input: h })) : Effect.succeed(a)
      }
      default:
        return Effect.sync(() => pure!(a))
    }
  }
  return Tool.make({
    name,
    description: `A generated tool: ${name}.`,
    input: schema,
    output: schema,
    failure: GeneratedFailure,
    trust,
    effects: { idempotent: self._tag !== "log" && self._tag !== "sleep" },
    run
  })
}

/**
 * Generates endomorphisms `A -> A` over an input: the values of `constant`
 * and `table` tools come from the input's generator.
 *
 * **Example** (Sampling generated tools)
 * ```ts
 * import { ToolArbitrary } from "@ugent/laws"
 * import { Arbitrary, Effect, Schema } from "effect"
 * const tools = Effect.runSync(Arbitrary.sampleEffect(ToolArbitrary.endo(Schema.Int), { count: 50, seed: 3 }))
 * console.log(tools.every((t) => t.input === Schema.Int))
 * // => true
 * ```
 *
 * @category generators
 * @since 0.1.0
 */
export const endo = <A>(input: Input<A>, options?: Options): Arbitrary.Arbitrary<Generated<A>> => {
  const { arbitrary, schema } = resolve(input)
  return Arbitrary.map(spec(arbitrary, options), (s) => fromSpec(s, schema, options))
}

/**
 * Generates named pure functions `A -> A` (the `pass`, `constant` and `table`
 * families), for the `arr` of the arrow laws.
 *
 * **Example** (A generated pure function)
 * ```ts
 * import { ToolArbitrary } from "@ugent/laws"
 * import { Arbitrary, Effect, Schema } from "effect"
 * const [fn] = Effect.runSync(Arbitrary.sampleEffect(ToolArbitrary.pureFunction(Arbitrary.schema(Schema.Int)), { count: 1, seed: 7 }))
 * console.log(typeof fn!.apply(1), fn!.apply(1) === fn!.apply(1))
 * // => number true
 * ```
 *
 * @category generators
 * @since 0.1.0
 */
export const pureFunction = <A>(values: Arbitrary.Arbitrary<A>): Arbitrary.Arbitrary<NamedFunction<A, A>> =>
  Arbitrary.map(spec(values, { families: pureFamilies }), (s) => new NamedFunction(nameOf(s), pureOf(s)!))
