/**
 * An `Agent` runs one task to completion or to a budget: the model proposes
 * calls, the road runs them, the results go back to the model, and so on
 * until the model answers without a call or a budget runs out. The tools
 * offered are exactly the caller's offers (`Invoker.list`); every call, a
 * refused one included, goes through `Invoker.invoke` with a session of its
 * own, so trust, the recipe, approvals, rate limits, loop detection, audit,
 * traces and the result budget apply as on every projection, and the read
 * proofs one step was shown are supplied to the writes of the next.
 *
 * Budgets: steps (a step is one model response and the calls it asks for;
 * default 10), calls per response (the recipe's `maxCallsPerResponse`, else
 * 10: the calls beyond are not run and the model is told so), tokens (the
 * model's reported usage, input and output, over the run) and wall time
 * (default 5 minutes). When one runs out the result is {@link Incomplete}:
 * which budget, and what the model last asked for. A model's malformed call
 * (an unknown tool, arguments that are not a JSON object or do not decode)
 * comes back to it as a failed call whose message says how to correct it.
 * Each step is published on the road's `Events` as `agent.step`, the end as
 * `agent.done`.
 *
 * The calls of one response run in their order, except that consecutive
 * calls that only read (files, the network, a mounted server's read-only
 * tools; no approval to ask) run side by side: a write, a shell command or a
 * change of the caller's own state waits for the calls before it and runs
 * alone, so no write moves past a read. The results go back in the order
 * asked.
 *
 * @since 0.2.0
 */
import { randomUUID } from "node:crypto"
import { Family, Observer, Tool, ToolError, Trust } from "@ugent/core"
import { Traced } from "@ugent/wrappers"
import { Clock, Duration, Effect, Option, Schema } from "effect"
import {
  type AiError,
  Prompt as AiPrompt,
  type Tool as AiTool,
  type Toolkit as AiToolkit,
  LanguageModel,
  type Response
} from "effect/ai"
import { size } from "./Budget.ts"
import * as Catalog from "./Catalog.ts"
import * as Events from "./Events.ts"
import { type FailureOutcome, Invoker, type Offer, type Outcome, TooManyCalls } from "./Invoke.ts"
import * as Parse from "./Parse.ts"
import { toAiTool } from "./projections/Toolkit.ts"
import * as SystemPrompt from "./Prompt.ts"
import * as Recipe from "./Recipe.ts"
import * as Route from "./road/Route.ts"

// ---------------------------------------------------------------------------
// Errors a model's call can meet before the road
// ---------------------------------------------------------------------------

/**
 * The model called a tool by a name that is no path.
 *
 * @category errors
 * @since 0.2.0
 */
export class UnknownTool extends Schema.TaggedError<UnknownTool>()("UnknownTool", {
  name: Schema.String,
  offered: Schema.Array(Schema.String)
}) {
  static readonly kind: ToolError.Kind = "not_found"
  override get message(): string {
    return `There is no tool named ${JSON.stringify(this.name)}. Call one of the tools offered to you, by the name in your tool list${this.offered.length > 0 ? `, such as ${this.offered.join(", ")}` : ""}.`
  }
}

/**
 * The model's arguments are not a JSON object.
 *
 * @category errors
 * @since 0.2.0
 */
export class MalformedArguments extends Schema.TaggedError<MalformedArguments>()("MalformedArguments", {
  name: Schema.String,
  received: Schema.String,
  example: Schema.String
}) {
  static readonly kind: ToolError.Kind = "invalid_input"
  override get message(): string {
    return `The arguments of ${this.name} are not a JSON object (received ${this.received}). Call ${this.name} again with its arguments as one JSON object, such as ${this.example}.`
  }
}

/**
 * A call the model asked for after the run's budget of tool calls was spent:
 * not made; the model is asked to answer with what it has.
 *
 * @category errors
 * @since 0.2.0
 */
export class CallBudgetSpent extends Schema.TaggedError<CallBudgetSpent>()("CallBudgetSpent", {
  path: Schema.String,
  max: Schema.Int
}) {
  static readonly kind: ToolError.Kind = "rate_limited"
  override get message(): string {
    return `${this.path} was not called: this run may make at most ${this.max} tool calls, and they are spent. Answer now with what you have found, and say what you could not look at.`
  }
}

// ---------------------------------------------------------------------------
// Models
// ---------------------------------------------------------------------------

/**
 * How the model calls tools: through its API's tool calling (`native`, the
 * default), or by writing `EXECUTE:` lines, `<tool_call>` or `<tool_use>`
 * blocks in its text (`text`, for a model without tool calling; the system
 * prompt then shows the formats).
 *
 * @category models
 * @since 0.2.0
 */
export type CallMode = "native" | "text"

/**
 * How a run is set up. Only `prompt` is required.
 *
 * @category models
 * @since 0.2.0
 */
