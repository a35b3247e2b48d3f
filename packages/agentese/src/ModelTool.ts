/**
 * Model steps are tools: {@link make} turns a prompt and an output schema
 * into a `Tool<A, B>` whose run is one `LanguageModel.generateObject` call,
 * its answer decoded by the output schema. It is read-only (L0), declares
 * that it calls the network, and fails with typed errors: the model refused
 * ({@link ModelRefused}), its answer does not fit the schema
 * ({@link ModelOutputInvalid}), the provider limits the rate
 * ({@link ModelRateLimited}) or cannot be used ({@link ModelCallFailed}). So
 * `Tool.pipeline(grep, summarize, write)` is one typed, gated, traced
 * pipeline, with the model step in the middle.
 *
 * The {@link family} `model` serves two such steps on the road when a model
 * is configured (a `LanguageModel` in the server's context, `Server.Options.model`):
 * `world.tools.model.summarize` and `world.tools.model.extract`.
 *
 * @since 0.2.0
 */
import { Family, Tool, type ToolError, type Trust } from "@ugent/core"
import { Duration, Effect, JsonSchema, Option, Schema, SchemaRepresentation } from "effect"
import { AiError, LanguageModel, type Prompt, type Response, Telemetry } from "effect/ai"

// ---------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------

/**
 * The model declined to answer (its content policy). Retrying the same input
 * will not help; change the input.
 *
 * @category errors
 * @since 0.2.0
 */
export class ModelRefused extends Schema.TaggedError<ModelRefused>()("ModelRefused", {
  tool: Schema.String,
  text: Schema.String
}) {
  static readonly kind: ToolError.Kind = "invalid_input"
  override get message(): string {
    return `The model refused ${this.tool}${this.text === "" ? "" : `: ${this.text.slice(0, 300)}`}. Change the input; the same input will be refused again.`
  }
}

/**
 * The model's answer is not JSON, or does not fit the output schema.
 *
 * @category errors
 * @since 0.2.0
 */
export class ModelOutputInvalid extends Schema.TaggedError<ModelOutputInvalid>()("ModelOutputInvalid", {
  tool: Schema.String,
  problem: Schema.String,
  text: Schema.String,
  retryable: Schema.Boolean
}) {
  static readonly kind: ToolError.Kind = "failed"
  override get message(): string {
    return `The model's answer to ${this.tool} does not fit its output schema (${this.problem.replace(/\s*\n\s*/g, " ").slice(0, 300)}). Call again; if it keeps failing, simplify the input.`
  }
}

/**
 * The model provider limits the rate of calls.
 *
 * @category errors
 * @since 0.2.0
 */
export class ModelRateLimited extends Schema.TaggedError<ModelRateLimited>()("ModelRateLimited", {
  tool: Schema.String,
  detail: Schema.String,
  retryAfterMillis: Schema.optionalKey(Schema.Number)
}) {
  static readonly kind: ToolError.Kind = "rate_limited"
  override get message(): string {
    const wait = this.retryAfterMillis === undefined ? "later" : `in ${Math.ceil(this.retryAfterMillis / 1000)} s`
    return `The model provider limits the rate of calls (${this.detail}): call ${this.tool} again ${wait}.`
  }
}

/**
 * The model could not be used: no connection, a rejected key, an error of
 * the provider.
 *
 * @category errors
 * @since 0.2.0
 */
export class ModelCallFailed extends Schema.TaggedError<ModelCallFailed>()("ModelCallFailed", {
  tool: Schema.String,
  /** The `AiError` reason's tag (`NetworkError`, `AuthenticationError`, …). */
  reason: Schema.String,
  detail: Schema.String,
  retryable: Schema.Boolean
}) {
  static readonly kind: ToolError.Kind = "unavailable"
  override get message(): string {
    return `${this.tool} could not reach its model (${this.reason}: ${this.detail.slice(0, 300)}).${this.retryable ? " Call again later." : " Check the model's configuration."}`
  }
}

