/**
 * A scripted model on loopback: an HTTP server speaking the four APIs the
 * coding agents call (Anthropic Messages, OpenAI Responses, OpenAI Chat
 * Completions, Gemini's generateContent), streaming or not. Each request
 * holds the whole conversation, so the next step is worked out from it alone:
 * the script ({@link plan}) and, after a result that names a page to read
 * next, that page. Every request that lists the MCP server's tools is kept,
 * so what the client passed its model is read from the last one.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"

/** One tool call the model made and the result the client passed back. */
export interface Exchange {
  readonly name: string
  readonly args: Record<string, unknown>
  /** The result as the model received it (a string, content blocks, or an object). */
  readonly result: unknown
}

/** A conversation as the model saw it: the tools the client listed and the calls so far. */
export interface Conversation {
  readonly api: "anthropic" | "responses" | "chat" | "gemini"
  readonly tools: ReadonlyArray<string>
  /** Tools named to the model but not yet loaded (Claude Code's deferred tools, loaded with ToolSearch). */
  readonly deferred: ReadonlyArray<string>
  readonly exchanges: ReadonlyArray<Exchange>
}

/** What the model does next. */
export type Step = { readonly tool: string; readonly args: Record<string, unknown> } | { readonly text: string }

/** A step of the script: a tool (by the end of its listed name) and its arguments. */
interface Planned {
  readonly tool: string
  readonly args: Record<string, unknown>
}

/** The session: two large reads, a small read and an edit, and a read of a secret file. */
export const plan: ReadonlyArray<Planned> = [
  { tool: "world_tools_file_read", args: { path: "big86k.txt" } },
  { tool: "world_tools_file_read", args: { path: "big1m.txt" } },
  { tool: "world_tools_file_read", args: { path: "notes.md" } },
  { tool: "world_tools_file_edit", args: { path: "notes.md", oldText: "status: draft", newText: "status: done" } },
  { tool: "world_tools_file_read", args: { path: ".env" } }
]

/** The most pages followed after one read (a 1 MB file in Codex's pages of about 9 KB is about 116). */
const mostPages = 150

/** The most requests in one session (the script needs about 130 with Codex). */
const mostRequests = 300

/** Every string in a value, strings that hold JSON opened too (a client may pass the content list as JSON text). */
export const stringsIn = (value: unknown): Array<string> => {
  if (typeof value === "string") {
    const t = value.trim()
    if ((t.startsWith("{") || t.startsWith("[")) && t.length > 1) {
      try {
        return [value, ...stringsIn(JSON.parse(t))]
      } catch {
        return [value]
      }
    }
    return [value]
  }
  if (Array.isArray(value)) return value.flatMap(stringsIn)
  if (typeof value === "object" && value !== null) return Object.values(value).flatMap(stringsIn)
  return []
}

/** The text a model reads of a result: a string as it is, anything else its strings on lines. */
export const seenText = (result: unknown): string =>
  typeof result === "string" ? result : stringsIn(result).join("\n")

/** A hint to read a page of working memory: the tool named and its arguments. */
export const pageHint = (
  text: string
): { readonly named: string; readonly args: Record<string, unknown> } | undefined => {
  const m = /([A-Za-z0-9_.-]*self[._]memory[._]read) (\{[^}\n]*\})/.exec(text)
  if (m === null) return undefined
  try {
    return { named: m[1]!, args: JSON.parse(m[2]!) as Record<string, unknown> }
  } catch {
    return undefined
  }
}

/**
 * The listed tool whose name ends with `suffix` (Claude Code lists `mcp__ugent__…`, opencode `ugent_…`); a tool
 * in a namespace (Codex's `mcp__ugent`) is `namespace/name`.
 */
export const listedAs = (tools: ReadonlyArray<string>, suffix: string): string | undefined =>
  tools.find((t) => t === suffix || t.endsWith(`/${suffix}`)) ?? tools.find((t) => t.endsWith(`_${suffix}`))

/** Whether `name` is a tool's name exactly as the model was given it (in a namespace: its name there). */
export const isListed = (tools: ReadonlyArray<string>, name: string): boolean =>
  tools.some((t) => t === name || t.endsWith(`/${name}`))

/** Whether a call is one of the MCP server's tools (not the client's own, like ToolSearch). */
export const isServers = (name: string): boolean => /(^|[_/])(world_tools|self)_/.test(name)

