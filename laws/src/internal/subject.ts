/**
 * What the algebraic rule sets are about: the tool under test (or generated
 * ones), the generated tools placed before and after it, its inputs, and the
 * instance. Shared by `CategoryTests`, `ArrowTests` and `CombinatorTests`.
 *
 * @internal
 */
import type { Tool } from "@ugent/core"
import { Arbitrary } from "effect"
import * as Instance from "../Instance.ts"
import * as ToolArbitrary from "../ToolArbitrary.ts"

export interface SubjectOptions {
  readonly tool?: Tool.Any | undefined
  readonly input?: ToolArbitrary.Input<unknown> | undefined
  readonly output?: ToolArbitrary.Input<unknown> | undefined
  readonly instance?: Instance.Instance | undefined
  readonly tools?: ToolArbitrary.Options | undefined
}

export interface Subject {
  readonly instance: Instance.Instance
  /** Inputs of `f`. */
  readonly input: Arbitrary.Arbitrary<unknown>
  readonly inputSchema: Tool.AnySchema
  /** The tool under test, or a generated endomorphism of the input. */
  readonly f: Arbitrary.Arbitrary<Tool.Any>
  /** Generated endomorphisms of `f`'s input (tools placed before `f`). */
  readonly pre: Arbitrary.Arbitrary<Tool.Any>
  /** Generated endomorphisms of `f`'s output (tools placed after `f`). */
  readonly post: Arbitrary.Arbitrary<Tool.Any>
  /** Generated endomorphisms that fail often (half of the draws are failing tools), for laws about failures. */
  readonly faulty: Arbitrary.Arbitrary<Tool.Any>
  /** The tool under test, or a generated endomorphism that fails often. */
  readonly fFaulty: Arbitrary.Arbitrary<Tool.Any>
  /** Generated endomorphisms with the subject's families that never fail. */
  readonly total: Arbitrary.Arbitrary<Tool.Any>
  /** Values of `f`'s output, for pure functions placed after it; `undefined` when they cannot be generated. */
  readonly outputValues: Arbitrary.Arbitrary<unknown> | undefined
  readonly inputValues: Arbitrary.Arbitrary<unknown>
}

const valueFree: ReadonlyArray<ToolArbitrary.Family> = ["pass", "log", "sleep", "failWhen"]

/** Generated endomorphisms over a schema whose values may not be derivable: then without constants. */
const endoOver = (
  schema: Tool.AnySchema,
  values: Arbitrary.Arbitrary<unknown> | undefined,
  options: ToolArbitrary.Options | undefined
): Arbitrary.Arbitrary<Tool.Any> => {
  if (values !== undefined) {
    return Arbitrary.map(ToolArbitrary.spec(values, options), (s) => ToolArbitrary.fromSpec(s, schema, options))
  }
  const families = (options?.families ?? ToolArbitrary.families).filter((f) => valueFree.includes(f))
  const spec = ToolArbitrary.spec(Arbitrary.Constant(undefined), {
    ...options,
    families: families.length > 0 ? families : ["pass"]
  })
  return Arbitrary.map(spec, (s) => ToolArbitrary.fromSpec(s, schema, options))
}

const tryArbitrary = (schema: Tool.AnySchema): Arbitrary.Arbitrary<unknown> | undefined => {
  try {
    return Arbitrary.schema(schema)
  } catch {
    return undefined
  }
}

const resolveValues = (
  input: ToolArbitrary.Input<unknown>
): { schema: Tool.AnySchema; values: Arbitrary.Arbitrary<unknown> | undefined } =>
  Arbitrary.isArbitrary(input)
    ? { schema: ToolArbitrary.resolve(input).schema, values: input }
    : { schema: input, values: tryArbitrary(input) }

export const subjectOf = (options: SubjectOptions, name: string): Subject => {
  const instance = options.instance ?? Instance.tool
  const tool = options.tool
  const inputSide = resolveValues(options.input ?? tool?.input ?? missingInput(name))
  if (inputSide.values === undefined) {
    throw new Error(
      `${name}: cannot generate inputs from the input schema (a declared type without an arbitrary): pass \`input\` as an Arbitrary.`
    )
  }
  const outputSide = tool === undefined ? inputSide : resolveValues(options.output ?? tool.output)
  const chosen = options.tools?.families ?? ToolArbitrary.families
  const totalFamilies = chosen.filter((f) => f !== "failWhen")
  const faultyFamilies = chosen.includes("failWhen")
    ? [...chosen, ...totalFamilies.map(() => "failWhen" as const)]
    : chosen
  const faulty = endoOver(inputSide.schema, inputSide.values, { ...options.tools, families: faultyFamilies })
  return {
    instance,
    input: inputSide.values,
    inputSchema: inputSide.schema,
    f: tool === undefined ? endoOver(inputSide.schema, inputSide.values, options.tools) : Arbitrary.Constant(tool),
    pre: endoOver(inputSide.schema, inputSide.values, options.tools),
    post: endoOver(outputSide.schema, outputSide.values, options.tools),
    faulty,
    fFaulty: tool === undefined ? faulty : Arbitrary.Constant(tool),
    total: endoOver(inputSide.schema, inputSide.values, {
      ...options.tools,
      families: totalFamilies.length > 0 ? totalFamilies : ["pass"]
    }),
    outputValues: outputSide.values,
    inputValues: inputSide.values
  }
}

const missingInput = (name: string): never => {
  throw new Error(`${name}: give a \`tool\` or an \`input\` (a schema or an Arbitrary) to generate inputs from.`)
}