export interface Options {
  /** The task: a string, or a prompt (`effect/ai`'s `Prompt`) to continue. */
  readonly prompt: AiPrompt.RawInput
  /** The system prompt (default: `Prompt.system` of the caller's offers); `false` for none. */
  readonly system?: string | false | undefined
  /** The most steps (model responses); default 10. Zero steps return the prompt untouched. */
  readonly maxSteps?: number | undefined
  /** The most calls one response may make; default the recipe's `maxCallsPerResponse`, else 10. */
  readonly maxCallsPerResponse?: number | undefined
  /**
   * The most tool calls over the whole run; default no limit. Calls past it
   * are not made: the model is told the budget is spent and to answer with
   * what it has.
   */
  readonly maxCalls?: number | undefined
  /** The most tokens (input and output, as the model reports them) over the run; default no limit. */
  readonly maxTokens?: number | undefined
  /** The wall time of the whole run; default 5 minutes. */
  readonly timeout?: Duration.Input | undefined
  /** How the model calls tools (default `native`). */
  readonly calls?: CallMode | undefined
  /** Called after each step, before the next (to print progress). */
  readonly onStep?: ((step: Step) => Effect.Effect<void>) | undefined
}

/**
 * A call the model asked for, and how it came out (no outcome: a budget ran
 * out before it ran).
 *
 * @category models
 * @since 0.2.0
 */
export interface Call {
  /** The model's id of the call. */
  readonly id: string
  /** The name the model used (a text call: its path, or its pipeline). */
  readonly name: string
  /** The path it names, if it names one. */
  readonly path: string | undefined
  /** The arguments as the model sent them. */
  readonly input: unknown
  readonly outcome: Outcome | undefined
  /** How long the road took over the call, when it was made. */
  readonly durationMillis?: number | undefined
  /** The size of its result's text in bytes, when it succeeded. */
  readonly resultBytes?: number | undefined
}

/**
 * Tokens used, as the model reported them.
 *
 * @category models
 * @since 0.2.0
 */
export interface Usage {
  readonly inputTokens: number
  readonly outputTokens: number
}

/**
 * One step: a model response and the calls it asked for.
 *
 * @category models
 * @since 0.2.0
 */
export interface Step {
  /** The step's id: the run's id and its number (`agent-…/3`). */
  readonly id: string
  /** From 1. */
  readonly index: number
  /** The run's step budget: this is step `index` of at most `of`. */
  readonly of: number
  readonly text: string
  readonly calls: ReadonlyArray<Call>
  readonly usage: Usage
  readonly finishReason: Response.FinishReason
  readonly durationMillis: number
}

/**
 * A budget of a run.
 *
 * @category models
 * @since 0.2.0
 */
export type Budget = "steps" | "tokens" | "time"

/**
 * The budget that ran out: its limit and what was used (steps, tokens, or
 * milliseconds).
 *
 * @category models
 * @since 0.2.0
 */
export interface Missing {
  readonly budget: Budget
  readonly limit: number
  readonly used: number
}

interface Base {
  /** The run's id, also its session and the `id` of its events. */
  readonly id: string
  readonly steps: ReadonlyArray<Step>
  /** The conversation: the task, then each response and its results (no system prompt). */
  readonly prompt: AiPrompt.Prompt
  readonly usage: Usage
  readonly durationMillis: number
}

/**
 * The model answered without asking for a call.
 *
 * @category models
 * @since 0.2.0
 */
export interface Complete extends Base {
  readonly _tag: "Complete"
  /** The answer. */
  readonly text: string
}

/**
 * A budget ran out before the model answered.
 *
 * @category models
 * @since 0.2.0
 */
export interface Incomplete extends Base {
  readonly _tag: "Incomplete"
  /** The model's last text, if any. */
  readonly text: string
  readonly missing: Missing
  /** The calls of the last response (run, or not run when the budget ran out first). */
  readonly lastAsked: ReadonlyArray<Call>
  /** What is missing, in a sentence. */
  readonly message: string
}

/**
 * How a run ended.
 *
 * @category models
 * @since 0.2.0
 */
export type Result = Complete | Incomplete

/**
 * What a run needs: the model, the road and its caller, the events.
 *
 * @category models
 * @since 0.2.0
 */
export type Services = LanguageModel.LanguageModel | Invoker | Observer.Observer | Recipe.CurrentRecipe | Events.Events

/**
 * The defaults of a run.
 *
 * @category constants
 * @since 0.2.0
 */
export const defaults = {
  maxSteps: 10,
  maxCallsPerResponse: 10,
  timeout: Duration.minutes(5)
} as const

// ---------------------------------------------------------------------------
// Telling
// ---------------------------------------------------------------------------

const clip = (s: string, n: number) => (s.length > n ? `${s.slice(0, n)}…` : s)

/**
 * A call in a line: `world.tools.file.read {"path":"README.md"}`.
 *
 * @category telling
 * @since 0.2.0
 */
export const describeCall = (call: Pick<Call, "name" | "path" | "input">): string => {
  const input = typeof call.input === "string" ? call.input : (JSON.stringify(call.input) ?? "")
  return `${call.path ?? call.name} ${clip(input, 120)}`
}

/** The input's main argument, as a person names a call: its path, pattern, query, command or URL. */
const mainArgument = (input: unknown): string => {
  if (typeof input === "string") return clip(input, 60)
  if (typeof input !== "object" || input === null) return ""
  const record = input as Record<string, unknown>
  for (const key of ["path", "pattern", "query", "command", "url", "task", "id"]) {
    if (typeof record[key] === "string") return clip(record[key], 60)
  }
  const first = Object.values(record).find((v) => typeof v === "string")
  return typeof first === "string" ? clip(first, 60) : ""
}

