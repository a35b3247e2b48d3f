/**
 * What the providers share about tools, prompts and answers: the function
 * definitions of an `effect/ai` toolkit (plain, or in a provider's strict
 * mode), a model's arguments turned back into what the tool decodes, the text
 * a tool result is sent as, file data, usage and names.
 *
 * @internal
 */
import { Effect, Exit, type JsonSchema, Predicate, Schema } from "effect"
import {
  AiError,
  AnthropicStructuredOutput,
  type LanguageModel,
  OpenAiStructuredOutput,
  Prompt,
  type Response,
  Tool
} from "effect/ai"
import { Base64 } from "effect/encoding"
import type { Connection } from "./http.ts"

/** Which provider's strict subset of JSON Schema. */
export type Dialect = "openai" | "anthropic"

const transformerOf = (dialect: Dialect): LanguageModel.CodecTransformer =>
  dialect === "openai" ? OpenAiStructuredOutput.toCodecOpenAI : AnthropicStructuredOutput.toCodecAnthropic

/** A function definition, whatever the provider's wire shape. */
export interface FunctionDefinition {
  readonly name: string
  readonly description: string | undefined
  readonly parameters: { readonly type: "object" } & JsonSchema.JsonSchema
  readonly strict: boolean
}

/** The definitions of the offered tools, and how to read a model's arguments for each. */
export interface PreparedTools {
  readonly definitions: ReadonlyArray<FunctionDefinition>
  /**
   * A model's arguments for a tool (JSON text, or a value already parsed) as
   * the tool's parameter schema decodes them. Text that is not JSON is kept
   * as the text, so the toolkit reports the bad arguments back to the model
   * as a failed call it can correct, instead of the whole answer failing.
   */
  readonly argumentsOf: (name: string, args: unknown) => unknown
}

const isObjectSchema = (schema: JsonSchema.JsonSchema): schema is { readonly type: "object" } & JsonSchema.JsonSchema =>
  schema.type === "object"

/** Parses a model's argument text; empty text is no arguments, text that is not JSON stays text. */
export const parseArguments = (text: string): unknown => {
  if (text.trim().length === 0) return {}
  try {
    return Tool.unsafeSecureJsonParse(text)
  } catch {
    return text
  }
}

type AnyCodec = Schema.Codec<unknown, unknown, never, never>

/**
 * Prepares the offered tools. A tool's definition is strict when its
 * `Tool.Strict` annotation says so, or else when `strict` is asked for, and
 * its parameters have a strict form (a `Schema` with an object root; a tool
 * given by a raw JSON Schema stays plain).
 */
export const prepareTools = (
  connection: Connection,
  method: string,
  tools: ReadonlyArray<Tool.Any>,
  strict: boolean,
  dialect: Dialect
): Effect.Effect<PreparedTools, AiError.AiError> =>
  Effect.gen(function* () {
    const definitions: Array<FunctionDefinition> = []
    const normalizers = new Map<string, (args: unknown) => unknown>()
    for (const tool of tools) {
      if (Tool.isProviderDefined(tool)) {
        return yield* AiError.make({
          module: connection.module,
          method,
          reason: new AiError.ToolConfigurationError({
            toolName: tool.name,
            description: `${tool.name} is a provider-defined tool; this provider offers only tools with parameters and handlers`
          })
        })
      }
      const wantsStrict =
        (Tool.getStrictMode(tool) ?? strict) && !(Tool.isDynamic(tool) && tool.jsonSchema !== undefined)
      const parameters = yield* Effect.try({
        try: () => Tool.getJsonSchema(tool),
        catch: (error) =>
          AiError.make({
            module: connection.module,
            method,
            reason: new AiError.UnsupportedSchemaError({
              description: `the parameters of ${tool.name} have no JSON Schema: ${error instanceof Error ? error.message : String(error)}`
            })
          })
      })
      if (!isObjectSchema(parameters)) {
        return yield* AiError.make({
          module: connection.module,
          method,
          reason: new AiError.UnsupportedSchemaError({
            description: `the parameters of ${tool.name} must be an object schema, as providers require`
          })
        })
      }
      const description = Tool.getDescription(tool)
      if (wantsStrict) {
        const transformed = (() => {
          try {
            return transformerOf(dialect)(tool.parametersSchema)
          } catch {
            return undefined
          }
        })()
        if (transformed !== undefined && isObjectSchema(transformed.jsonSchema)) {
          // Tool parameter schemas are decoded by effect/ai without services as well; a failure here
          // (including a schema that would need a service) keeps the model's arguments as they are.
          const codec = transformed.codec as AnyCodec
          const plain = tool.parametersSchema as AnyCodec
          normalizers.set(tool.name, (args) => {
            const decoded = Schema.decodeUnknownExit(codec)(args)
            if (Exit.isFailure(decoded)) return args
            const encoded = Schema.encodeUnknownExit(plain)(decoded.value)
            return Exit.isSuccess(encoded) ? encoded.value : args
          })
          definitions.push({ name: tool.name, description, parameters: transformed.jsonSchema, strict: true })
          continue
        }
      }
      definitions.push({ name: tool.name, description, parameters, strict: false })
    }
    const argumentsOf = (name: string, args: unknown): unknown => {
      const value = typeof args === "string" ? parseArguments(args) : args
      const normalize = normalizers.get(name)
      return normalize === undefined || typeof value === "string" ? value : normalize(value)
    }
    return { definitions, argumentsOf }
  })

