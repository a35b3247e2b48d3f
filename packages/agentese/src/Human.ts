/**
 * The human channel: how the road reaches the person behind a caller, for a
 * confirmation (an L2 write, a recipe's `requireApproval`, an irreversible
 * tool) and for a question a model asks (`self.tools.clarify`). One channel
 * serves both. Each projection brings its own:
 *
 * - MCP: the client's elicitation (a form shown to the user), when the
 *   client supports it;
 * - HTTP: the pending questions of the server (`GET /v1/pending`, `POST
 *   /v1/pending/{id}`, announced on `/v1/events`), answered by an operator
 *   who holds the approver's token, never by the agent's own credentials;
 * - CLI: a prompt on the terminal, when standard input is one.
 *
 * A question not answered within its time is no answer, and an approval
 * without an answer is a denial. A model cannot answer a question itself:
 * no tool or path it can call answers one.
 *
 * @since 0.2.0
 */
import { randomUUID } from "node:crypto"
import { createInterface } from "node:readline"
import { ReadProof, Trust } from "@ugent/core"
import { ApprovalStore } from "@ugent/wrappers"
import { Clock, Context, Deferred, Duration, Effect, Layer, Option, Schema } from "effect"
import * as Render from "./Render.ts"

/**
 * What is asked of the person.
 *
 * @category models
 * @since 0.2.0
 */
export interface Question {
  /** `approval`: may this call run? `clarify`: a model's question. */
  readonly kind: "approval" | "clarify"
  readonly text: string
  /** The answers to pick from, if any (for an approval: approve or deny). */
  readonly choices?: ReadonlyArray<string> | undefined
  /** Who asks (the caller's id) and, for an approval, which path and input. */
  readonly observerId: string
  readonly path?: string | undefined
  readonly input?: unknown
  /** For an approval, the arguments in one line a person reads (see {@link argumentsLine}). */
  readonly arguments?: string | undefined
  /** For a stored approval request, its id: the question is filed under it, so any channel answers the same one. */
  readonly id?: string | undefined
}

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

/**
 * A call's input as JSON a person can be shown: a read proof as its token,
 * bytes as their size. The road's approvals carry the decoded input, which
 * holds values JSON does not (`GET /v1/pending` failed on a proof).
 *
 * @category showing
 * @since 0.2.0
 */
export const jsonOf = (input: unknown, depth = 0): unknown => {
  if (ReadProof.isProofLike(input)) return input.token
  if (input instanceof Uint8Array) return `<${input.byteLength} bytes>`
  if (typeof input === "bigint") return String(input)
  if (typeof input === "function" || typeof input === "symbol") return undefined
  if (depth > 32) return "…"
  if (Array.isArray(input)) return input.map((v) => jsonOf(v, depth + 1) ?? null)
  if (isRecord(input)) {
    const out: Record<string, unknown> = {}
    for (const [k, v] of Object.entries(input)) {
      const shown = jsonOf(v, depth + 1)
      if (shown !== undefined) out[k] = shown
    }
    return out
  }
  return input
}

/** One value, short: long text cut with its length, a proof as `rp1.…`, nested values up to two levels. */
const shortValue = (value: unknown, depth: number): string => {
  if (ReadProof.isProofLike(value) || (typeof value === "string" && value.startsWith(ReadProof.tokenPrefix))) {
    return `${ReadProof.tokenPrefix}…`
  }
  if (typeof value === "string") {
    return value.length <= 60
      ? JSON.stringify(value)
      : `${JSON.stringify(value.slice(0, 60)).slice(0, -1)}…" (${value.length} characters)`
  }
  if (Array.isArray(value)) {
    if (depth >= 2) return `[${value.length} items]`
    const items = value.slice(0, 3).map((v) => shortValue(v, depth + 1))
    return `[${items.join(", ")}${value.length > 3 ? `, … ${value.length} items` : ""}]`
  }
  if (isRecord(value)) return depth >= 2 ? "{…}" : `{${entriesLine(value, depth + 1)}}`
  return String(jsonOf(value))
}

const entriesLine = (input: Record<string, unknown>, depth: number): string =>
  Object.entries(input)
    .map(([k, v]) => `${k}: ${shortValue(v, depth)}`)
    .join(", ")

/**
 * A call's arguments in one line, for a person asked to approve it: each
 * key with its value, long text cut (with its length), a proof as `rp1.…`,
 * the whole at most `max` characters.
 *
 * **Example** (An edit waiting for approval)
 * ```ts
 * import { Human } from "@ugent/agentese"
 * console.log(Human.argumentsLine({ path: "a.md", oldText: "alpha", newText: "ALPHA", proof: "rp1.abc.def" }))
 * // => path: "a.md", oldText: "alpha", newText: "ALPHA", proof: rp1.…
 * ```
 *
 * @category showing
 * @since 0.2.0
 */