/** A call's tool and main argument: `file.read(src/a.ts)`. */
const callHead = (call: Pick<Call, "name" | "path" | "input">): string => {
  const words = (call.path ?? call.name).split(" >> ").map((p) => p.split(".").slice(-2).join("."))
  return `${words.join(" >> ")}(${mainArgument(call.input)})`
}

/**
 * A call as the documents show a step's call: its tool (the last two words
 * of its path) with its main argument, then its size or its failure, and its
 * time: `file.read(src/a.ts) → 1.2 KB (35 ms)`.
 *
 * **Example** (A read and a refusal)
 * ```ts
 * import { Agent } from "@ugent/agentese"
 * const read = { id: "1", name: "world_tools_file_read", path: "world.tools.file.read", input: { path: "src/a.ts" }, outcome: { ok: true as const, result: {}, path: "world.tools.file.read", callId: "c1" }, durationMillis: 35, resultBytes: 1229 }
 * console.log(Agent.callLine(read))
 * // => file.read(src/a.ts) → 1.2 KB (35 ms)
 * const refused = { ...read, outcome: { ok: false as const, error: { _tag: "TrustDenied", message: "Needs L1. Ask for it." }, kind: "denied" as const, path: "world.tools.file.write", callId: "c2" }, path: "world.tools.file.write" }
 * console.log(Agent.callLine(refused))
 * // => file.write(src/a.ts) → TrustDenied (35 ms)
 * ```
 *
 * @category telling
 * @since 0.2.0
 */
export const callLine = (call: Call): string => {
  const head = callHead(call)
  const time = call.durationMillis === undefined ? "" : ` (${Math.round(call.durationMillis)} ms)`
  const o = call.outcome
  if (o === undefined) return `${head} → not run`
  if (!o.ok) return `${head} → ${o.error._tag}${time}`
  return `${head} → ${call.resultBytes === undefined ? "ok" : size(call.resultBytes)}${time}`
}

/**
 * A step's heading as the documents show it: `Step 3/5 (agent-…/3, 1.4 s)`.
 *
 * @category telling
 * @since 0.2.0
 */
export const stepHeading = (step: Step): string =>
  `Step ${step.index}/${step.of} (${step.id}, ${(step.durationMillis / 1000).toFixed(1)} s)`

const budgetText = (missing: Missing): string => {
  switch (missing.budget) {
    case "steps":
      return `the budget of ${missing.limit} step${missing.limit === 1 ? "" : "s"} ran out`
    case "tokens":
      return `the budget of ${missing.limit} tokens ran out (${missing.used} used)`
    case "time":
      return `the time budget of ${Duration.format(Duration.millis(missing.limit))} ran out`
  }
}

/**
 * What is missing from an incomplete run, in a sentence: the budget, and what
 * the model last asked for.
 *
 * **Example** (An incomplete run's message)
 * ```ts
 * import { Agent } from "@ugent/agentese"
 * const text = Agent.incompleteMessage({ budget: "steps", limit: 2, used: 2 }, [
 *   { id: "c1", name: "world_tools_file_read", path: "world.tools.file.read", input: { path: "DEVLOG.md" }, outcome: undefined }
 * ])
 * console.log(text)
 * // => Incomplete: the budget of 2 steps ran out before the model answered. It last asked for world.tools.file.read {"path":"DEVLOG.md"} (not run).
 * ```
 *
 * @category telling
 * @since 0.2.0
 */
export const incompleteMessage = (missing: Missing, lastAsked: ReadonlyArray<Call>): string => {
  const asked =
    lastAsked.length === 0
      ? ""
      : ` It last asked for ${lastAsked
          .map(
            (c) =>
              `${describeCall(c)}${c.outcome === undefined ? " (not run)" : c.outcome.ok ? "" : ` (${c.outcome.error._tag})`}`
          )
          .join("; ")}.`
  return `Incomplete: ${budgetText(missing)} before the model answered.${asked}`
}

// ---------------------------------------------------------------------------
// Calls
// ---------------------------------------------------------------------------

const failure = (path: string, error: unknown): FailureOutcome => ({
  ok: false,
  error: ToolError.toJson(error),
  kind: ToolError.kindOf(error),
  path,
  callId: ""
})

const tokensOf = (name: string) =>
  new Set(
    name
      .toLowerCase()
      .split(/[._\s-]+/)
      .filter((t) => t.length > 0)
  )

/** The offered names nearest a wrong one (by shared words), else the first few. */
const nearest = (name: string, names: ReadonlyArray<string>): ReadonlyArray<string> => {
  const wanted = tokensOf(name)
  const scored = names
    .map((n) => [n, [...tokensOf(n)].filter((t) => wanted.has(t)).length] as const)
    .filter(([, score]) => score > 0)
    .sort((a, b) => b[1] - a[1])
  return (scored.length > 0 ? scored.map(([n]) => n) : names).slice(0, 6)
}

