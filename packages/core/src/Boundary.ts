/**
 * The protocol boundary of a tool: run it from unknown JSON (decode the input,
 * run, encode the output or the typed failure), describe it with JSON Schemas,
 * and export the function-calling definitions that OpenAI- and
 * Anthropic-style APIs expect.
 *
 * @since 0.1.0
 */
import { Cause, Effect, Exit, type JsonSchema, Option, Schema } from "effect"
import { AnthropicStructuredOutput, OpenAiStructuredOutput } from "effect/ai"
import type { Any as AnyTool, Tool } from "./Tool.ts"
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
  Effect.suspend(() => {
    // The synchronous encoder first: run inside a fiber, the effectful one costs several times as much on a
    // large result. A schema that needs an effect to encode, or an output that fails, takes the effectful road.
    const exit = syncEncoder(tool.output)(output)
    return Exit.isSuccess(exit)
      ? Effect.succeed(exit.value)
      : Schema.encodeUnknownEffect(tool.output)(output).pipe(
          Effect.mapError(
            (e) => new Error(`${tool.name} produced an output its own schema cannot encode: ${e.message}`)
          ),
          Effect.orDie
        )
  })

/**
 * The JSON text of an encoded value; `undefined` prints as `"null"`.
 *
 * @category encoding
 * @since 0.2.0
 */
export const jsonText = (encoded: unknown): string => JSON.stringify(encoded) ?? "null"

const syncEncoders = new WeakMap<object, (u: unknown) => Exit.Exit<unknown, unknown>>()

/** The synchronous encoder of a schema, made once per schema. */
const syncEncoder = (schema: Schema.Codec<unknown, unknown, never, never>) => {
  let encoder = syncEncoders.get(schema)
  if (encoder === undefined) {
    encoder = Schema.encodeUnknownExit(schema)
    syncEncoders.set(schema, encoder)
  }
  return encoder
}

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

/**
 * Drops the bounds every integer carries (`Schema.Int` states the safe
 * integer range, ±(2^53 − 1)): they are true of every JSON integer this
 * decoder accepts, and in a listing they are only words a model reads and
 * keywords a client compiles. Other bounds stay.
 */
const withoutSafeBounds = (node: unknown): unknown => {
  if (Array.isArray(node)) return node.map(withoutSafeBounds)
  if (typeof node !== "object" || node === null) return node
  const out: Record<string, unknown> = {}
  const integer = (node as { readonly type?: unknown }).type === "integer"
  for (const [key, value] of Object.entries(node)) {
    if (integer && key === "minimum" && value === Number.MIN_SAFE_INTEGER) continue
    if (integer && key === "maximum" && value === Number.MAX_SAFE_INTEGER) continue
    out[key] = withoutSafeBounds(value)
  }
  return out
}

/**
 * The JSON Schema (draft 2020-12) of one schema, its definitions inlined
 * under `$defs`, without the safe-integer bounds of integers.
 *
 * @category describing
 * @since 0.2.0
 */
export const jsonSchema = (schema: Schema.Top): JsonSchema.JsonSchema => {
  const doc = Schema.toJsonSchemaDocument(schema)
  const defs = doc.definitions
  const whole = Object.keys(defs).length === 0 ? doc.schema : { ...doc.schema, $defs: defs }
  return withoutSafeBounds(whole) as JsonSchema.JsonSchema
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
} => ({ input: jsonSchema(tool.input), output: jsonSchema(tool.output), failure: jsonSchema(tool.failure) })

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

/**
 * A JSON Schema with an object root, the only kind providers accept for
 * function parameters.
 *
 * @category describing
 * @since 0.2.0
 */
export interface ObjectSchema extends JsonSchema.JsonSchema {
  readonly type: "object"
  readonly properties?: { readonly [name: string]: unknown }
  readonly required?: Array<string>
}

const isObjectSchema = (schema: JsonSchema.JsonSchema): schema is ObjectSchema =>
  (schema as { readonly type?: unknown }).type === "object"

const objectRoot = (schema: JsonSchema.JsonSchema): ObjectSchema =>
  isObjectSchema(schema) ? schema : { type: "object", properties: {}, additionalProperties: false }