export const argumentsLine = (input: unknown, max = 400): string => {
  const line = isRecord(input) ? entriesLine(input, 0) : shortValue(input, 0)
  return line.length <= max ? line : `${line.slice(0, max - 1)}…`
}

/**
 * What came back.
 *
 * @category models
 * @since 0.2.0
 */
export type Answer =
  | { readonly _tag: "Answered"; readonly answer: string }
  | { readonly _tag: "Declined" }
  | { readonly _tag: "NoAnswer"; readonly reason: "timeout" | "no-channel" }

/**
 * A way to ask a person.
 *
 * @category models
 * @since 0.2.0
 */
export interface Channel {
  /** A short name for messages: `mcp-elicitation`, `http-pending`, `terminal`. */
  readonly name: string
  readonly ask: (question: Question) => Effect.Effect<Answer>
}

/**
 * The channel of the current call, set by the projection that serves it;
 * none by default.
 *
 * @category services
 * @since 0.2.0
 */
export const Current = Context.Reference<Option.Option<Channel>>("ugent/agentese/Human/Current", {
  defaultValue: () => Option.none()
})

/**
 * How long a question waits for an answer (default 120 s for a question;
 * approvals wait `Trust.ApprovalTimeout`, 30 s by default).
 *
 * @category services
 * @since 0.2.0
 */
export const QuestionTimeout = Context.Reference<Duration.Duration>("ugent/agentese/Human/QuestionTimeout", {
  defaultValue: () => Duration.seconds(120)
})

/**
 * Asks through the current channel, within `timeout`.
 *
 * **Example** (No channel: no answer)
 * ```ts
 * import { Human } from "@ugent/agentese"
 * import { Effect } from "effect"
 * const answer = Effect.runSync(Human.ask({ kind: "clarify", text: "Which branch?", observerId: "a" }, "1 second"))
 * console.log(answer)
 * // => { _tag: 'NoAnswer', reason: 'no-channel' }
 * ```
 *
 * @category asking
 * @since 0.2.0
 */
export const ask = (question: Question, timeout: Duration.Input): Effect.Effect<Answer> =>
  Effect.flatMap(Current, (channel) =>
    Option.isNone(channel)
      ? Effect.succeed<Answer>({ _tag: "NoAnswer", reason: "no-channel" })
      : Effect.timeoutOrElse(channel.value.ask(question), {
          duration: timeout,
          orElse: () => Effect.succeed<Answer>({ _tag: "NoAnswer", reason: "timeout" })
        })
  )

const approve = "approve"
const deny = "deny"

/** A text cut to `max` characters, saying how much was left out. */
const clip = (text: string, max: number) =>
  text.length <= max ? text : `${text.slice(0, max)}\n… (${text.length - max} more characters)`

/**
 * What a person is asked to approve: who runs what and why it is asked, the
 * arguments (without the read proof, which says nothing to a person) and,
 * when the road could get it, the change the call would make.
 *
 * **Example** (An edit to approve)
 * ```ts
 * import { Human } from "@ugent/agentese"
 * const text = Human.approvalText({
 *   tool: "world.tools.file.edit",
 *   observer: { id: "agent", trust: 2 },
 *   input: { path: "a.txt", oldText: "one", newText: "two", proof: "rp1.x.y" },
 *   reason: "confirmation",
 *   detail: "world.tools.file.edit needs L2; the caller runs at L2, where each such call is confirmed.",
 *   preview: "@@ -1 +1 @@\n-one\n+two"
 * })
 * console.log(text.split("\n"))
 * // => [ 'agent asks to run world.tools.file.edit: world.tools.file.edit needs L2; the caller runs at L2, where each such call is confirmed.', '', 'Arguments:', '  path: a.txt', '  oldText: one', '  newText: two', '', 'The change:', '@@ -1 +1 @@', '-one', '+two', '', 'Approve?' ]
 * ```
 *
 * @category approving
 * @since 0.2.0
 */
export const approvalText = (request: Trust.ApprovalRequest): string => {
  let args = ""
  try {
    const shown = JSON.parse(JSON.stringify(request.input ?? {}, (k, v) => (k === "proof" ? undefined : v)))
    args = Render.outline(shown, Render.audience({}))
  } catch {
    // An input that does not print as JSON is not shown.
  }
  const lines = [`${request.observer.id} asks to run ${request.tool}: ${request.detail}`]
  if (args !== "" && args !== "(empty)") {
    lines.push(
      "",
      "Arguments:",
      ...clip(args, 4_000)
        .split("\n")
        .map((l) => `  ${l}`)
    )
  }
  if (request.preview !== undefined) lines.push("", "The change:", clip(request.preview.replace(/\n+$/, ""), 8_000))
  if (request.id !== undefined) {
    lines.push(
      "",
      `Request ${request.id}: answer here, or later with \`ugent approve ${request.id}\` (--deny to refuse).`
    )
  }
  lines.push("", "Approve?")
  return lines.join("\n")
}

