/**
 * A scripted model: an `effect/ai` `LanguageModel` that answers from a
 * script instead of a network, for tests, examples, laws and benchmarks.
 * Each request is shown to the script (the prompt, the names of the tools
 * offered, the response format a `generateObject` asks for) with its index,
 * and the script returns the parts of the answer: text, tool calls, a
 * finish with its usage. The same answer serves `generateText`,
 * `generateObject` (its text is the JSON) and `streamText` (its text is
 * streamed as deltas).
 *
 * @since 0.2.0
 */
import { Effect, Layer, Stream } from "effect"
import { type AiError, LanguageModel, type Prompt, type Response } from "effect/ai"

/**
 * What the model was asked.
 *
 * @category models
 * @since 0.2.0
 */
export interface Request {
  readonly prompt: Prompt.Prompt
  /** The names of the tools offered. */
  readonly tools: ReadonlyArray<string>
  /** `text`, or `json` with the schema a `generateObject` asks for. */
  readonly responseFormat: LanguageModel.ProviderOptions["responseFormat"]
}

/**
 * The parts of one answer, as a provider returns them.
 *
 * @category models
 * @since 0.2.0
 */
export type Reply = ReadonlyArray<Response.PartEncoded>

/**
 * A script: the answer to each request (the first has index 0).
 *
 * @category models
 * @since 0.2.0
 */
export type Script = (request: Request, index: number) => Reply | Effect.Effect<Reply, AiError.AiError>

/**
 * The usage a finish part reports, in tokens.
 *
 * @category models
 * @since 0.2.0
 */
export interface Usage {
  readonly input?: number | undefined
  readonly output?: number | undefined
}

const finish = (reason: Response.FinishReason, usage: Usage | undefined): Response.PartEncoded => ({
  type: "finish",
  reason,
  usage: {
    inputTokens: { uncached: undefined, total: usage?.input ?? 0, cacheRead: undefined, cacheWrite: undefined },
    outputTokens: { total: usage?.output ?? 0, text: undefined, reasoning: undefined }
  },
  response: undefined
})

/**
 * An answer of text, finishing with `stop`.
 *
 * @category replies
 * @since 0.2.0
 */
export const text = (value: string, usage?: Usage): Reply => [{ type: "text", text: value }, finish("stop", usage)]

/**
 * An answer that is a JSON value as text, as `generateObject` expects.
 *
 * @category replies
 * @since 0.2.0
 */
export const json = (value: unknown, usage?: Usage): Reply => text(JSON.stringify(value), usage)

/**
 * One tool call of an answer. `params` is what the model sent: an object, or
 * a string for arguments that are not JSON.
 *
 * @category models
 * @since 0.2.0
 */
export interface Call {
  readonly name: string
  readonly params: unknown
  readonly id?: string | undefined
}

/**
 * An answer of tool calls (with some text before them, if given), finishing
 * with `tool-calls`.
 *
 * @category replies
 * @since 0.2.0
 */
export const calls = (
  list: ReadonlyArray<Call>,
  options?: { readonly text?: string | undefined; readonly usage?: Usage | undefined }
): Reply => [
  ...(options?.text === undefined ? [] : [{ type: "text" as const, text: options.text }]),
  ...list.map(
    (c, i): Response.PartEncoded => ({ type: "tool-call", id: c.id ?? `call_${i}`, name: c.name, params: c.params })
  ),
  finish("tool-calls", options?.usage)
]

/** The answer as stream parts: text as start, delta and end; the other parts as they are. */
const streamed = (reply: Reply): Array<Response.StreamPartEncoded> =>
  reply.flatMap((part, i): Array<Response.StreamPartEncoded> => {
    switch (part.type) {
      case "text":
        return [
          { type: "text-start", id: `text_${i}` },
          { type: "text-delta", id: `text_${i}`, delta: part.text },
          { type: "text-end", id: `text_${i}` }
        ]
      case "reasoning":
        return [
          { type: "reasoning-start", id: `reasoning_${i}` },
          { type: "reasoning-delta", id: `reasoning_${i}`, delta: part.text },
          { type: "reasoning-end", id: `reasoning_${i}` }
        ]
      case "tool-call":
      case "finish":
      case "response-metadata":
        return [part]
      default:
        return []
    }
  })

/**
 * The `LanguageModel` of a script.
 *
 * **Example** (Replaying an answer)
 * ```ts
 * import { Scripted } from "@ugent/agentese/providers"
 * import { Effect } from "effect"
 * import { LanguageModel } from "effect/ai"
 * const model = Scripted.layer((request) => Scripted.text(`you said ${request.prompt.content.length} message(s)`))
 * const response = Effect.runSync(LanguageModel.generateText({ prompt: "hello" }).pipe(Effect.provide(model)))
 * console.log(response.text)
 * // => you said 1 message(s)
 * ```
 *
 * @category layers
 * @since 0.2.0
 */
export const layer = (script: Script): Layer.Layer<LanguageModel.LanguageModel> =>
  Layer.effect(
    LanguageModel.LanguageModel,
    Effect.suspend(() => {
      let index = 0
      const answer = (options: LanguageModel.ProviderOptions): Effect.Effect<Reply, AiError.AiError> => {
        const reply = script(
          { prompt: options.prompt, tools: options.tools.map((t) => t.name), responseFormat: options.responseFormat },
          index++
        )
        return Effect.isEffect(reply) ? reply : Effect.succeed(reply)
      }
      return LanguageModel.make({
        generateText: (options) => Effect.map(answer(options), (reply) => [...reply]),
        streamText: (options) =>
          Stream.unwrap(Effect.map(answer(options), (reply) => Stream.fromIterable(streamed(reply))))
      })
    })
  )

/**
 * The `LanguageModel` that gives these answers in turn; after the last, it
 * answers `(the script has ended)`.
 *
 * **Example** (A tool call, then an answer)
 * ```ts
 * import { Scripted } from "@ugent/agentese/providers"
 * import { Effect } from "effect"
 * import { LanguageModel } from "effect/ai"
 * const model = Scripted.replay([
 *   Scripted.calls([{ name: "world_tools_file_read", params: { path: "README.md" } }]),
 *   Scripted.text("It is a README.")
 * ])
 * const program = Effect.gen(function* () {
 *   const first = yield* LanguageModel.generateText({ prompt: "Read it", disableToolCallResolution: true, toolCallValidation: "deferred" })
 *   const second = yield* LanguageModel.generateText({ prompt: "And?" })
 *   return [first.toolCalls.map((c) => c.name), second.text]
 * })
 * console.log(Effect.runSync(program.pipe(Effect.provide(model))))
 * // => [ [ 'world_tools_file_read' ], 'It is a README.' ]
 * ```
 *
 * @category layers
 * @since 0.2.0
 */
export const replay = (replies: ReadonlyArray<Reply>): Layer.Layer<LanguageModel.LanguageModel> =>
  layer((_, index) => replies[index] ?? text("(the script has ended)"))
