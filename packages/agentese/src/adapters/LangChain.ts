/**
 * The LangChain.js adapter (`@langchain/core` 1): the paths a caller is
 * offered, as LangChain `DynamicStructuredTool`s for `model.bindTools(tools)`,
 * LangGraph's `ToolNode` and `createAgent`. Each tool has the provider-safe
 * name of its path, the path's JSON Schema as its schema, and a function that
 * calls `Invoker.invoke` in the conversation's session, so a model's calls
 * take the road: policy, trust, approval, limits, audit, events and the
 * result budget.
 *
 * Invoked with a tool call (`tool.invoke(call)`), a tool answers with a
 * `ToolMessage` whose `content` is the result (JSON text), or the failure's
 * JSON with `status: "error"`, and whose `artifact` is the call's outcome
 * (with the `callId` of its audit record). LangChain checks the arguments
 * against the schema before the call (a misfit is its
 * `ToolInputParsingException`, which LangGraph's `ToolNode` returns to the
 * model). LangChain's core has no approval step: a call that needs approval
 * asks the server's approver (`Server.Options.approver`).
 *
 * `@langchain/core` is an optional peer dependency: this module is
 * `@ugent/agentese/adapters/langchain`, and nothing else imports it.
 *
 * @since 0.2.0
 */
import { ToolMessage } from "@langchain/core/messages"
import { DynamicStructuredTool, type ToolRunnableConfig } from "@langchain/core/tools"
import { type Connection, connect, contentOf, disposable, type Options, type Served } from "./internal/connection.ts"

export type {
  /** @since 0.2.0 */
  Options,
  /** @since 0.2.0 */
  Runtime
} from "./internal/connection.ts"

/**
 * A LangChain tool of a served path: it takes the path's input (an object)
 * and answers with a `ToolMessage` when invoked with a tool call, else with
 * the content text.
 *
 * @category models
 * @since 0.2.0
 */
export type PathTool = DynamicStructuredTool<Record<string, unknown>, unknown, unknown, string | ToolMessage>

/**
 * The tools of a conversation, in path order. Disposing them ends a session
 * they started and a server they built (`await using`).
 *
 * @category models
 * @since 0.2.0
 */
export type LangChainTools = ReadonlyArray<PathTool> & AsyncDisposable

const toTool = (connection: Connection, served: Served): PathTool =>
  new DynamicStructuredTool<Record<string, unknown>, unknown, unknown, string | ToolMessage>({
    name: served.name,
    description: served.offer.description,
    schema: served.shape.schema,
    metadata: {
      "ugent/path": served.path,
      "ugent/trust": served.offer.requiredTrust,
      "ugent/approval": served.approval !== "never"
    },
    func: async (input, _runManager, config?: ToolRunnableConfig) => {
      const outcome = await connection.call(served.path, served.shape.unwrap(input), { signal: config?.signal })
      const content = contentOf(outcome)
      const id = config?.toolCall?.id
      if (id === undefined) return content
      return new ToolMessage({
        content,
        status: outcome.ok ? "success" : "error",
        artifact: outcome,
        tool_call_id: id,
        name: served.name
      })
    }
  })

/**
 * The LangChain tools of the caller's offers: exactly the paths
 * `Invoker.list` offers it (a path the caller may not use is not there),
 * under their provider-safe names. Build them once per conversation: they
 * share the conversation's session, so a file the model read can be
 * written without a proof token.
 *
 * **Example** (A tool call answered with a ToolMessage)
 * ```ts
 * import { toLangChainTools } from "@ugent/agentese/adapters/langchain"
 * import { mkdtempSync, writeFileSync } from "node:fs"
 * import { tmpdir } from "node:os"
 * import { join } from "node:path"
 * const root = mkdtempSync(join(tmpdir(), "ugent-"))
 * writeFileSync(join(root, "hello.txt"), "hello\n")
 * await using tools = await toLangChainTools({ server: { root, stores: "memory" } })
 * const read = tools.find((t) => t.name === "world_tools_file_read")!
 * const message = await read.invoke({ type: "tool_call", id: "c1", name: read.name, args: { path: "hello.txt" } })
 * console.log(message.status, JSON.parse(message.content as string).content)
 * // => success 1	hello
 * ```
 *
 * @category constructors
 * @since 0.2.0
 */
export const toLangChainTools = async (options: Options): Promise<LangChainTools> => {
  const connection = await connect(options)
  return disposable(
    connection.served.map((served) => toTool(connection, served)),
    connection.dispose
  )
}