/** A model's arguments in a message: the raw text or its JSON, cut short. */
const shown = (params: unknown): string =>
  clip(typeof params === "string" ? params : (JSON.stringify(params) ?? "undefined"), 100)

// ---------------------------------------------------------------------------
// The loop
// ---------------------------------------------------------------------------

interface Requested {
  readonly id: string
  readonly name: string
  readonly params: unknown
  /** A text call, already parsed. */
  readonly steps?: ReadonlyArray<Parse.Step> | undefined
  /** A text block that did not parse. */
  readonly parseError?: Parse.ParseError | undefined
}

/** What the loop reads of a response. */
interface Generated {
  readonly text: string
  readonly content: ReadonlyArray<Response.AnyPart>
  readonly usage: Response.Usage
  readonly finishReason: Response.FinishReason
}

const usageOf = (response: Generated): Usage => {
  const usage = response.usage
  return { inputTokens: usage.inputTokens.total ?? 0, outputTokens: usage.outputTokens.total ?? 0 }
}

const resultsMessage = (calls: ReadonlyArray<Call>): AiPrompt.Message =>
  AiPrompt.makeMessage("user", {
    content: [
      AiPrompt.makePart("text", {
        text: [
          ...calls.map((c) => {
            const ok = c.outcome?.ok === true
            const body = c.outcome === undefined ? null : c.outcome.ok ? c.outcome.result : c.outcome.error
            return `<tool_result name="${c.name}" ok="${ok}">\n${JSON.stringify(body)}\n</tool_result>`
          }),
          "Continue with the next calls, or answer without a call when you are done."
        ].join("\n")
      })
    ]
  })

const toolMessage = (calls: ReadonlyArray<Call>): AiPrompt.Message =>
  AiPrompt.makeMessage("tool", {
    content: calls.map((c) =>
      AiPrompt.makePart("tool-result", {
        id: c.id,
        name: c.name,
        isFailure: c.outcome?.ok !== true,
        result: c.outcome === undefined ? null : c.outcome.ok ? c.outcome.result : c.outcome.error,
        providerExecuted: false
      })
    )
  })

/**
 * Runs a task to completion or to a budget. The caller, its recipe and the
 * road come from the context (`Server.layer`); the model is the
 * `LanguageModel` in context. The run fails only when the model cannot
 * answer (an `AiError` after the provider's retries); a refused or failed
 * call is a result the model reads.
 *
 * **Example** (A scripted model reads a file, then answers)
 * ```ts
 * import { Agent, Server } from "@ugent/agentese"
 * import { Scripted } from "@ugent/agentese/providers"
 * import { Effect, Layer } from "effect"
 * import { mkdtempSync, writeFileSync } from "node:fs"
 * import { tmpdir } from "node:os"
 * import { join } from "node:path"
 * const root = mkdtempSync(join(tmpdir(), "ugent-"))
 * writeFileSync(join(root, "notes.md"), "tea\n")
 * const model = Scripted.replay([
 *   Scripted.calls([{ name: "world_tools_file_read", params: { path: "notes.md" } }]),
 *   Scripted.text("The notes say: tea.")
 * ])
 * const result = await Effect.runPromise(
 *   Agent.run({ prompt: "What do the notes say?" }).pipe(Effect.provide(Layer.merge(model, Server.layer({ root, stores: "memory" }))))
 * )
 * console.log(result._tag, result.text, result.steps.map((s) => s.calls.map(Agent.describeCall)))
 * // => Complete The notes say: tea. [ [ 'world.tools.file.read {"path":"notes.md"}' ], [] ]
 * ```
 *
 * @category running
 * @since 0.2.0
 */