/** The next step of the script, from the conversation so far. */
export const next = (c: Conversation): Step => {
  let index = 0
  let pages = 0
  let step: Planned | undefined = plan[0]
  for (const e of c.exchanges) {
    if (!isServers(e.name)) continue
    const hint = pageHint(seenText(e.result))
    if (hint !== undefined && pages < mostPages && step !== undefined) {
      pages++
      step = { tool: "self_memory_read", args: hint.args }
    } else {
      pages = 0
      index++
      step = plan[index]
    }
  }
  if (step === undefined) return { text: "Done." }
  const tool = listedAs(c.tools, step.tool)
  if (tool === undefined && listedAs(c.deferred, step.tool) !== undefined && c.tools.includes("ToolSearch")) {
    // Load the script's tools, as a model does with Claude Code's deferred tools.
    const names = [...plan.map((p) => p.tool), "self_memory_read"].flatMap((t) => listedAs(c.deferred, t) ?? [])
    return { tool: "ToolSearch", args: { query: `select:${[...new Set(names)].join(",")}` } }
  }
  if (tool === undefined) return { text: `No tool ending in ${step.tool} is listed.` }
  return { tool, args: step.args }
}

const record = (v: unknown): Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {}
const list = (v: unknown): ReadonlyArray<unknown> => (Array.isArray(v) ? v : [])
const parseArgs = (v: unknown): Record<string, unknown> => {
  if (typeof v === "string") {
    try {
      return record(JSON.parse(v))
    } catch {
      return {}
    }
  }
  return record(v)
}

/** Anthropic Messages: tool_use blocks in the assistant's turns, tool_result blocks in the user's. */
const anthropic = (body: Record<string, unknown>): Conversation => {
  const tools = list(body.tools).map((t) => String(record(t).name))
  const calls = new Map<string, { name: string; args: Record<string, unknown> }>()
  const exchanges: Array<Exchange> = []
  for (const m of list(body.messages)) {
    for (const block of list(record(m).content)) {
      const b = record(block)
      if (b.type === "tool_use") calls.set(String(b.id), { name: String(b.name), args: record(b.input) })
      if (b.type === "tool_result") {
        const call = calls.get(String(b.tool_use_id))
        if (call !== undefined) exchanges.push({ ...call, result: b.content })
      }
    }
  }
  const deferred = [
    ...stringsIn([body.system, body.messages])
      .join("\n")
      .matchAll(/^(mcp__[A-Za-z0-9_-]+)$/gm)
  ].map((m) => m[1]!)
  return { api: "anthropic", tools, deferred, exchanges }
}

/** OpenAI Responses: function_call and function_call_output items. */
const responses = (body: Record<string, unknown>): Conversation => {
  const tools = list(body.tools).flatMap((t) => {
    const r = record(t)
    // A namespace of tools lists its own tools under it.
    if (Array.isArray(r.tools)) return list(r.tools).map((s) => `${String(r.name ?? "")}/${String(record(s).name)}`)
    return [String(r.name)]
  })
  const calls = new Map<string, { name: string; args: Record<string, unknown> }>()
  const exchanges: Array<Exchange> = []
  for (const item of list(body.input)) {
    const i = record(item)
    if (i.type === "function_call") {
      calls.set(String(i.call_id), {
        name: `${i.namespace === undefined ? "" : `${String(i.namespace)}/`}${String(i.name)}`,
        args: parseArgs(i.arguments)
      })
    }
    if (i.type === "function_call_output") {
      const call = calls.get(String(i.call_id))
      if (call !== undefined) exchanges.push({ ...call, result: i.output })
    }
  }
  return { api: "responses", tools, deferred: [], exchanges }
}

/** OpenAI Chat Completions: the assistant's tool_calls and the tool messages. */
const chat = (body: Record<string, unknown>): Conversation => {
  const tools = list(body.tools).map((t) => String(record(record(t).function).name))
  const calls = new Map<string, { name: string; args: Record<string, unknown> }>()
  const exchanges: Array<Exchange> = []
  for (const m of list(body.messages)) {
    const r = record(m)
    for (const c of list(r.tool_calls)) {
      const f = record(record(c).function)
      calls.set(String(record(c).id), { name: String(f.name), args: parseArgs(f.arguments) })
    }
    if (r.role === "tool") {
      const call = calls.get(String(r.tool_call_id))
      if (call !== undefined) exchanges.push({ ...call, result: r.content })
    }
  }
  return { api: "chat", tools, deferred: [], exchanges }
}

/** Gemini: functionCall parts in the model's turns, functionResponse parts in the user's. */
const gemini = (body: Record<string, unknown>): Conversation => {
  const tools = list(body.tools).flatMap((t) => list(record(t).functionDeclarations).map((d) => String(record(d).name)))
  const pending: Array<{ name: string; args: Record<string, unknown> }> = []
  const exchanges: Array<Exchange> = []
  for (const c of list(body.contents)) {
    for (const part of list(record(c).parts)) {
      const p = record(part)
      if (p.functionCall !== undefined) {
        const f = record(p.functionCall)
        pending.push({ name: String(f.name), args: record(f.args) })
      }
      if (p.functionResponse !== undefined) {
        const call = pending.shift()
        const f = record(p.functionResponse)
        exchanges.push({ name: call?.name ?? String(f.name), args: call?.args ?? {}, result: f.response })
      }
    }
  }
  return { api: "gemini", tools, deferred: [], exchanges }
}

