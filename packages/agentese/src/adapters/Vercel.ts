/**
 * The Vercel AI SDK adapter (`ai` 7): the paths a caller is offered, as a
 * record of AI SDK tools for `generateText`, `streamText` and
 * `ToolLoopAgent`. Each tool has the provider-safe name of its path, the
 * path's JSON Schema (through `jsonSchema()`), and an `execute` that calls
 * `Invoker.invoke` in the conversation's session, so a model's calls take the
 * road: policy, trust, approval, limits, audit, events and the result budget.
 * A failure goes back to the model as its JSON (`error-json`), never as a
 * thrown error.
 *
 * Approval: a path whose calls the road puts to a person (a recipe's
 * `requireApproval`, an irreversible tool, an L2 caller's writes) is marked
 * `needsApproval`, so the SDK stops with a `tool-approval-request` and runs
 * the call only after a `tool-approval-response` with `approved: true`; that
 * response, found in the conversation the SDK hands to `execute`, answers
 * the road's own question. A call without one asks the server's approver.
 *
 * `ai` is an optional peer dependency: this module is
 * `@ugent/agentese/adapters/vercel`, and nothing else imports it.
 *
 * @since 0.2.0
 */
import { type JSONSchema7, type JSONValue, jsonSchema, type ModelMessage, type Tool, tool } from "ai"
import type * as Invoke from "../Invoke.ts"
import { type Connection, connect, disposable, type Options, type Served } from "./internal/connection.ts"

export type {
  /** @since 0.2.0 */
  Options,
  /** @since 0.2.0 */
  Runtime
} from "./internal/connection.ts"

/**
 * An AI SDK tool of a served path: any input (the road decodes it), the
 * call's outcome as its output (`ok`, `result` or `error`, `kind`, `path`,
 * `callId` of the audit record); the model sees the result, or the failure
 * as `error-json`.
 *
 * @category models
 * @since 0.2.0
 */
export type PathTool = Tool<unknown, Invoke.Outcome>

/**
 * The tools of a conversation, by provider-safe name. Disposing them ends a
 * session they started and a server they built (`await using`).
 *
 * @category models
 * @since 0.2.0
 */
export type VercelTools = Record<string, PathTool> & AsyncDisposable

/**
 * Whether the conversation holds a person's approval of this tool call: an
 * approval request for the call in an assistant message and an approving
 * response to it. (An automatic approval by `toolApproval: "approved"` is
 * not in the conversation `execute` sees, so the server's approver decides.)
 */
const approvedIn = (messages: ReadonlyArray<ModelMessage>, toolCallId: string): boolean => {
  const requests = new Set<string>()
  for (const message of messages) {
    if (message.role !== "assistant" || typeof message.content === "string") continue
    for (const part of message.content) {
      if (part.type === "tool-approval-request" && part.toolCallId === toolCallId) requests.add(part.approvalId)
    }
  }
  if (requests.size === 0) return false
  return messages.some(
    (message) =>
      message.role === "tool" &&
      message.content.some(
        (part) => part.type === "tool-approval-response" && requests.has(part.approvalId) && part.approved
      )
  )
}

const toTool = (connection: Connection, served: Served): PathTool =>
  tool<unknown, Invoke.Outcome, {}>({
    description: served.offer.description,
    // The road's input schemas are JSON Schema documents (draft 2020-12) with an object root.
    inputSchema: jsonSchema<unknown>(served.shape.schema as JSONSchema7),
    metadata: {
      "ugent/path": served.path,
      "ugent/trust": served.offer.requiredTrust,
      "ugent/approval": served.approval !== "never"
    },
    ...(served.approval === "never"
      ? {}
      : { needsApproval: served.approval === "always" ? true : (input: unknown) => served.needsApproval(input) }),
    execute: (input, options) =>
      connection.call(served.path, served.shape.unwrap(input), {
        approved: approvedIn(options.messages, options.toolCallId),
        signal: options.abortSignal
      }),
    // The outcome's result and error are plain JSON, encoded by the road. `FailureJson` types its extra
    // fields `unknown` (they are each error's own), which TypeScript will not narrow to JSONValue.
    toModelOutput: ({ output }) =>
      output.ok
        ? { type: "json", value: output.result as JSONValue }
        : { type: "error-json", value: output.error as unknown as JSONValue }
  })

/**
 * The AI SDK tools of the caller's offers: exactly the paths `Invoker.list`
 * offers it (a path the caller may not use is not there), under their
 * provider-safe names. Build them once per conversation: they share the
 * conversation's session, so a file the model read can be written without
 * a proof token.
 *
 * **Example** (A model's tool call runs on the road)
 * ```ts
 * import { toVercelTools } from "@ugent/agentese/adapters/vercel"
 * import { generateText, stepCountIs } from "ai"
 * import { MockLanguageModelV4 } from "ai/test"
 * import { mkdtempSync, writeFileSync } from "node:fs"
 * import { tmpdir } from "node:os"
 * import { join } from "node:path"
 * const root = mkdtempSync(join(tmpdir(), "ugent-"))
 * writeFileSync(join(root, "hello.txt"), "hello\n")
 * const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined }, outputTokens: { total: 1, text: 1, reasoning: undefined } }
 * const model = new MockLanguageModelV4({
 *   doGenerate: [
 *     { content: [{ type: "tool-call", toolCallId: "c1", toolName: "world_tools_file_read", input: '{"path":"hello.txt"}' }], finishReason: { unified: "tool-calls", raw: undefined }, usage, warnings: [] },
 *     { content: [{ type: "text", text: "It says hello." }], finishReason: { unified: "stop", raw: undefined }, usage, warnings: [] }
 *   ]
 * })
 * await using tools = await toVercelTools({ server: { root, stores: "memory" } })
 * const result = await generateText({ model, tools, prompt: "What does hello.txt say?", stopWhen: stepCountIs(5) })
 * console.log(result.steps[0]?.toolResults[0]?.output.ok, result.text)
 * // => true It says hello.
 * ```
 *
 * @category constructors
 * @since 0.2.0
 */
export const toVercelTools = async (options: Options): Promise<VercelTools> => {
  const connection = await connect(options)
  const tools: Record<string, PathTool> = {}
  for (const served of connection.served) tools[served.name] = toTool(connection, served)
  return disposable(tools, connection.dispose)
}