export const run = (options: Options): Effect.Effect<Result, AiError.AiError, Services> =>
  Effect.gen(function* () {
    const prompt = AiPrompt.make(options.prompt)
    const maxSteps = Math.max(0, options.maxSteps ?? defaults.maxSteps)
    const timeoutMillis = Duration.toMillis(Duration.fromInputUnsafe(options.timeout ?? defaults.timeout))
    const mode = options.calls ?? "native"
    const road = yield* Invoker
    const recipe = yield* Recipe.CurrentRecipe
    const observer = yield* Observer.Observer
    const events = yield* Events.Events
    const started = yield* Clock.currentTimeMillis
    const id = `agent-${randomUUID()}`
    const maxCalls = options.maxCallsPerResponse ?? recipe.maxCallsPerResponse ?? defaults.maxCallsPerResponse

    // What the run has done so far: kept outside the timed part, so a timeout still tells it.
    const steps: Array<Step> = []
    let conversation = prompt
    let usage: Usage = { inputTokens: 0, outputTokens: 0 }
    let pending: ReadonlyArray<Call> = []
    let lastText = ""
    let callsMade = 0

    const finish = (result: Result) =>
      Effect.gen(function* () {
        yield* road.endSession(id)
        yield* events.publish({
          _tag: "agent.done",
          id,
          observerId: observer.id,
          at: started + result.durationMillis,
          status: result._tag === "Complete" ? "complete" : "incomplete",
          ...(result._tag === "Incomplete" ? { missing: result.missing.budget } : {}),
          steps: result.steps.length,
          calls: result.steps.reduce((n, s) => n + s.calls.length, 0),
          inputTokens: result.usage.inputTokens,
          outputTokens: result.usage.outputTokens,
          durationMillis: result.durationMillis,
          message: result._tag === "Complete" ? clip(result.text, 2000) : result.message
        })
        return result
      })

    const incomplete = (missing: Missing, lastAsked: ReadonlyArray<Call>) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) =>
        finish({
          _tag: "Incomplete",
          id,
          steps,
          prompt: conversation,
          usage,
          durationMillis: now - started,
          text: lastText,
          missing,
          lastAsked,
          message: incompleteMessage(missing, lastAsked)
        })
      )

    // A loop with no steps is the identity on the prompt: nothing is asked, nothing runs.
    if (maxSteps === 0) return yield* incomplete({ budget: "steps", limit: 0, used: 0 }, [])

    const offers = yield* road.list
    const offeredNames = offers.map((o) => Catalog.toolName(o.path))
    const aiTools: Record<string, AiTool.Any> = {}
    for (const offer of offers) {
      const tool = toAiTool(offer)
      if (Option.isSome(tool)) aiTools[tool.value.name] = tool.value
    }
    // The agent runs each call itself (budgets first, then the road), so the toolkit only describes them.
    const toolkit: AiToolkit.WithHandler<Record<string, AiTool.Any>> = {
      tools: aiTools,
      handle: () => Effect.die(new Error("Agent: tool calls are run by the agent, not by the toolkit"))
    }
    const system =
      options.system === false
        ? undefined
        : (options.system ??
          SystemPrompt.system({
            offers,
            budgetTokens: (yield* road.settings).budgetTokens,
            maxCallsPerResponse: maxCalls,
            formats: mode === "text"
          }))
    const systemPrompt =
      system === undefined
        ? AiPrompt.empty
        : AiPrompt.fromMessages([AiPrompt.makeMessage("system", { content: system })])

    const generate = (
      request: AiPrompt.Prompt
    ): Effect.Effect<Generated, AiError.AiError, LanguageModel.LanguageModel> =>
      mode === "native"
        ? // The toolkit's handlers are never run (resolution is off), so the services they would need are not needed.
          (LanguageModel.generateText({
            prompt: request,
            toolkit,
            disableToolCallResolution: true,
            toolCallValidation: "deferred"
          }) as Effect.Effect<Generated, AiError.AiError, LanguageModel.LanguageModel>)
        : LanguageModel.generateText({ prompt: request })

    /** One call through the road, or the reason it could not be made. */
    const runCall = (
      requested: Requested,
      alternatives: ReadonlyArray<string> = []
    ): Effect.Effect<Call, never, Observer.Observer | Recipe.CurrentRecipe> =>
      Effect.gen(function* () {
        const { id: callId, name, params } = requested
        const started = yield* Clock.currentTimeNanos
        const call = (path: string | undefined, outcome: Outcome): Call => ({
          id: callId,
          name,
          path,
          input: params,
          outcome
        })
        const timed = <R>(path: string, made: Effect.Effect<Outcome, never, R>) =>
          Effect.flatMap(made, (outcome) =>
            Effect.map(Clock.currentTimeNanos, (now) => ({
              ...call(path, outcome),
              durationMillis: Math.round(Number(now - started) / 1e4) / 100,
              // The size of what the road printed, the step's "→ 1.2 KB".
              ...(outcome.ok
                ? {
                    resultBytes: Buffer.byteLength(
                      outcome.modelText ?? outcome.text ?? JSON.stringify(outcome.result) ?? ""
                    )
                  }
                : {})
            }))
          )
        if (requested.parseError !== undefined) return call(undefined, failure("", requested.parseError))
        if (requested.steps !== undefined) {
          const path = requested.steps.map((s) => s.path).join(" >> ")
          return yield* timed(path, road.invoke({ steps: requested.steps, input: {}, session: id, alternatives }))
        }
        const path = Catalog.pathOf(name)
        // A name that is no registered path is told with the name the model wrote; a registered path the caller
        // is not offered still goes to the road, which refuses it and records the refusal.
        if (Option.isNone(path) || road.registry.get(path.value) === undefined) {
          return call(undefined, failure("", new UnknownTool({ name, offered: nearest(name, offeredNames) })))
        }
        const offer: Offer | undefined = offers.find((o) => o.path === path.value)
        if (!Catalog.isRecord(params)) {
          const example = offer === undefined ? "{}" : SystemPrompt.exampleInput(offer)
          return call(
            path.value,
            failure(path.value, new MalformedArguments({ name, received: shown(params), example }))
          )
        }
        const input = offer === undefined ? params : Catalog.inputShape(offer.input).unwrap(params)
        return yield* timed(path.value, road.invoke({ path: path.value, input, session: id, alternatives }))
      })

    /** Whether a call only reads (every step), with no person to ask: it may run beside the other reads. */
    const readsOnly = (requested: Requested, recipe: Recipe.Recipe): boolean => {
      if (requested.parseError !== undefined) return true
      const paths =
        requested.steps !== undefined
          ? requested.steps.flatMap(Parse.callsOf).map((s) => s.path)
          : Option.toArray(Catalog.pathOf(requested.name))
      return paths.every((path) => {
        const entry = road.registry.get(path)
        // A name that is no path fails without running anything.
        if (entry === undefined) return true
        const decision = Recipe.decide(recipe, path, Catalog.baseLevel(entry))
        const asks = decision._tag === "Allowed" && (decision.approval || decision.requiredTrust >= 2)
        return Route.runsBeside(entry) && !asks
      })
    }

    const loop: Effect.Effect<
      Result,
      AiError.AiError,
      LanguageModel.LanguageModel | Observer.Observer | Recipe.CurrentRecipe
    > = Effect.gen(function* () {
      const recipe = yield* Recipe.CurrentRecipe
      for (let index = 1; index <= maxSteps; index++) {
        const stepStarted = yield* Clock.currentTimeMillis
        const request = AiPrompt.concat(systemPrompt, conversation)
        const response = yield* generate(request)
        const stepUsage = usageOf(response)
        usage = {
          inputTokens: usage.inputTokens + stepUsage.inputTokens,
          outputTokens: usage.outputTokens + stepUsage.outputTokens
        }
        lastText = response.text
        conversation = AiPrompt.concat(conversation, AiPrompt.fromResponseParts(response.content))

        let requested: Array<Requested> = []
        if (mode === "native") {
          for (const part of response.content) {
            if (part.type === "tool-call" && part.providerExecuted !== true) {
              requested.push({ id: part.id, name: part.name, params: part.params })
            }
          }
        } else {
          const parsed = Parse.response(response.text)
          const found = [
            ...parsed.invocations.map((inv) => ({ at: response.text.indexOf(inv.text), inv, error: undefined })),
            ...parsed.errors.map((error) => ({ at: response.text.indexOf(error.text), inv: undefined, error }))
          ].sort((a, b) => a.at - b.at)
          requested = found.map((f, i) =>
            f.inv !== undefined
              ? {
                  id: `text_${index}_${i}`,
                  name: f.inv.steps.map((s) => s.path).join(" >> "),
                  params: f.inv.steps[0]?.args ?? {},
                  steps: f.inv.steps
                }
              : { id: `text_${index}_${i}`, name: "(unparsed)", params: f.error!.text, parseError: f.error }
          )
        }

        const record = (calls: ReadonlyArray<Call>) =>
          Effect.gen(function* () {
            const now = yield* Clock.currentTimeMillis
            const step: Step = {
              id: `${id}/${index}`,
              index,
              of: maxSteps,
              text: response.text,
              calls,
              usage: stepUsage,
              finishReason: response.finishReason,
              durationMillis: now - stepStarted
            }
            steps.push(step)
            yield* events.publish({
              _tag: "agent.step",
              id,
              observerId: observer.id,
              at: now,
              step: index,
              text: clip(response.text, 2000),
              calls: calls.map((c) => ({
                name: c.name,
                ...(c.path === undefined ? {} : { path: c.path }),
                ...(c.outcome === undefined || c.outcome.callId === "" ? {} : { callId: c.outcome.callId }),
                status: c.outcome === undefined ? "not_run" : c.outcome.ok ? "ok" : "failed",
                ...(c.outcome !== undefined && !c.outcome.ok ? { kind: c.outcome.kind } : {})
              })),
              inputTokens: stepUsage.inputTokens,
              outputTokens: stepUsage.outputTokens,
              durationMillis: now - stepStarted
            })
            if (options.onStep !== undefined) yield* options.onStep(step)
          })

        // The model answered: done, whatever the budgets.
        if (requested.length === 0) {
          yield* record([])
          const now = yield* Clock.currentTimeMillis
          return yield* finish({
            _tag: "Complete",
            id,
            steps,
            prompt: conversation,
            usage,
            durationMillis: now - started,
            text: response.text
          })
        }

        const notRun: ReadonlyArray<Call> = requested.map((r) => ({
          id: r.id,
          name: r.name,
          path:
            r.steps !== undefined
              ? r.steps.map((s) => s.path).join(" >> ")
              : Option.getOrUndefined(Catalog.pathOf(r.name)),
          input: r.params,
          outcome: undefined
        }))
        const used = usage.inputTokens + usage.outputTokens
        if (options.maxTokens !== undefined && used > options.maxTokens) {
          yield* record(notRun)
          return yield* incomplete({ budget: "tokens", limit: options.maxTokens, used }, notRun)
        }

        pending = notRun
        // Ghost alternatives: each call's trace names the other calls its response asked for (made or refused).
        const heads = notRun.map(callHead)
        const othersOf = (i: number) => heads.filter((_, j) => j !== i)
        const done: Array<Call | undefined> = requested.map(() => undefined)
        const settle = (i: number, call: Call) =>
          Effect.sync(() => {
            done[i] = call
            pending = notRun.map((n, j) => done[j] ?? n)
          })
        // Reads side by side: each run of consecutive calls that only read runs at once; any other call waits for
        // the calls before it and runs alone, in its place, so no write moves past a read or a read past a write.
        let together: Array<number> = []
        const runTogether = Effect.suspend(() => {
          const batch = together
          together = []
          return Effect.forEach(
            batch,
            (i) => Effect.flatMap(runCall(requested[i]!, othersOf(i)), (c) => settle(i, c)),
            {
              concurrency: "unbounded",
              discard: true
            }
          )
        })
        for (const [i, r] of requested.entries()) {
          if (options.maxCalls !== undefined && callsMade >= options.maxCalls) {
            const path = notRun[i]!.path ?? ""
            yield* settle(i, {
              ...notRun[i]!,
              outcome: failure(path, new CallBudgetSpent({ path: path || r.name, max: options.maxCalls }))
            })
          } else if (i >= maxCalls) {
            const path = notRun[i]!.path ?? ""
            yield* settle(i, {
              ...notRun[i]!,
              outcome: failure(path, new TooManyCalls({ path: path || r.name, max: maxCalls }))
            })
          } else {
            callsMade++
            if (readsOnly(r, recipe)) together.push(i)
            else {
              yield* runTogether
              yield* settle(i, yield* runCall(r, othersOf(i)))
            }
          }
        }
        yield* runTogether
        const calls = done as Array<Call>
        pending = []
        conversation = AiPrompt.concat(
          conversation,
          AiPrompt.fromMessages([mode === "native" ? toolMessage(calls) : resultsMessage(calls)])
        )
        yield* record(calls)
      }
      return yield* incomplete({ budget: "steps", limit: maxSteps, used: maxSteps }, steps.at(-1)?.calls ?? [])
    })

    const failed = (error: AiError.AiError) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) =>
        Effect.andThen(
          road.endSession(id),
          events.publish({
            _tag: "agent.done",
            id,
            observerId: observer.id,
            at: now,
            status: "failed",
            steps: steps.length,
            calls: steps.reduce((n, s) => n + s.calls.length, 0),
            inputTokens: usage.inputTokens,
            outputTokens: usage.outputTokens,
            durationMillis: now - started,
            message: error.message
          })
        )
      )

    const timed = yield* loop.pipe(Effect.tapError(failed), Effect.timeoutOption(timeoutMillis))
    if (Option.isSome(timed)) return timed.value
    const now = yield* Clock.currentTimeMillis
    // The calls cut short, else the last step's.
    const lastAsked = pending.length > 0 ? pending : (steps.at(-1)?.calls ?? [])
    return yield* incomplete({ budget: "time", limit: timeoutMillis, used: now - started }, lastAsked)
  })