/**
 * Whether an answer approves: `approve`, `yes` or `y`, in any case.
 *
 * @category approving
 * @since 0.2.0
 */
export const isApproval = (answer: string) => ["approve", "yes", "y"].includes(answer.trim().toLowerCase())

/**
 * The approver the road installs: it asks the current call's channel, and
 * says there is no approver when the call has no channel (so the call is
 * denied with that reason). A timeout is a denial (`Trust.requestApproval`
 * applies `ApprovalTimeout`).
 *
 * @category layers
 * @since 0.2.0
 */
export const approverLayer: Layer.Layer<never> = Layer.succeed(Trust.Approver, {
  approve: (request): Effect.Effect<boolean | "no-approver"> =>
    Effect.flatMap(
      Current,
      (channel): Effect.Effect<boolean | "no-approver"> =>
        Option.isNone(channel)
          ? Effect.succeed("no-approver" as const)
          : Effect.map(
              channel.value.ask({
                kind: "approval",
                text: approvalText(request),
                choices: [approve, deny],
                observerId: request.observer.id,
                path: request.tool,
                input: jsonOf(request.input),
                arguments: argumentsLine(request.input),
                ...(request.id !== undefined ? { id: request.id } : {})
              }),
              (answer) => answer._tag === "Answered" && isApproval(answer.answer)
            )
    )
})

// ---------------------------------------------------------------------------
// HTTP: pending questions
// ---------------------------------------------------------------------------

/**
 * A question waiting for an answer, as `GET /v1/pending` lists it.
 *
 * @category schemas
 * @since 0.2.0
 */
export const PendingQuestion = Schema.Struct({
  id: Schema.String,
  kind: Schema.Literals(["approval", "clarify"]),
  text: Schema.String,
  choices: Schema.optionalKey(Schema.Array(Schema.String)),
  observerId: Schema.String,
  path: Schema.optionalKey(Schema.String),
  /** The call's input as JSON (a read proof as its token). */
  input: Schema.optionalKey(Schema.Unknown),
  /** The call's arguments in one line, for the person who answers. */
  arguments: Schema.optionalKey(Schema.String),
  askedAt: Schema.Number,
  /** For a stored approval request: when it expires (epoch milliseconds), the diff it would make, the files it binds. */
  expiresAt: Schema.optionalKey(Schema.Number),
  preview: Schema.optionalKey(Schema.String),
  files: Schema.optionalKey(Schema.Array(ApprovalStore.BoundFile))
}).annotate({ identifier: "PendingQuestion" })

/**
 * @category models
 * @since 0.2.0
 */
export type PendingQuestion = typeof PendingQuestion.Type

/**
 * A stored approval request as a pending question.
 *
 * @category approving
 * @since 0.2.0
 */
export const pendingOf = (a: ApprovalStore.Approval): PendingQuestion => ({
  id: a.id,
  kind: "approval",
  text: a.text,
  choices: [approve, deny],
  observerId: a.observerId,
  path: a.tool,
  input: a.input,
  arguments: a.arguments,
  askedAt: a.createdAt,
  expiresAt: a.expiresAt,
  ...(a.preview === undefined ? {} : { preview: a.preview }),
  files: a.files
})

/**
 * @category models
 * @since 0.2.0
 */
export interface PendingShape {
  /** The channel that files questions here. */
  readonly channel: Channel
  readonly list: Effect.Effect<ReadonlyArray<PendingQuestion>>
  /** Answers a question; false when no such question waits (answered, timed out, unknown). */
  readonly answer: (id: string, answer: string | "declined") => Effect.Effect<boolean>
  /** Called with each new question (the server publishes it as an event). */
  readonly onAsked: (listener: (question: PendingQuestion) => Effect.Effect<void>) => Effect.Effect<void>
}

/**
 * The pending questions of a server.
 *
 * @category services
 * @since 0.2.0
 */
export class Pending extends Context.Service<Pending, PendingShape>()("ugent/agentese/Human/Pending") {}

/**
 * Pending questions in memory: each waits for `answer` (or its asker's
 * timeout, after which it is gone).
 *
 * **Example** (A question answered from elsewhere)
 * ```ts
 * import { Human } from "@ugent/agentese"
 * import { Effect, Fiber, Option } from "effect"
 * const program = Effect.gen(function* () {
 *   const pending = yield* Human.Pending
 *   const asking = yield* Effect.forkChild(
 *     Human.ask({ kind: "clarify", text: "Which branch?", observerId: "a" }, "5 seconds").pipe(
 *       Effect.provideService(Human.Current, Option.some(pending.channel))
 *     )
 *   )
 *   yield* Effect.yieldNow
 *   const [question] = yield* pending.list
 *   yield* pending.answer(question!.id, "main")
 *   return yield* Fiber.join(asking)
 * })
 * console.log(Effect.runSync(program.pipe(Effect.provide(Human.layerPending))))
 * // => { _tag: 'Answered', answer: 'main' }
 * ```
 *
 * @category layers
 * @since 0.2.0
 */