const sse = (res: ServerResponse, events: ReadonlyArray<readonly [string | undefined, unknown]>) => {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" })
  for (const [event, data] of events) {
    res.write(
      `${event === undefined ? "" : `event: ${event}\n`}data: ${typeof data === "string" ? data : JSON.stringify(data)}\n\n`
    )
  }
  res.end()
}

const json = (res: ServerResponse, status: number, data: unknown) => {
  res.writeHead(status, { "content-type": "application/json" })
  res.end(JSON.stringify(data))
}

let counter = 0
const id = (prefix: string) => `${prefix}_${(++counter).toString(36).padStart(6, "0")}`

const answerAnthropic = (res: ServerResponse, body: Record<string, unknown>, step: Step) => {
  const mid = id("msg")
  const block =
    "tool" in step ? { type: "tool_use", id: id("toolu"), name: step.tool, input: {} } : { type: "text", text: "" }
  const usage = { input_tokens: 10, output_tokens: 10 }
  const stop = "tool" in step ? "tool_use" : "end_turn"
  const message = {
    id: mid,
    type: "message",
    role: "assistant",
    model: String(body.model),
    stop_reason: null,
    stop_sequence: null,
    usage
  }
  if (body.stream !== true) {
    const content = "tool" in step ? [{ ...block, input: step.args }] : [{ type: "text", text: step.text }]
    return json(res, 200, { ...message, content, stop_reason: stop })
  }
  const delta =
    "tool" in step
      ? { type: "input_json_delta", partial_json: JSON.stringify(step.args) }
      : { type: "text_delta", text: step.text }
  sse(res, [
    ["message_start", { type: "message_start", message: { ...message, content: [] } }],
    ["content_block_start", { type: "content_block_start", index: 0, content_block: block }],
    ["content_block_delta", { type: "content_block_delta", index: 0, delta }],
    ["content_block_stop", { type: "content_block_stop", index: 0 }],
    [
      "message_delta",
      { type: "message_delta", delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: 10 } }
    ],
    ["message_stop", { type: "message_stop" }]
  ])
}

const answerResponses = (res: ServerResponse, body: Record<string, unknown>, step: Step) => {
  const rid = id("resp")
  let item: Record<string, unknown>
  if ("tool" in step) {
    // A tool listed inside a namespace is called by its own name within it.
    const slash = step.tool.indexOf("/")
    const space = slash === -1 ? undefined : { name: step.tool.slice(0, slash) }
    const name = step.tool.slice(slash + 1)
    item = {
      type: "function_call",
      id: id("fc"),
      call_id: id("call"),
      name,
      ...(space === undefined ? {} : { namespace: String(space.name) }),
      arguments: JSON.stringify(step.args),
      status: "completed"
    }
  } else {
    item = {
      type: "message",
      id: id("m"),
      role: "assistant",
      status: "completed",
      content: [{ type: "output_text", text: step.text, annotations: [] }]
    }
  }
  const usage = {
    input_tokens: 10,
    output_tokens: 10,
    total_tokens: 20,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens_details: { reasoning_tokens: 0 }
  }
  const response = {
    id: rid,
    object: "response",
    status: "completed",
    model: String(body.model),
    output: [item],
    usage
  }
  if (body.stream !== true) return json(res, 200, response)
  sse(res, [
    ["response.created", { type: "response.created", response: { ...response, status: "in_progress", output: [] } }],
    ["response.output_item.added", { type: "response.output_item.added", output_index: 0, item }],
    ["response.output_item.done", { type: "response.output_item.done", output_index: 0, item }],
    ["response.completed", { type: "response.completed", response }]
  ])
}