// ---------------------------------------------------------------------------
// Sub-agents
// ---------------------------------------------------------------------------

const Level = Schema.Literals([0, 1, 2, 3])

/**
 * What a sub-agent is given: a task, and what narrows its parent's reach: a
 * level (default L0; asking for more than L0 needs that level), paths it may
 * use within the parent's recipe (`allow`, `deny`), and a step budget.
 *
 * @category sub-agents
 * @since 0.2.0
 */
export const SubAgentInput = Schema.Struct({
  task: Schema.String.check(Schema.isMinLength(1)),
  trust: Schema.optionalKey(Level),
  allow: Schema.optionalKey(Schema.Array(Schema.String)),
  deny: Schema.optionalKey(Schema.Array(Schema.String)),
  maxSteps: Schema.optionalKey(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 20 })))
}).annotate({ title: "SubAgentInput" })

/**
 * What a sub-agent answers: whether it finished, its answer (or what it
 * lacked), the level it ran at, and its calls with their ids (each one's
 * audit and trace records name the parent's call).
 *
 * @category sub-agents
 * @since 0.2.0
 */
export const SubAgentOutput = Schema.Struct({
  status: Schema.Literals(["complete", "incomplete"]),
  text: Schema.String,
  message: Schema.optionalKey(Schema.String),
  caller: Schema.String,
  trust: Level,
  steps: Schema.Int,
  calls: Schema.Array(
    Schema.Struct({
      path: Schema.optionalKey(Schema.String),
      ok: Schema.Boolean,
      callId: Schema.optionalKey(Schema.String),
      /** The failure's tag, for a call that did not succeed (`PolicyDenied`, `TrustDenied`, …). */
      error: Schema.optionalKey(Schema.String)
    })
  )
})