/**
 * A caller-given JSON Schema that cannot be used for structured output.
 *
 * @category errors
 * @since 0.2.0
 */
export class UnsupportedSchema extends Schema.TaggedError<UnsupportedSchema>()("UnsupportedSchema", {
  tool: Schema.String,
  problem: Schema.String
}) {
  static readonly kind: ToolError.Kind = "invalid_input"
  override get message(): string {
    return `The schema given to ${this.tool} cannot be used (${this.problem.replace(/\s*\n\s*/g, " ").slice(0, 300)}). Give a JSON Schema (draft 2020-12) of an object with local $defs only, such as {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}.`
  }
}

/**
 * How a model step can fail.
 *
 * @category errors
 * @since 0.2.0
 */
export type ModelFailure = ModelRefused | ModelOutputInvalid | ModelRateLimited | ModelCallFailed

/**
 * The schema of {@link ModelFailure}.
 *
 * @category schemas
 * @since 0.2.0
 */
export const ModelFailure = Schema.Union([ModelRefused, ModelOutputInvalid, ModelRateLimited, ModelCallFailed])

// ---------------------------------------------------------------------------
// One structured call
// ---------------------------------------------------------------------------

type AnySchema = Tool.AnySchema

/** Whether a schema's JSON form is an object (providers take only object roots for structured output). */
const isObjectRoot = (schema: AnySchema): boolean => {
  try {
    const json = Schema.toJsonSchemaDocument(schema).schema as { readonly type?: unknown }
    return json.type === "object"
  } catch {
    return false
  }
}

const failureOf = (tool: string, error: AiError.AiError, finish: Response.FinishReason | undefined): ModelFailure => {
  const reason = error.reason
  switch (reason._tag) {
    case "ContentPolicyError":
      return new ModelRefused({ tool, text: reason.description ?? "" })
    case "StructuredOutputError":
      return finish === "content-filter"
        ? new ModelRefused({ tool, text: reason.responseText })
        : new ModelOutputInvalid({ tool, problem: reason.description, text: reason.responseText, retryable: true })
    case "InvalidOutputError":
      return finish === "content-filter"
        ? new ModelRefused({ tool, text: "" })
        : new ModelOutputInvalid({ tool, problem: reason.description, text: "", retryable: true })
    case "RateLimitError":
    case "QuotaExhaustedError": {
      const after = error.retryAfter
      return new ModelRateLimited({
        tool,
        detail: reason.message,
        ...(after === undefined ? {} : { retryAfterMillis: Duration.toMillis(after) })
      })
    }
    default:
      return new ModelCallFailed({ tool, reason: reason._tag, detail: reason.message, retryable: error.isRetryable })
  }
}

/**
 * One `generateObject` call: the prompt, the answer decoded by `output`
 * (wrapped as `{ value }` when its JSON form is not an object), failures
 * typed. The finish reason is read through `effect/ai`'s span transformer,
 * the one place a failed structured answer still shows it.
 */
const generate = (
  tool: string,
  prompt: Prompt.RawInput,
  output: AnySchema,
  objectName: string | undefined
): Effect.Effect<unknown, ModelFailure, LanguageModel.LanguageModel> =>
  Effect.gen(function* () {
    const wrapped = !isObjectRoot(output)
    const schema = wrapped ? Schema.Struct({ value: output }) : output
    let finish: Response.FinishReason | undefined
    const watch: Telemetry.SpanTransformer = ({ response }) => {
      for (const part of response) if (part.type === "finish") finish = part.reason
    }
    const response = yield* LanguageModel.generateObject({
      prompt,
      // The codec needs no services (Tool.AnySchema); its encoded side is an object once wrapped.
      schema: schema as Schema.Codec<unknown, Record<string, unknown>>,
      ...(objectName === undefined ? {} : { objectName })
    }).pipe(
      Effect.provideService(Telemetry.CurrentSpanTransformer, watch),
      Effect.mapError((error) => failureOf(tool, error, finish))
    )
    if (finish === "content-filter") return yield* new ModelRefused({ tool, text: response.text })
    return wrapped ? (response.value as { readonly value: unknown }).value : response.value
  })