const answerChat = (res: ServerResponse, body: Record<string, unknown>, step: Step) => {
  const cid = id("chatcmpl")
  const base = {
    id: cid,
    object: "chat.completion.chunk",
    created: Math.floor(Date.now() / 1000),
    model: String(body.model)
  }
  const call =
    "tool" in step
      ? { id: id("call"), type: "function", function: { name: step.tool, arguments: JSON.stringify(step.args) } }
      : undefined
  const finish = call === undefined ? "stop" : "tool_calls"
  const usage = { prompt_tokens: 10, completion_tokens: 10, total_tokens: 20 }
  if (body.stream !== true) {
    const message =
      call === undefined
        ? { role: "assistant", content: "text" in step ? step.text : "" }
        : { role: "assistant", content: null, tool_calls: [call] }
    return json(res, 200, {
      ...base,
      object: "chat.completion",
      choices: [{ index: 0, message, finish_reason: finish }],
      usage
    })
  }
  const delta =
    call === undefined
      ? { role: "assistant", content: "text" in step ? step.text : "" }
      : { role: "assistant", tool_calls: [{ index: 0, ...call }] }
  sse(res, [
    [undefined, { ...base, choices: [{ index: 0, delta, finish_reason: null }] }],
    [undefined, { ...base, choices: [{ index: 0, delta: {}, finish_reason: finish }], usage }],
    [undefined, "[DONE]"]
  ])
}

const answerGemini = (res: ServerResponse, streaming: boolean, step: Step, text: string | undefined) => {
  const part = "tool" in step ? { functionCall: { name: step.tool, args: step.args } } : { text: text ?? step.text }
  const chunk = {
    candidates: [{ content: { role: "model", parts: [part] }, finishReason: "STOP", index: 0 }],
    usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 10, totalTokenCount: 20 },
    modelVersion: "scripted"
  }
  if (streaming) return sse(res, [[undefined, chunk]])
  json(res, 200, chunk)
}

/** What the model saw in one session. */
export interface Seen {
  latest: Conversation | undefined
  requests: number
  readonly first: Array<Exchange>
}

/** The model's server: its URL, the conversations it saw (by API), and a way to stop it. */
export interface Model {
  readonly url: string
  /**
   * The last request that listed tools, how many there were, and each call's result as the model first saw it
   * (a client may later mask or compact old results: Gemini CLI does).
   */
  readonly seen: Seen
  /** Requests by method and path, for a client that asks for something else first. */
  readonly log: Array<string>
  /** The last request's body, to see what a client sent. */
  readonly last: { body: unknown }
  readonly close: () => Promise<void>
}

const readBody = (req: IncomingMessage): Promise<string> =>
  new Promise((resolve, reject) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")))
    req.on("error", reject)
  })

/** Starts the scripted model on 127.0.0.1 (a free port). */
export const start = async (): Promise<Model> => {
  const seen: Seen = { latest: undefined, requests: 0, first: [] }
  const log: Array<string> = []
  const last: { body: unknown } = { body: undefined }
  const server: Server = createServer((req, res) => {
    void readBody(req).then((raw) => {
      const url = new URL(req.url ?? "/", "http://127.0.0.1")
      log.push(`${req.method} ${url.pathname}`)
      let body: Record<string, unknown> = {}
      try {
        body = raw === "" ? {} : record(JSON.parse(raw))
      } catch {
        return json(res, 400, { error: { message: "not JSON" } })
      }
      const path = url.pathname
      last.body = body
      const keep = (c: Conversation): Step => {
        if (c.tools.length === 0) return next(c)
        seen.latest = c
        seen.requests++
        seen.first.push(...c.exchanges.slice(seen.first.length))
        // A client that loses the thread would loop: the script ends.
        if (seen.requests > mostRequests) return { text: "Stopped: too many requests." }
        return next({ ...c, exchanges: seen.first.slice(0, c.exchanges.length) })
      }
      if (path.endsWith("/messages/count_tokens")) return json(res, 200, { input_tokens: 100 })
      if (path.endsWith("/messages")) return answerAnthropic(res, body, keep(anthropic(body)))
      if (path.endsWith("/responses")) return answerResponses(res, body, keep(responses(body)))
      if (path.endsWith("/chat/completions")) {
        const c = chat(body)
        // A request without tools (a title, a summary) gets a line of text.
        return answerChat(res, body, c.tools.length === 0 ? { text: "Scripted session" } : keep(c))
      }
      if (path.includes(":countTokens")) return json(res, 200, { totalTokens: 100 })
      if (path.includes(":generateContent") || path.includes(":streamGenerateContent")) {
        const c = gemini(body)
        const streaming = path.includes(":streamGenerateContent")
        // Gemini CLI asks, without tools, who speaks next and how to route: the user, and the default model.
        if (c.tools.length === 0) {
          const reply = JSON.stringify({
            reasoning: "scripted",
            next_speaker: "user",
            model_choice: "flash",
            complexity_reasoning: "scripted",
            complexity_score: 1
          })
          return answerGemini(res, streaming, { text: reply }, reply)
        }
        return answerGemini(res, streaming, keep(c), undefined)
      }
      if (path.endsWith("/models")) return json(res, 200, { object: "list", data: [], models: [] })
      json(res, 404, { error: { message: `the scripted model does not serve ${path}` } })
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    log,
    last,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}