/**
 * The model of a sub-agent failed (a provider error): its calls so far stand.
 *
 * @category errors
 * @since 0.2.0
 */
export class SubAgentFailed extends Schema.TaggedError<SubAgentFailed>()("SubAgentFailed", {
  reason: Schema.String
}) {
  static readonly kind: ToolError.Kind = "unavailable"
  override get message(): string {
    return `The sub-agent stopped: its model failed (${this.reason}). Do the task yourself, or try again later.`
  }
}

/**
 * Runs a sub-agent for the caller in context, on the road in context: a
 * child caller (id `<parent>/sub-agent:<parent call>`) at the level asked
 * (default L0), never above the parent's, under the parent's recipe narrowed by the
 * input (`Recipe.narrow`: both must allow a path; a child may not start
 * sub-agents of its own), in a session of its own. Its calls take the road
 * like any other (so a projection's every check applies), and their records
 * name the parent's call as their parent.
 *
 * @category sub-agents
 * @since 0.2.0
 */
export const delegate = (
  input: typeof SubAgentInput.Type
): Effect.Effect<typeof SubAgentOutput.Type, SubAgentFailed, Services> =>
  Effect.gen(function* () {
    const parent = yield* Observer.Observer
    const recipe = yield* Recipe.CurrentRecipe
    const trace = yield* Traced.CurrentTrace
    // L0 unless asked for more, and never above the parent's.
    const trust = Math.min(input.trust ?? 0, parent.trust) as Observer.ObserverShape["trust"]
    const child: Observer.ObserverShape = {
      id: `${parent.id}/sub-agent:${Option.isSome(trace) ? trace.value.id : randomUUID()}`,
      trust
    }
    const narrowed = Recipe.narrow(recipe, {
      name: "sub-agent",
      ...(input.allow === undefined ? {} : { allow: input.allow }),
      deny: [...(input.deny ?? []), "self.tools.agent.*"]
    })
    const result = yield* run({ prompt: input.task, maxSteps: input.maxSteps ?? 6 }).pipe(
      Effect.provideService(Observer.Observer, child),
      Effect.provideService(Recipe.CurrentRecipe, narrowed),
      Effect.mapError((e) => new SubAgentFailed({ reason: e.message }))
    )
    return {
      status: result._tag === "Complete" ? ("complete" as const) : ("incomplete" as const),
      text: result.text,
      ...(result._tag === "Incomplete" ? { message: result.message } : {}),
      caller: child.id,
      trust,
      steps: result.steps.length,
      calls: result.steps.flatMap((s) =>
        s.calls.map((c) => ({
          ...(c.path === undefined ? {} : { path: c.path }),
          ok: c.outcome?.ok === true,
          ...(c.outcome === undefined || c.outcome.callId === "" ? {} : { callId: c.outcome.callId }),
          ...(c.outcome === undefined || c.outcome.ok ? {} : { error: c.outcome.error._tag })
        }))
      )
    }
  })

