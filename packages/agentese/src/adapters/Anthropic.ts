/**
 * The raw Anthropic adapter: the paths a caller is offered, as the `tools` of
 * the Messages API (`{ name, description, input_schema }`, in strict tool use
 * when asked), and the handlers of a model's `tool_use` blocks: each maps the
 * provider name back to its path, calls `Invoker.invoke` in the
 * conversation's session, and returns what to send back: the text of the
 * result or of the failure's JSON (`_tag`, `message` saying what to do next,
 * fields), or a whole `tool_result` block (`is_error: true` for a failure).
 * Nothing is thrown for a failed call, and nothing here imports an Anthropic
 * client: the definitions are plain JSON.
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
 * A tool of the Messages API.
 *
 * @category models
 * @since 0.2.0
 */
export interface AnthropicTool {
  readonly name: string
  readonly description: string
  readonly input_schema: Boundary.ObjectSchema
  readonly strict?: true
}

/**
 * A `tool_result` block answering a `tool_use` block.
 *
 * @category models
 * @since 0.2.0
 */
export interface ToolResult {
  readonly type: "tool_result"
  readonly tool_use_id: string
  readonly content: string
  readonly is_error?: true
}

/**
 * The tools of a conversation and the handlers of their calls. Disposing
 * them ends a session they started and a server they built (`await using`).
 *
 * @category models
 * @since 0.2.0
 */
export interface AnthropicTools extends AsyncDisposable {
  /** `tools` for `messages.create`. */
  readonly tools: Array<AnthropicTool>
  /** Runs a `tool_use` block's call (its `name`, and its `input` or JSON text) and returns the content to send back. */
  readonly handleToolCall: (name: string, input: unknown) => Promise<string>
  /** Runs a `tool_use` block and returns its `tool_result` block. */
  readonly handleToolUse: (block: {
    readonly id: string
    readonly name: string
    readonly input: unknown
  }) => Promise<ToolResult>
  /** The same call, with its outcome (`ok`, `kind`, the `callId` of its audit record). */
  readonly call: (name: string, input: unknown) => Promise<Invoke.Outcome>
}

/**
 * How the tools are defined.
 *
 * @category models
 * @since 0.2.0
 */
export interface ToolOptions {
  /**
   * Offer tools in Anthropic's strict tool use where a path's input has a
   * strict form (default `false`: not every model supports it).
   */
  readonly strict?: boolean | undefined
}

/**
 * The Anthropic tools of the caller's offers: exactly the paths
 * `Invoker.list` offers it, under their provider-safe names, and the handlers
 * of their calls. Build them once per conversation: they share the
 * conversation's session, so a file the model read can be written without a
 * proof token.
 *
 * **Example** (A tool_use block answered)
 * ```ts
 * import { toAnthropicTools } from "@ugent/agentese/adapters/anthropic"
 * import { mkdtempSync, writeFileSync } from "node:fs"
 * import { tmpdir } from "node:os"
 * import { join } from "node:path"
 * const root = mkdtempSync(join(tmpdir(), "ugent-"))
 * writeFileSync(join(root, "hello.txt"), "hello\n")
 * await using tools = await toAnthropicTools({ server: { root, stores: "memory" } })
 * console.log(tools.tools.some((t) => t.name === "world_tools_file_write"))
 * // => false
 * const result = await tools.handleToolUse({ id: "toolu_1", name: "world_tools_file_write", input: { path: "hello.txt", content: "x" } })
 * console.log(result.is_error, JSON.parse(result.content)._tag)
 * // => true TrustDenied
 * ```
 *
 * @category constructors
 * @since 0.2.0
 */
export const toAnthropicTools = async (options: Options & ToolOptions): Promise<AnthropicTools> => {
  const connection = await connect(options)
  const definitions = new Map(
    connection.served.map((served) => [served.path, definitionOf(served, options.strict ?? false, "anthropic")])
  )
  const call = callByName(connection, definitions)
  return disposable(
    {
      tools: [...definitions.values()].map(
        (d): AnthropicTool =>
          d.strict
            ? { name: d.name, description: d.description, input_schema: d.parameters, strict: true }
            : { name: d.name, description: d.description, input_schema: d.parameters }
      ),
      call,
      handleToolCall: async (name: string, input: unknown) => contentOf(await call(name, input)),
      handleToolUse: async (block: { readonly id: string; readonly name: string; readonly input: unknown }) => {
        const outcome = await call(block.name, block.input)
        const content = contentOf(outcome)
        return outcome.ok
          ? { type: "tool_result", tool_use_id: block.id, content }
          : { type: "tool_result", tool_use_id: block.id, content, is_error: true }
      }
    },
    connection.dispose
  )
}
