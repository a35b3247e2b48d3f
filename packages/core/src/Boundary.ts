/**
 * The protocol boundary of a tool: run it from unknown JSON (decode the input,
 * run, encode the output or the typed failure), describe it with JSON Schemas,
 * and export the function-calling definitions that OpenAI- and
 * Anthropic-style APIs expect.
 *
 * @since 0.1.0
 */
import { Cause, Effect, Exit, type JsonSchema, Schema } from "effect"
import type { Tool } from "./Tool.ts"
import { type FailureJson, InvalidInput, toJson } from "./ToolError.ts"

/**
 * The result of a call at a boundary: `{ ok: true, result }` or
 * `{ ok: false, error }`, both plain JSON.
 *
 * @category models
 * @since 0.1.0
 */
export type JsonResult =
  | { readonly ok: true; readonly result: unknown }
  | { readonly ok: false; readonly error: FailureJson }

/**
 * Decodes unknown input with the tool's input schema; a failure is
 * `InvalidInput` naming every issue.
 *
 * @category decoding
 * @since 0.1.0
 */
export const decodeInput = <A, B, E, R>(tool: Tool<A, B, E, R>, input: unknown): Effect.Effect<A, InvalidInput> =>
  Schema.decodeUnknownEffect(tool.input)(input, { errors: "all", onExcessProperty: "ignore" }).pipe(
    // The input schema decodes to `A` by construction of the tool.
    Effect.map((a) => a as A),
    Effect.mapError((e) => new InvalidInput({ tool: tool.name, issues: e.message }))
  )

/**
 * Encodes an output with the tool's output schema. An output that does not
 * encode is a bug of the tool, so it is a defect.
 *
 * @category encoding
 * @since 0.1.0
 */
export const encodeOutput = <A, B, E, R>(tool: Tool<A, B, E, R>, output: B): Effect.Effect<unknown> =>
  Schema.encodeUnknownEffect(tool.output)(output).pipe(
    Effect.mapError((e) => new Error(`${tool.name} produced an output its own schema cannot encode: ${e.message}`)),
    Effect.orDie
  )

/**
 * Encodes a typed failure to JSON with the tool's failure schema, keeping
 * its tag and message. A failure the schema does not know is still encoded
 * from its own fields.
 *
 * @category encoding
 * @since 0.1.0
 */
export const encodeFailure = <A, B, E, R>(
  tool: Tool<A, B, E, R>,
  error: E | InvalidInput
): Effect.Effect<FailureJson> =>
  Schema.encodeUnknownEffect(tool.failure)(error).pipe(
    Effect.map((encoded) => toJson(error, encoded)),
    Effect.orElseSucceed(() => toJson(error))
  )

/**
 * Runs a tool from unknown JSON: decodes the input, runs, and encodes the
 * output or the typed failure. Defects (bugs) stay defects; they are never
 * turned into results.
 *
 * **Example** (A call from JSON)
 * ```ts
 * import { Boundary, Tool } from "@ugent/core"
 * import { Effect, Schema } from "effect"
 * const add = Tool.fromFunction({ name: "add", input: Schema.Struct({ a: Schema.Number, b: Schema.Number }), output: Schema.Number, f: ({ a, b }: { readonly a: number; readonly b: number }) => a + b })
 * console.log(Effect.runSync(Boundary.runJson(add, { a: 1, b: 2 })))
 * // => { ok: true, result: 3 }
 * const bad = Effect.runSync(Boundary.runJson(add, { a: "one" }))
 * console.log(bad.ok === false && bad.error._tag)
 * // => InvalidInput
 * ```
 *
 * @category running
 * @since 0.1.0
 */
export const runJson = <A, B, E, R>(tool: Tool<A, B, E, R>, input: unknown): Effect.Effect<JsonResult, never, R> =>
  Effect.gen(function* (): Effect.fn.Return<JsonResult, never, R> {
    const decoded = yield* Effect.exit(decodeInput(tool, input))
    if (Exit.isFailure(decoded)) {
      const error = Cause.findErrorOption(decoded.cause)
      if (error._tag === "Some") return { ok: false, error: yield* encodeFailure(tool, error.value) } as const
      return yield* Effect.die(Cause.squash(decoded.cause))
    }
    const exit = yield* Effect.exit(tool.run(decoded.value))
    if (Exit.isSuccess(exit)) return { ok: true, result: yield* encodeOutput(tool, exit.value) } as const
    const error = Cause.findErrorOption(exit.cause)
    if (error._tag === "Some") return { ok: false, error: yield* encodeFailure(tool, error.value) } as const
    return yield* Effect.failCause(exit.cause as Cause.Cause<never>)
  })

const inline = (schema: Schema.Top): JsonSchema.JsonSchema => {
  const doc = Schema.toJsonSchemaDocument(schema)
  const defs = doc.definitions
  if (Object.keys(defs).length === 0) return doc.schema
  return { ...doc.schema, $defs: defs }
}

/**
 * The JSON Schemas (draft 2020-12) of a tool's input, output and failure.
 *
 * @category describing
 * @since 0.1.0
 */
export const jsonSchemas = <A, B, E, R>(
  tool: Tool<A, B, E, R>
): {
  readonly input: JsonSchema.JsonSchema
  readonly output: JsonSchema.JsonSchema
  readonly failure: JsonSchema.JsonSchema
} => ({ input: inline(tool.input), output: inline(tool.output), failure: inline(tool.failure) })

/**
 * A name that LLM providers and strict MCP clients accept
 * (`^[a-zA-Z0-9_-]{1,64}$`): dots become underscores. `world.tools.file.read`
 * becomes `world_tools_file_read`.
 *
 * @category describing
 * @since 0.1.0
 */
export const providerName = (name: string): string => {
  const safe = name.replace(/\./g, "_").replace(/[^a-zA-Z0-9_-]/g, "-")
  if (safe.length === 0 || safe.length > 64) {
    throw new Error(`No provider-safe name for "${name}": it must have 1 to 64 characters after mapping.`)
  }
  return safe
}

const objectRoot = (schema: JsonSchema.JsonSchema): JsonSchema.JsonSchema =>
  (schema as { readonly type?: unknown }).type === "object"
    ? schema
    : { type: "object", properties: {}, additionalProperties: false }

/**
 * The function-calling definition of an OpenAI-style API (`tools: [...]`).
 *
 * @category describing
 * @since 0.1.0
 */
export const toOpenAiFunction = <A, B, E, R>(
  tool: Tool<A, B, E, R>,
  name: string = providerName(tool.name)
): {
  readonly type: "function"
  readonly function: { readonly name: string; readonly description: string; readonly parameters: JsonSchema.JsonSchema }
} => ({
  type: "function",
  function: { name, description: tool.description, parameters: objectRoot(inline(tool.input)) }
})

/**
 * The tool definition of an Anthropic-style API.
 *
 * **Example** (Exporting a definition)
 * ```ts
 * import { Boundary, Tool } from "@ugent/core"
 * import { Schema } from "effect"
 * const add = Tool.fromFunction({ name: "math.add", input: Schema.Struct({ a: Schema.Number }), f: ({ a }: { readonly a: number }) => a })
 * console.log(Boundary.toAnthropicTool(add).name)
 * // => math_add
 * ```
 *
 * @category describing
 * @since 0.1.0
 */
export const toAnthropicTool = <A, B, E, R>(
  tool: Tool<A, B, E, R>,
  name: string = providerName(tool.name)
): { readonly name: string; readonly description: string; readonly input_schema: JsonSchema.JsonSchema } => ({
  name,
  description: tool.description,
  input_schema: objectRoot(inline(tool.input))
})