/**
 * A model step as a tool: one `LanguageModel.generateObject` call with the
 * prompt made from the input, its answer decoded by `output`. L0 (it changes
 * nothing), `callsNetwork: true`, idempotent; its failures are
 * {@link ModelFailure}. It needs the `LanguageModel` in context.
 *
 * **Example** (A summarizer, with a scripted model)
 * ```ts
 * import { ModelTool } from "@ugent/agentese"
 * import { Scripted } from "@ugent/agentese/providers"
 * import { Trust } from "@ugent/core"
 * import { Effect, Schema } from "effect"
 * const title = ModelTool.make({
 *   name: "text.title",
 *   description: "Gives a text a title.",
 *   input: Schema.Struct({ text: Schema.String }),
 *   output: Schema.Struct({ title: Schema.String }),
 *   prompt: ({ text }) => `Give this text a short title:\n${text}`
 * })
 * const model = Scripted.layer((request) => Scripted.json({ title: `${request.responseFormat.type} answer` }))
 * console.log(title.trust, title.effects.callsNetwork)
 * // => 0 true
 * console.log(Effect.runSync(title.run({ text: "tea and cake" }).pipe(Effect.provide([model, Trust.grant(0)]))))
 * // => { title: 'json answer' }
 * ```
 *
 * @category constructors
 * @since 0.2.0
 */
export const make = <I extends AnySchema, O extends AnySchema>(options: {
  readonly name: string
  readonly description: string
  readonly input: I
  readonly output: O
  /** The prompt of an input: a string (a user message) or a whole prompt. */
  readonly prompt: (input: I["Type"]) => Prompt.RawInput
  /** The name of the answer's object, for providers that take one (default: the tool's name). */
  readonly objectName?: string | undefined
  readonly version?: string | undefined
}): Tool.Tool<I["Type"], O["Type"], ModelFailure, LanguageModel.LanguageModel | Trust.L0> =>
  Tool.make({
    name: options.name,
    description: options.description,
    version: options.version,
    input: options.input,
    output: options.output,
    failure: ModelFailure,
    trust: 0,
    effects: { callsNetwork: true },
    run: (input) =>
      generate(
        options.name,
        options.prompt(input),
        options.output,
        options.objectName ?? options.name.replace(/[^a-zA-Z0-9_-]/g, "_")
      ) as Effect.Effect<O["Type"], ModelFailure, LanguageModel.LanguageModel>
  })

// ---------------------------------------------------------------------------
// The model family
// ---------------------------------------------------------------------------

/**
 * `model.summarize`: a text summarized in at most `maxWords` words (default
 * 100).
 *
 * @category tools
 * @since 0.2.0
 */
export const summarize = make({
  name: "model.summarize",
  description:
    "Summarize a text with the configured model, in at most maxWords words (default 100). Returns { summary }.",
  input: Schema.Struct({
    text: Schema.String,
    maxWords: Schema.optionalKey(Schema.Int.check(Schema.isGreaterThanOrEqualTo(1)))
  }),
  output: Schema.Struct({ summary: Schema.String }),
  objectName: "summary",
  prompt: ({ text, maxWords }) => [
    {
      role: "system",
      content: `You summarize texts faithfully: keep names, numbers and conclusions; add nothing. Use at most ${maxWords ?? 100} words. Answer with a JSON object {"summary": "..."}.`
    },
    { role: "user", content: [{ type: "text", text }] }
  ]
})

const ExtractInput = Schema.Struct({
  text: Schema.String,
  schema: Schema.Record(Schema.String, Schema.Unknown).annotate({
    description: "A JSON Schema (draft 2020-12) of the data to extract, e.g. an object with the fields you want."
  })
})