/**
 * How a function definition is exported: its name (default
 * {@link providerName} of the tool's name) and whether it uses OpenAI's strict
 * mode.
 *
 * @category describing
 * @since 0.2.0
 */
export interface DefinitionOptions {
  readonly name?: string | undefined
  /**
   * Ask for the provider's strict mode (`strict: true`): the parameters are
   * rewritten to the provider's strict subset of JSON Schema (every object closed with
   * `additionalProperties: false`, every property required, an optional one
   * as a union with `null`). A model's arguments then carry `null` for an
   * absent optional field: turn them back into the tool's input with
   * {@link fromStrictArguments}. An input the strict subset cannot express
   * (not an object) keeps the plain schema and `strict: false`.
   */
  readonly strict?: boolean | undefined
}

const definitionOptions = (options: string | DefinitionOptions | undefined): DefinitionOptions =>
  typeof options === "string" ? { name: options } : (options ?? {})

/** Which provider's strict subset of JSON Schema. */
type StrictDialect = "openai" | "anthropic"

const strictCodec = (tool: AnyTool, dialect: StrictDialect = "openai") =>
  dialect === "openai"
    ? OpenAiStructuredOutput.toCodecOpenAI(tool.input)
    : AnthropicStructuredOutput.toCodecAnthropic(tool.input)

/**
 * The tool's input in a provider's strict subset of JSON Schema (OpenAI's by
 * default, or Anthropic's), if it can be expressed there (an object root).
 *
 * **Example** (Optional fields become nullable and required)
 * ```ts
 * import { Boundary, Tool } from "@ugent/core"
 * import { Option, Schema } from "effect"
 * const read = Tool.fromFunction({ name: "file.read", input: Schema.Struct({ path: Schema.String, limit: Schema.optionalKey(Schema.Int) }), f: ({ path }: { readonly path: string; readonly limit?: number }) => path })
 * const strict = Option.getOrThrow(Boundary.strictParameters(read)) as { required: Array<string>; additionalProperties: boolean }
 * console.log(strict.required, strict.additionalProperties)
 * // => [ 'path', 'limit' ] false
 * ```
 *
 * @category describing
 * @since 0.2.0
 */
export const strictParameters = (
  tool: AnyTool,
  dialect: "openai" | "anthropic" = "openai"
): Option.Option<ObjectSchema> => {
  try {
    const schema = withoutSafeBounds(strictCodec(tool, dialect).jsonSchema) as JsonSchema.JsonSchema
    return isObjectSchema(schema) ? Option.some(schema) : Option.none()
  } catch {
    return Option.none()
  }
}

const parametersOf = (
  tool: AnyTool,
  strict: boolean | undefined,
  dialect: StrictDialect
): { readonly parameters: ObjectSchema; readonly strict: boolean } => {
  if (strict === true) {
    const parameters = strictParameters(tool, dialect)
    if (Option.isSome(parameters)) return { parameters: parameters.value, strict: true }
  }
  return { parameters: objectRoot(jsonSchema(tool.input)), strict: false }
}

/**
 * Turns a model's arguments for a strict-mode definition back into the
 * tool's JSON input: `null` for an absent optional field is dropped, and
 * every shape the strict subset re-encoded is restored (the same for OpenAI's
 * and Anthropic's strict definitions). Arguments that do not fit the strict
 * schema fail with `InvalidInput`.
 *
 * **Example** (A model's strict arguments)
 * ```ts
 * import { Boundary, Tool } from "@ugent/core"
 * import { Effect, Schema } from "effect"
 * const read = Tool.fromFunction({ name: "file.read", input: Schema.Struct({ path: Schema.String, limit: Schema.optionalKey(Schema.Int) }), f: ({ path }: { readonly path: string; readonly limit?: number }) => path })
 * console.log(Effect.runSync(Boundary.fromStrictArguments(read, { path: "a.txt", limit: null })))
 * // => { path: 'a.txt' }
 * ```
 *
 * @category decoding
 * @since 0.2.0
 */
