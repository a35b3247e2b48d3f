/**
 * The protocol boundary of a tool: run it from unknown JSON (decode the input,
 * run, encode the output or the typed failure), describe it with JSON Schemas,
 * and export the function-calling definitions that OpenAI- and
 * Anthropic-style APIs expect.
 *
 * @since 0.1.0
 */
import { Cause, Effect, Exit, type JsonSchema, Option, Schema, SchemaAST, type SchemaIssue } from "effect"
import { AnthropicStructuredOutput, OpenAiStructuredOutput } from "effect/ai"
import type { Any as AnyTool, Tool } from "./Tool.ts"
import { nearestKeys } from "./internal/nearestKey.ts"
import { type FailureJson, InvalidInput, toJson, UnknownArguments } from "./ToolError.ts"

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
 * How a tool's input is decoded: with `onExcessProperty: "error"` (the
 * default) a key the input schema does not declare is refused as
 * `UnknownArguments`; with `"ignore"` it is dropped (the input of a pipeline
 * step after the first is the previous step's output, whose other keys are
 * not the caller's).
 *
 * @category models
 * @since 0.2.0
 */
export interface DecodeOptions {
  readonly onExcessProperty?: "error" | "ignore" | undefined
}

/**
 * Decodes unknown input with the tool's input schema. A key the schema does
 * not declare is `UnknownArguments` (naming the keys the tool takes and the
 * one each unknown key most likely means), unless `onExcessProperty` is
 * `"ignore"`; any other misfit is `InvalidInput` naming every issue.
 *
 * **Example** (A key the tool does not take)
 * ```ts
 * import { Boundary, Tool } from "@ugent/core"
 * import { Effect, Schema } from "effect"
 * const read = Tool.fromFunction({ name: "file.read", input: Schema.Struct({ path: Schema.String, offset: Schema.optionalKey(Schema.Int), limit: Schema.optionalKey(Schema.Int) }), f: ({ path }: { readonly path: string }) => path })
 * const e = Effect.runSync(Effect.flip(Boundary.decodeInput(read, { path: "a.ts", startLine: 1, endLine: 2 })))
 * console.log(e._tag, e.message)
 * // => UnknownArguments file.read takes path, offset, limit; it does not take startLine, endLine. Did you mean offset (for startLine), limit (for endLine)? Call again with only the keys it takes.
 * ```
 *
 * @category decoding
 * @since 0.1.0
 */
export const decodeInput = <A, B, E, R>(
  tool: Tool<A, B, E, R>,
  input: unknown,
  options?: DecodeOptions
): Effect.Effect<A, InvalidInput | UnknownArguments> =>
  Schema.decodeUnknownEffect(tool.input)(input, {
    errors: "all",
    onExcessProperty: options?.onExcessProperty ?? "error"
  }).pipe(
    // The input schema decodes to `A` by construction of the tool.
    Effect.map((a) => a as A),
    Effect.mapError((e) => decodeFailure(tool.name, input, e))
  )

/**
 * The failure of a decoding: `UnknownArguments` when some object of the input
 * has keys its schema does not declare (the outermost such object), else
 * `InvalidInput` with every issue.
 *
 * @category decoding
 * @since 0.2.0
 */
export const decodeFailure = (
  tool: string,
  input: unknown,
  error: Schema.SchemaError
): InvalidInput | UnknownArguments => {
  const excess = excessKeys(error.issue)
  if (excess === undefined) return new InvalidInput({ tool, issues: error.message })
  const holder = valueAt(input, excess.at)
  const present = new Set(isRecord(holder) ? Object.keys(holder) : [])
  return new UnknownArguments({
    tool,
    at: excess.at.map((k, i) => (typeof k === "number" ? `[${k}]` : i === 0 ? String(k) : `.${String(k)}`)).join(""),
    unknown: excess.keys,
    known: excess.known,
    suggestions: nearestKeys(excess.keys, excess.known, present)
  })
}

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

const valueAt = (input: unknown, path: ReadonlyArray<PropertyKey>): unknown =>
  path.reduce<unknown>(
    (v, k) => (typeof v === "object" && v !== null ? (v as Record<PropertyKey, unknown>)[k] : undefined),
    input
  )

/**
 * The outermost object of an issue tree with keys its schema does not
 * declare: where it is, those keys, and the keys it declares. A union's
 * members are not looked into (each would name its own keys).
 */
const excessKeys = (
  root: SchemaIssue.Issue
):
  | { readonly at: ReadonlyArray<PropertyKey>; readonly keys: Array<string>; readonly known: Array<string> }
  | undefined => {
  const found: Array<{ readonly path: ReadonlyArray<PropertyKey>; readonly ast: SchemaAST.AST }> = []
  const walk = (issue: SchemaIssue.Issue, path: ReadonlyArray<PropertyKey>): void => {
    switch (issue._tag) {
      case "Pointer":
        walk(issue.issue, [...path, ...issue.path])
        return
      case "UnexpectedKey":
        found.push({ path, ast: issue.ast })
        return
      case "Composite":
        for (const i of issue.issues) walk(i, path)
        return
      case "Filter":
      case "Encoding":
        walk(issue.issue, path)
        return
      default:
        return
    }
  }
  walk(root, [])
  if (found.length === 0) return undefined
  const depth = Math.min(...found.map((f) => f.path.length))
  const outer = found.filter((f) => f.path.length === depth)
  const at = outer[0]!.path.slice(0, -1)
  const same = outer.filter((f) => f.path.slice(0, -1).every((k, i) => k === at[i]))
  const ast = same[0]!.ast
  const known = SchemaAST.isObjects(ast) ? ast.propertySignatures.map((p) => String(p.name)) : []
  return { at, keys: same.map((f) => String(f.path.at(-1))), known }
}

/**
 * The keys a tool's input takes, when its input is a closed object (a struct
 * without index signatures); `undefined` for any other input.
 *
 * @category describing
 * @since 0.2.0
 */
export const inputKeys = (tool: AnyTool): ReadonlyArray<string> | undefined => {
  const ast = SchemaAST.toEncoded(tool.input.ast)
  return SchemaAST.isObjects(ast) && ast.indexSignatures.length === 0
    ? ast.propertySignatures.map((p) => String(p.name))
    : undefined
}

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
  error: E | InvalidInput | UnknownArguments
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
 * under `$defs`, without the safe-integer bounds of integers. With
 * `onExcessProperty: "error"` (as for a tool's input, which refuses keys it
 * does not declare) every closed object says `additionalProperties: false`.
 *
 * **Example** (An input schema is closed)
 * ```ts
 * import { Boundary } from "@ugent/core"
 * import { Schema } from "effect"
 * const input = Schema.Struct({ path: Schema.String })
 * console.log(Boundary.jsonSchema(input, { onExcessProperty: "error" }))
 * // => { type: 'object', properties: { path: { type: 'string' } }, required: [ 'path' ], additionalProperties: false }
 * ```
 *
 * @category describing
 * @since 0.2.0
 */
export const jsonSchema = (
  schema: Schema.Top,
  options?: { readonly onExcessProperty?: "error" | "ignore" | undefined }
): JsonSchema.JsonSchema => {
  const doc = Schema.toJsonSchemaDocument(schema, { onExcessProperty: options?.onExcessProperty ?? "ignore" })
  const defs = doc.definitions
  const whole = Object.keys(defs).length === 0 ? doc.schema : { ...doc.schema, $defs: defs }
  return withoutSafeBounds(whole) as JsonSchema.JsonSchema
}

/**
 * The JSON Schemas (draft 2020-12) of a tool's input (closed: `additionalProperties:
 * false` on its objects), output and failure.
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
} => ({
  input: jsonSchema(tool.input, closedInput),
  output: jsonSchema(tool.output),
  failure: jsonSchema(tool.failure)
})

/** A tool's input refuses keys it does not declare, and its JSON Schema says so. */
const closedInput = { onExcessProperty: "error" } as const

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
  return { parameters: objectRoot(jsonSchema(tool.input, closedInput)), strict: false }
}

/**
 * Turns a model's arguments for a strict-mode definition back into the
 * tool's JSON input: `null` for an absent optional field is dropped, and
 * every shape the strict subset re-encoded is restored (the same for OpenAI's
 * and Anthropic's strict definitions). Arguments that do not fit the strict
 * schema (a key it does not declare among them) fail with `InvalidInput`.
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
    // A key the strict schema does not declare is refused, as the road refuses it.
    Effect.flatMap((codec) => Schema.decodeUnknownEffect(codec)(args, { errors: "all", onExcessProperty: "error" })),
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