/** A caller's JSON Schema as a runtime schema; patterns are not enforced (a caller's regex could be slow). */
const schemaOf = (tool: string, json: Readonly<Record<string, unknown>>): Effect.Effect<AnySchema, UnsupportedSchema> =>
  Effect.try({
    try: () =>
      SchemaRepresentation.fromJsonSchemaDocument(JsonSchema.fromSchemaDraft2020_12(json as JsonSchema.JsonSchema), {
        patterns: "ignore"
      }) as AnySchema,
    catch: (error) => new UnsupportedSchema({ tool, problem: error instanceof Error ? error.message : String(error) })
  })

/**
 * `model.extract`: the data a caller-given JSON Schema describes, extracted
 * from a text and checked against that schema.
 *
 * @category tools
 * @since 0.2.0
 */
export const extract = Tool.make({
  name: "model.extract",
  description:
    "Extract structured data from a text with the configured model: give the text and a JSON Schema of the data; returns { data } checked against the schema.",
  input: ExtractInput,
  output: Schema.Struct({ data: Schema.Unknown }),
  failure: Schema.Union([ModelFailure, UnsupportedSchema]),
  trust: 0,
  effects: { callsNetwork: true },
  run: ({ text, schema }) =>
    Effect.gen(function* () {
      const output = yield* schemaOf("model.extract", schema)
      const data = yield* generate(
        "model.extract",
        [
          {
            role: "system",
            content:
              "You extract data from texts. Answer with JSON that fits the given schema, using only what the text says; leave out what it does not say unless the schema requires it."
          },
          { role: "user", content: [{ type: "text", text }] }
        ],
        output,
        "data"
      ).pipe(
        Effect.catchIf(
          (e): e is ModelCallFailed => e._tag === "ModelCallFailed" && e.reason === "UnsupportedSchemaError",
          (e) => Effect.fail(new UnsupportedSchema({ tool: "model.extract", problem: e.detail }))
        )
      )
      return { data }
    })
})

/** The family's tools, each running on the given model. */
const withModel = (model: LanguageModel.LanguageModel) => {
  const provide = <A, B, E, R>(tool: Tool.Tool<A, B, E, R>) =>
    Tool.wrap(tool, (run) => (input: A) => Effect.provideService(run(input), LanguageModel.LanguageModel, model))
  return { "model.summarize": provide(summarize), "model.extract": provide(extract) }
}

type Served = ReturnType<typeof withModel>
/** Every tool, or none (no model). */
type Offered = { readonly [K in keyof Served]?: Served[K] }

/**
 * The `model` family (prefix `world.tools`): `model.summarize` and
 * `model.extract`, offered only when the server has a model (a
 * `LanguageModel` in the context it builds families in; see
 * `Server.Options.model`). Without one, the family offers nothing.
 *
 * **Example** (No model, no tools)
 * ```ts
 * import { ModelTool } from "@ugent/agentese"
 * import { Scripted } from "@ugent/agentese/providers"
 * import { Effect } from "effect"
 * const without = Effect.runSync(Effect.scoped(ModelTool.family.build))
 * const withModel = Effect.runSync(Effect.scoped(ModelTool.family.build).pipe(Effect.provide(Scripted.replay([]))))
 * console.log(Object.keys(without), Object.keys(withModel))
 * // => [] [ 'model.summarize', 'model.extract' ]
 * ```
 *
 * @category families
 * @since 0.2.0
 */
// The record's type is given: inferred through the optional keys, the presenters would lose their output types.
export const family = Family.effect<Offered, never, never, never, never, never>({
  name: "model",
  prefix: "world.tools",
  tools: Effect.map(
    Effect.serviceOption(LanguageModel.LanguageModel),
    (model): Offered => (Option.isNone(model) ? {} : withModel(model.value))
  ),
  present: {
    "model.summarize": (o) => ({
      summary: `A summary of ${o.summary.split(/\s+/).length} words`
    }),
    "model.extract": () => ({ summary: "The extracted data" })
  }
})
