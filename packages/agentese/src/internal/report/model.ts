/**
 * The model-driven author of a report: the agent loop follows the protocol
 * within its budgets (10 tool calls by default), then answers with the four
 * sections as JSON. The attribution is built from the run's own calls (their
 * road call ids), never from what the model says it did.
 *
 * @internal
 */
import { basename } from "node:path"
import { Clock, DateTime, Duration, Effect, Schema } from "effect"
import { type AiError, Prompt as AiPrompt } from "effect/ai"
import * as Agent from "../../Agent.ts"
import type * as Invoke from "../../Invoke.ts"
import { inputSummary } from "./gather.ts"
import * as S from "./schema.ts"

const Sections = Schema.Struct({
  lastActiveArea: S.Section,
  currentState: S.Section,
  nextSteps: S.Section,
  basedOn: S.Section
})
type Sections = typeof Sections.Type

const shape = `{"lastActiveArea":{"summary":"…","points":["…"]},"currentState":{"summary":"…","points":["…"]},"nextSteps":{"summary":"…","points":["…"]},"basedOn":{"summary":"…","points":["…"]}}`

export const task = (protocol: string, maxCalls: number): string =>
  `${protocol.replace("at most 10 tool calls", `at most ${maxCalls} tool calls`)}

The project is the workspace root ("."). When you have looked, answer with only one JSON object, no prose around it:
${shape}
Each summary is one or two sentences; each point is one bullet (Markdown inline code allowed). In basedOn, name the files you read and the calls you made, and say what you could not look at.`

/** The last JSON object in a reply (a fenced block or bare braces), decoded as the four sections. */
export const sectionsOf = (text: string): Sections | string => {
  const fenced = [...text.matchAll(/```(?:json)?\s*\n([\s\S]*?)```/g)].map((m) => m[1]!)
  const start = text.indexOf("{")
  const end = text.lastIndexOf("}")
  const candidates = [...fenced.reverse(), ...(start >= 0 && end > start ? [text.slice(start, end + 1)] : [])]
  if (candidates.length === 0) return "the reply holds no JSON object"
  let problem = ""
  for (const candidate of candidates) {
    let parsed: unknown
    try {
      parsed = JSON.parse(candidate)
    } catch (e) {
      problem = `its JSON does not parse (${e instanceof Error ? e.message : String(e)})`
      continue
    }
    const decoded = Schema.decodeUnknownExit(Sections)(parsed)
    if (decoded._tag === "Success") return decoded.value
    problem = `its JSON is not the four sections (${String(decoded.cause).split("\n")[0]})`
  }
  return problem
}

/** A call and the step that made it. */
interface Made {
  readonly call: Agent.Call
  readonly step: Agent.Step
}

const attributionOf = (
  session: string,
  all: ReadonlyArray<Made>,
  stopped: { readonly incomplete?: string | undefined; readonly budgetRanOut?: string | undefined }
): typeof S.Attribution.Type => {
  const madeWith = all.filter(({ call: c }) => c.outcome !== undefined && c.outcome.callId !== "")
  const made = madeWith.map(({ call }) => call)
  const toolCalls = madeWith.map(({ call: c, step }) => {
    const o = c.outcome!
    return {
      callId: o.callId,
      path: c.path ?? c.name,
      input: inputSummary(c.input),
      purpose: "asked by the model",
      ok: o.ok,
      ...(o.ok ? {} : { error: { tag: o.error._tag, kind: o.kind, message: o.error.message } }),
      durationMillis: c.durationMillis ?? 0,
      step: step.index,
      stepId: step.id,
      ...(c.resultBytes !== undefined ? { resultBytes: c.resultBytes } : {})
    }
  })
  const filesRead = made.flatMap((c): ReadonlyArray<typeof S.FileRead.Type> => {
    const input = c.input as { readonly path?: unknown; readonly offset?: unknown; readonly limit?: unknown }
    if (!c.outcome!.ok || typeof input !== "object" || input === null || typeof input.path !== "string") return []
    if (c.path === "world.tools.file.read") {
      const from = typeof input.offset === "number" ? input.offset : undefined
      const limit = typeof input.limit === "number" ? input.limit : undefined
      return [
        {
          path: input.path,
          ...(from !== undefined && limit !== undefined ? { lines: { from, to: from + limit - 1 } } : {}),
          via: c.path,
          callId: c.outcome!.callId
        }
      ]
    }
    if (c.path === "world.tools.git.blame") return [{ path: input.path, via: c.path, callId: c.outcome!.callId }]
    return []
  })
  return S.tallied({ session, filesRead, toolCalls }, stopped)
}

/** Which budget ran out, in words. */
const ranOut = (missing: Agent.Missing): string =>
  missing.budget === "steps"
    ? `its ${missing.limit} steps were used up`
    : missing.budget === "tokens"
      ? `its ${missing.limit} tokens were used up`
      : "its time ran out"