export const layerPending: Layer.Layer<Pending> = Layer.sync(Pending, () => {
  const waiting = new Map<string, { readonly question: PendingQuestion; readonly reply: Deferred.Deferred<Answer> }>()
  const listeners = new Set<(question: PendingQuestion) => Effect.Effect<void>>()
  const channel: Channel = {
    name: "http-pending",
    ask: (q) =>
      Effect.gen(function* () {
        const reply = yield* Deferred.make<Answer>()
        const question: PendingQuestion = {
          id: q.id ?? `q-${randomUUID().slice(0, 12)}`,
          kind: q.kind,
          text: q.text,
          ...(q.choices !== undefined ? { choices: q.choices } : {}),
          observerId: q.observerId,
          ...(q.path !== undefined ? { path: q.path } : {}),
          // Kept as JSON: the list is sent as it is.
          ...(q.input !== undefined ? { input: jsonOf(q.input) } : {}),
          ...(q.arguments !== undefined ? { arguments: q.arguments } : {}),
          askedAt: yield* Clock.currentTimeMillis
        }
        waiting.set(question.id, { question, reply })
        yield* Effect.forEach(listeners, (listener) => listener(question), { discard: true })
        return yield* Effect.ensuring(
          Deferred.await(reply),
          Effect.sync(() => waiting.delete(question.id))
        )
      })
  }
  return Pending.of({
    channel,
    list: Effect.sync(() => [...waiting.values()].map((w) => w.question)),
    answer: (id, answer) =>
      Effect.suspend(() => {
        const w = waiting.get(id)
        if (w === undefined) return Effect.succeed(false)
        waiting.delete(id)
        return Deferred.succeed(w.reply, answer === "declined" ? { _tag: "Declined" } : { _tag: "Answered", answer })
      }),
    onAsked: (listener) => Effect.sync(() => void listeners.add(listener))
  })
})

// ---------------------------------------------------------------------------
// MCP: elicitation
// ---------------------------------------------------------------------------

/**
 * The channel of an MCP client that supports elicitation: the question as
 * a form (a choice, or a text field) the client shows its user. `elicit`
 * sends an `elicitation/create` request with these params and returns the
 * client's result (`action`, `content`).
 *
 * @category channels
 * @since 0.2.0
 */
export const elicitation = (
  elicit: (params: Readonly<Record<string, unknown>>) => Effect.Effect<Readonly<Record<string, unknown>>, unknown>
): Channel => ({
  name: "mcp-elicitation",
  ask: (q) => {
    const field =
      q.choices !== undefined && q.choices.length > 0
        ? { type: "string", title: "Answer", enum: [...q.choices] }
        : { type: "string", title: "Answer" }
    return elicit({
      message: q.text,
      requestedSchema: { type: "object", properties: { answer: field }, required: ["answer"] }
    }).pipe(
      Effect.map((result): Answer => {
        if (result.action !== "accept") return { _tag: "Declined" }
        const answer = (result.content as { readonly answer?: unknown } | undefined)?.answer
        return typeof answer === "string" ? { _tag: "Answered", answer } : { _tag: "Declined" }
      }),
      // A client that fails to show the form gave no answer.
      Effect.catchCause(() => Effect.succeed<Answer>({ _tag: "Declined" }))
    )
  }
})

// ---------------------------------------------------------------------------
// CLI: the terminal
// ---------------------------------------------------------------------------

/**
 * A prompt on the terminal: the question on stderr, the answer read from
 * standard input (only when it is a terminal: piped input is never taken
 * for an answer).
 *
 * @category channels
 * @since 0.2.0
 */
export const terminal = (
  input: NodeJS.ReadableStream & { readonly isTTY?: boolean } = process.stdin,
  output: NodeJS.WritableStream = process.stderr
): Option.Option<Channel> =>
  input.isTTY !== true
    ? Option.none()
    : Option.some({
        name: "terminal",
        ask: (q) =>
          Effect.callback<Answer>((resume) => {
            const rl = createInterface({ input, output, terminal: true })
            const choices = q.choices === undefined ? "" : ` [${q.choices.join("/")}]`
            // The text already shows what is approved (approvalText): its arguments and its diff.
            rl.question(`ugent: ${q.text}${choices} `, (line) => {
              rl.close()
              const answer = line.trim()
              resume(Effect.succeed(answer === "" ? { _tag: "Declined" } : { _tag: "Answered", answer }))
            })
            return Effect.sync(() => rl.close())
          })
      })
