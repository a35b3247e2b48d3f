/**
 * The raw OpenAI adapter: the paths a caller is offered, as the `tools` of
 * the Chat Completions API (`{ type: "function", function: { … } }`) and of
 * the Responses API (the flat `{ type: "function", name, … }`), in strict
 * mode where a path's input allows it (every object closed, every property
 * required, an optional one nullable), and `handleToolCall(name,
 * argumentsJson)`, which maps a provider name back to its path, turns strict
 * arguments back into the path's input, calls `Invoker.invoke` in the
 * conversation's session, and returns the text to send back: the result, or
 * the failure's JSON (`_tag`, `message` saying what to do next, fields),
 * which the model reads. Nothing is thrown for a failed call, and nothing
 * here imports an OpenAI client: the definitions are plain JSON for the
 * official `openai` client or any other.
 *
 * A call that needs approval asks the server's approver
 * (`Server.Options.approver`).
 *
 * @since 0.2.0
 */
import type { Boundary } from "@ugent/core"
import type * as Invoke from "../Invoke.ts"
import { callByName, connect, contentOf, definitionOf, disposable, type Options } from "./internal/connection.ts"

export type {
  /** @since 0.2.0 */
  Options,
  /** @since 0.2.0 */
  Runtime
} from "./internal/connection.ts"

/**
 * A function tool of the Chat Completions API.
 *
 * @category models
 * @since 0.2.0
 */
export interface ChatCompletionsTool {
  readonly type: "function"
  readonly function: {
    readonly name: string
    readonly description: string
    readonly parameters: Boundary.ObjectSchema
    readonly strict: boolean
  }
}

/**
 * A function tool of the Responses API (the flat shape).
 *
 * @category models
 * @since 0.2.0
 */
export interface ResponsesTool {
  readonly type: "function"
  readonly name: string
  readonly description: string
  readonly parameters: Boundary.ObjectSchema
  readonly strict: boolean
}

/**
 * The tools of a conversation and the handler of their calls. Disposing them
 * ends a session they started and a server they built (`await using`).
 *
 * @category models
 * @since 0.2.0
 */
export interface OpenAiTools extends AsyncDisposable {
  /** `tools` for `chat.completions.create`. */
  readonly chatCompletions: Array<ChatCompletionsTool>
  /** `tools` for `responses.create`. */
  readonly responses: Array<ResponsesTool>
  /**
   * Runs a model's call (`tool_calls[i].function.name` and `.arguments`, or a
   * `function_call` item's `name` and `arguments`) through the road and
   * returns the content to send back.
   */
  readonly handleToolCall: (name: string, argumentsJson: string) => Promise<string>
  /** The same call, with its outcome (`ok`, `kind`, the `callId` of its audit record). */
  readonly call: (name: string, argumentsJson: string) => Promise<Invoke.Outcome>
}

/**
 * How the tools are defined.
 *
 * @category models
 * @since 0.2.0
 */
export interface ToolOptions {
  /**
   * Offer tools in OpenAI's strict mode where a path's input has a strict
   * form (default `true`; servers that do not know strict mode ignore it).
   */
  readonly strict?: boolean | undefined
}

/**
 * The OpenAI tools of the caller's offers: exactly the paths
 * `Invoker.list` offers it, under their provider-safe names, and the handler
 * of their calls. Build them once per conversation: they share the
 * conversation's session, so a file the model read can be written without a
 * proof token.
 *
 * **Example** (Definitions and a call)
 * ```ts
 * import { toOpenAiTools } from "@ugent/agentese/adapters/openai"
 * import { mkdtempSync, writeFileSync } from "node:fs"
 * import { tmpdir } from "node:os"
 * import { join } from "node:path"
 * const root = mkdtempSync(join(tmpdir(), "ugent-"))
 * writeFileSync(join(root, "hello.txt"), "hello\n")
 * await using tools = await toOpenAiTools({ server: { root, stores: "memory" } })
 * const read = tools.responses.find((t) => t.name === "world_tools_file_read")!
 * console.log(read.strict, read.parameters.required)
 * // => true [ 'path', 'offset', 'limit', 'startLine', 'endLine' ]
 * const content = await tools.handleToolCall("world_tools_file_read", '{"path":"hello.txt","offset":null,"limit":null}')
 * console.log(JSON.parse(content).content)
 * // => 1	hello
 * ```
 *
 * @category constructors
 * @since 0.2.0
 */
export const toOpenAiTools = async (options: Options & ToolOptions): Promise<OpenAiTools> => {
  const connection = await connect(options)
  const definitions = new Map(
    connection.served.map((served) => [served.path, definitionOf(served, options.strict ?? true, "openai")])
  )
  const all = [...definitions.values()]
  const call = callByName(connection, definitions)
  return disposable(
    {
      chatCompletions: all.map(
        (d): ChatCompletionsTool => ({
          type: "function",
          function: { name: d.name, description: d.description, parameters: d.parameters, strict: d.strict }
        })
      ),
      responses: all.map(
        (d): ResponsesTool => ({
          type: "function",
          name: d.name,
          description: d.description,
          parameters: d.parameters,
          strict: d.strict
        })
      ),
      call,
      handleToolCall: async (name: string, argumentsJson: string) => contentOf(await call(name, argumentsJson))
    },
    connection.dispose
  )
}