export const fromStrictArguments = <A, B, E, R>(
  tool: Tool<A, B, E, R>,
  args: unknown
): Effect.Effect<unknown, InvalidInput> =>
  Effect.try({
    try: () => strictCodec(tool).codec,
    catch: () => new InvalidInput({ tool: tool.name, issues: "its input has no strict-mode form (not an object)" })
  }).pipe(
    Effect.flatMap((codec) => Schema.decodeUnknownEffect(codec)(args, { errors: "all" })),
    Effect.flatMap((a) => Schema.encodeUnknownEffect(tool.input)(a)),
    Effect.mapError((e) => (e instanceof InvalidInput ? e : new InvalidInput({ tool: tool.name, issues: e.message })))
  )

/**
 * The function-calling definition of the OpenAI Chat Completions API
 * (`tools: [{ type: "function", function: { ... } }]`, the nested shape).
 * The second argument is the name to use, or {@link DefinitionOptions}.
 *
 * **Example** (A strict definition)
 * ```ts
 * import { Boundary, Tool } from "@ugent/core"
 * import { Schema } from "effect"
 * const add = Tool.fromFunction({ name: "math.add", input: Schema.Struct({ a: Schema.Number }), f: ({ a }: { readonly a: number }) => a })
 * const definition = Boundary.toOpenAiFunction(add, { strict: true })
 * console.log(definition.function.name, definition.function.strict)
 * // => math_add true
 * ```
 *
 * @category describing
 * @since 0.1.0
 */
export const toOpenAiFunction = <A, B, E, R>(
  tool: Tool<A, B, E, R>,
  options?: string | DefinitionOptions
): {
  readonly type: "function"
  readonly function: {
    readonly name: string
    readonly description: string
    readonly parameters: ObjectSchema
    readonly strict: boolean
  }
} => {
  const { name = providerName(tool.name), strict } = definitionOptions(options)
  return {
    type: "function",
    function: { name, description: tool.description, ...parametersOf(tool, strict, "openai") }
  }
}

/**
 * The function tool of the OpenAI Responses API (`tools: [{ type:
 * "function", name, ... }]`, the flat shape). The second argument is the
 * name to use, or {@link DefinitionOptions}.
 *
 * **Example** (The flat shape)
 * ```ts
 * import { Boundary, Tool } from "@ugent/core"
 * import { Schema } from "effect"
 * const add = Tool.fromFunction({ name: "math.add", input: Schema.Struct({ a: Schema.Number }), f: ({ a }: { readonly a: number }) => a })
 * const tool = Boundary.toOpenAiResponsesTool(add, { strict: true })
 * console.log(tool.type, tool.name, tool.strict)
 * // => function math_add true
 * ```
 *
 * @category describing
 * @since 0.2.0
 */
export const toOpenAiResponsesTool = <A, B, E, R>(
  tool: Tool<A, B, E, R>,
  options?: string | DefinitionOptions
): {
  readonly type: "function"
  readonly name: string
  readonly description: string
  readonly parameters: ObjectSchema
  readonly strict: boolean
} => {
  const { name = providerName(tool.name), strict } = definitionOptions(options)
  return { type: "function", name, description: tool.description, ...parametersOf(tool, strict, "openai") }
}

/**
 * The tool definition of the Anthropic Messages API. The second argument is
 * the name to use, or {@link DefinitionOptions} (`strict: true` uses
 * Anthropic's strict tool use).
 *
 * **Example** (Exporting a definition)
 * ```ts
 * import { Boundary, Tool } from "@ugent/core"
 * import { Schema } from "effect"
 * const add = Tool.fromFunction({ name: "math.add", input: Schema.Struct({ a: Schema.Number }), f: ({ a }: { readonly a: number }) => a })
 * console.log(Boundary.toAnthropicTool(add).name)
 * // => math_add
 * console.log(Boundary.toAnthropicTool(add, { strict: true }).strict)
 * // => true
 * ```
 *
 * @category describing
 * @since 0.1.0
 */
export const toAnthropicTool = <A, B, E, R>(
  tool: Tool<A, B, E, R>,
  options?: string | DefinitionOptions
): {
  readonly name: string
  readonly description: string
  readonly input_schema: ObjectSchema
  readonly strict?: true
} => {
  const { name = providerName(tool.name), strict } = definitionOptions(options)
  const { parameters, strict: isStrict } = parametersOf(tool, strict, "anthropic")
  return isStrict
    ? { name, description: tool.description, input_schema: parameters, strict: true }
    : { name, description: tool.description, input_schema: parameters }
}