/**
 * A sub-agent as a tool of the library: its level `L` is a capability its
 * caller must hold (the compiler refuses to run a child at L2 where only L1
 * is granted), and at run time the child runs at the lower of `L` and its
 * caller's level, under its caller's recipe narrowed by `allow` and `deny`.
 *
 * @category sub-agents
 * @since 0.2.0
 */
export const asTool = <const L extends 0 | 1 | 2 | 3>(options: {
  readonly trust: L
  readonly name?: string | undefined
  readonly description?: string | undefined
  readonly allow?: ReadonlyArray<string> | undefined
  readonly deny?: ReadonlyArray<string> | undefined
  readonly maxSteps?: number | undefined
}): Tool.Tool<
  { readonly task: string },
  typeof SubAgentOutput.Type,
  SubAgentFailed,
  Trust.CapabilityOf<L> | Services
> =>
  Tool.make({
    name: options.name ?? "agent.run",
    description:
      options.description ??
      `Runs a sub-agent on a task at L${options.trust} at most, with a narrower set of tools, and returns its answer.`,
    input: Schema.Struct({ task: Schema.String.check(Schema.isMinLength(1)) }),
    output: SubAgentOutput,
    failure: SubAgentFailed,
    trust: options.trust,
    effects: { callsNetwork: true, idempotent: false },
    run: ({ task }) =>
      delegate({
        task,
        trust: options.trust,
        ...(options.allow === undefined ? {} : { allow: options.allow }),
        ...(options.deny === undefined ? {} : { deny: options.deny }),
        ...(options.maxSteps === undefined ? {} : { maxSteps: options.maxSteps })
      })
  })

/**
 * `self.tools.agent.run`: a sub-agent for the caller, on every projection
 * (offered only when the server has a model). Its level is the level the
 * child is asked to run at (default L0), so no caller makes a child above
 * itself, and an L2 caller confirms an L2 child; each of the child's calls
 * is gated again. It calls a model and may write, so plan mode refuses it
 * and it never runs beside other reads (it is not idempotent).
 *
 * @category sub-agents
 * @since 0.2.0
 */
export const family: Family.Family<never, never> = {
  [Family.TypeId]: Family.TypeId,
  name: "agent",
  prefix: "self.tools",
  build: Effect.map(Effect.serviceOption(LanguageModel.LanguageModel), (model) => {
    if (Option.isNone(model)) return {}
    const tool = Tool.make({
      name: "agent.run",
      description:
        "Runs a sub-agent on a task and returns its answer: it uses your tools (or fewer: allow, deny) at L0 (read-only) unless you give it a level (trust, at most yours), within maxSteps model responses (default 6). Give it a self-contained task.",
      input: SubAgentInput,
      output: SubAgentOutput,
      failure: SubAgentFailed,
      effects: { callsNetwork: true, idempotent: false },
      run: (input) => Effect.provideService(delegate(input), LanguageModel.LanguageModel, model.value)
    })
    // The road, the caller and its recipe come from the call's context (the road gives every tool its caller's).
    return {
      "agent.run": {
        // Closed in effect: the road runs every tool in its caller's context, which holds these services.
        tool: tool as unknown as Family.Closed,
        level: { min: 0, of: (input: unknown) => (input as typeof SubAgentInput.Type).trust ?? 0 }
      }
    }
  })
}