/** The JSON Schema of a structured answer, in the provider's dialect. */
export const responseSchema = (
  connection: Connection,
  method: string,
  schema: Schema.Top,
  dialect: Dialect
): Effect.Effect<JsonSchema.JsonSchema, AiError.AiError> =>
  Effect.try({
    try: () => Tool.getJsonSchemaFromSchema(schema, { transformer: transformerOf(dialect) }),
    catch: (error) =>
      AiError.make({
        module: connection.module,
        method,
        reason: new AiError.UnsupportedSchemaError({
          description: `the schema of the structured answer cannot be sent to the provider: ${error instanceof Error ? error.message : String(error)}`
        })
      })
  })

/** The codec transformer of a dialect, for `LanguageModel.make`. */
export const codecTransformer = transformerOf

/** A name providers accept for a response format (`^[a-zA-Z0-9_-]{1,64}$`). */
export const formatName = (name: string): string => {
  const safe = name.replace(/[^a-zA-Z0-9_-]/g, "_").slice(0, 64)
  return safe.length === 0 ? "response" : safe
}

/** The text a tool result is sent back as: its model output if it has one, a string as is, anything else as JSON. */
export const toolResultText = (part: Prompt.ToolResultPart): string => {
  if (part.modelOutput !== undefined) return Prompt.toolModelOutputToText(part.modelOutput)
  if (typeof part.result === "string") return part.result
  return JSON.stringify(part.result) ?? "null"
}

/** Where a file part's bytes are: a URL, or base64 data. */
export type FileSource =
  | { readonly _tag: "url"; readonly url: string }
  | { readonly _tag: "base64"; readonly data: string; readonly mediaType: string }

/** The source of a file part's data: a URL (an `URL`, or a string that is one), else base64. */
export const fileSource = (part: Prompt.FilePart): FileSource => {
  const data = part.data
  if (data instanceof URL) return { _tag: "url", url: data.href }
  if (data instanceof Uint8Array) return { _tag: "base64", data: Base64.encode(data), mediaType: part.mediaType }
  if (/^https?:\/\//i.test(data)) return { _tag: "url", url: data }
  const dataUrl = /^data:([^;,]+)?;base64,(.*)$/s.exec(data)
  if (dataUrl !== null) return { _tag: "base64", data: dataUrl[2]!, mediaType: dataUrl[1] ?? part.mediaType }
  return { _tag: "base64", data, mediaType: part.mediaType }
}

/** A `data:` URL of a file source, or its URL. */
export const fileUrl = (source: FileSource): string =>
  source._tag === "url" ? source.url : `data:${source.mediaType};base64,${source.data}`

/** A user input the provider cannot take (a file type it does not accept). */
export const unsupportedInput = (connection: Connection, method: string, description: string): AiError.AiError =>
  AiError.make({ module: connection.module, method, reason: new AiError.InvalidUserInputError({ description }) })

/** A number, if it is one. */
export const num = (u: unknown): number | undefined => (typeof u === "number" && Number.isFinite(u) ? u : undefined)

/** Usage from input and output token counts, with cached and reasoning tokens where known. */
export const usage = (counts: {
  readonly inputTotal?: number | undefined
  readonly cacheRead?: number | undefined
  readonly cacheWrite?: number | undefined
  readonly outputTotal?: number | undefined
  readonly reasoning?: number | undefined
}): Response.FinishPartEncoded["usage"] => {
  const inputTokens: Record<string, number> = {}
  if (counts.inputTotal !== undefined) inputTokens.total = counts.inputTotal
  if (counts.cacheRead !== undefined) inputTokens.cacheRead = counts.cacheRead
  if (counts.cacheWrite !== undefined) inputTokens.cacheWrite = counts.cacheWrite
  if (counts.inputTotal !== undefined) {
    inputTokens.uncached = Math.max(0, counts.inputTotal - (counts.cacheRead ?? 0) - (counts.cacheWrite ?? 0))
  }
  const outputTokens: Record<string, number> = {}
  if (counts.outputTotal !== undefined) outputTokens.total = counts.outputTotal
  if (counts.reasoning !== undefined) outputTokens.reasoning = counts.reasoning
  if (counts.outputTotal !== undefined) outputTokens.text = Math.max(0, counts.outputTotal - (counts.reasoning ?? 0))
  return { inputTokens, outputTokens }
}

/** An ISO timestamp of seconds since the epoch. */
export const isoOfSeconds = (seconds: unknown): string | undefined =>
  typeof seconds === "number" && Number.isFinite(seconds) ? new Date(seconds * 1000).toISOString() : undefined

/** Whether a value is a JSON object. */
export const isRecord = (u: unknown): u is Record<string, unknown> => Predicate.isObject(u) && !Array.isArray(u)