export interface Options {
  readonly model: string
  readonly protocol: string
  readonly maxCalls?: number | undefined
  readonly maxSteps?: number | undefined
  readonly timeout?: Duration.Input | undefined
  readonly onStep?: ((step: Agent.Step) => Effect.Effect<void>) | undefined
}

export const author =
  (options: Options) =>
  (job: {
    readonly root: string
  }): Effect.Effect<typeof S.Report.Type, AiError.AiError, Invoke.Services | Agent.Services> =>
    Effect.gen(function* () {
      const maxCalls = options.maxCalls ?? 10
      const budgets = {
        maxCalls,
        maxSteps: options.maxSteps ?? maxCalls + 2,
        timeout: options.timeout ?? Duration.seconds(60),
        onStep: options.onStep
      }
      const first = yield* Agent.run({ prompt: task(options.protocol, maxCalls), ...budgets })
      let runs: ReadonlyArray<Agent.Result> = [first]
      let sections = first._tag === "Complete" ? sectionsOf(first.text) : first.message
      let budgetRanOut: string | undefined
      if (first._tag === "Incomplete") {
        // The budget ran out: the model writes what it found so far, with no further calls, so its findings are kept.
        budgetRanOut = ranOut(first.missing)
        const last = yield* Agent.run({
          prompt: AiPrompt.concat(
            first.prompt,
            AiPrompt.make(
              `Your budget ran out (${budgetRanOut}): make no more calls. Answer now with only the JSON object ${shape}, from what you found so far; in basedOn say what you could not look at.`
            )
          ),
          maxSteps: 1,
          maxCalls: 0,
          timeout: budgets.timeout,
          onStep: options.onStep
        })
        runs = [first, last]
        const written = last._tag === "Complete" ? sectionsOf(last.text) : last.message
        sections =
          typeof written === "string" ? `${first.message} Its findings could not be written: ${written}` : written
      }
      // One chance to correct a reply that is not the format, with no further calls.
      if (typeof sections === "string" && first._tag === "Complete") {
        const again = yield* Agent.run({
          prompt: AiPrompt.concat(
            first.prompt,
            AiPrompt.make(
              `That answer is not the report: ${sections}. Answer again with only the JSON object ${shape}, from what you already found.`
            )
          ),
          maxSteps: 1,
          maxCalls: 0,
          timeout: budgets.timeout,
          onStep: options.onStep
        })
        runs = [first, again]
        const fixed = again._tag === "Complete" ? sectionsOf(again.text) : again.message
        sections = typeof fixed === "string" ? `the model's report was not in the report's format: ${fixed}` : fixed
      }
      const calls = runs.flatMap((r) => r.steps.flatMap((step) => step.calls.map((call) => ({ call, step }))))
      const now = yield* Clock.currentTimeMillis
      const attribution = attributionOf(first.id, calls, {
        incomplete: typeof sections === "string" ? sections : undefined,
        budgetRanOut
      })
      // What the model said along the way: its findings so far, when it could not write the report.
      const findings = runs
        .flatMap((r) => r.steps.map((step) => step.text.replace(/\s+/g, " ").trim()))
        .filter((t) => t !== "")
        .map((t) => (t.length > 300 ? `${t.slice(0, 300)}…` : t))
      const written: Sections =
        typeof sections === "string"
          ? {
              lastActiveArea: { summary: "Not known: the analysis is incomplete.", points: [] },
              // The model's own words along the way are its findings so far.
              currentState: { summary: `Analysis incomplete: ${sections}`, points: findings },
              nextSteps: {
                summary: "Run the report again, or without a model (ugent report --deterministic).",
                points: []
              },
              basedOn: {
                summary: `${attribution.toolCalls.length} tool call${attribution.toolCalls.length === 1 ? "" : "s"} before the run stopped.`,
                points: attribution.toolCalls.map((c) => `\`${c.path}\` ${c.input}${c.ok ? "" : ` (${c.error?.tag})`}`)
              }
            }
          : sections
      return {
        protocol: "project-resurrection",
        version: 1,
        project: basename(job.root),
        root: job.root,
        generatedAt: DateTime.formatIso(DateTime.makeUnsafe(now)),
        mode: "model",
        model: options.model,
        durationMillis: runs.reduce((n, r) => n + r.durationMillis, 0),
        ...written,
        attribution,
        ...(typeof sections === "string"
          ? { incomplete: sections }
          : budgetRanOut !== undefined
            ? {
                incomplete: `The model's budget ran out (${budgetRanOut}); these are its findings so far, written without further calls.`
              }
            : {})
      } satisfies typeof S.Report.Type
    })
