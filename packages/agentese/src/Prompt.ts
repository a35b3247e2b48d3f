/**
 * The system prompt of an agent on the road: the paths the caller is offered,
 * each with its rules (the level a call needs, whether each call waits for
 * approval, what it does to the world, whether it needs a read proof), the
 * rules every call follows (read before write, the result budget and working
 * memory, calls per response, plan mode, failures that say what to do), and,
 * for a model that writes its calls as text, the formats the road parses:
 * `EXECUTE:` lines, `<tool_call>` JSON and `<tool_use>` XML blocks. The text
 * is built from the same offers `invoke` enforces, so the prompt never
 * promises a path the caller may not use.
 *
 * @since 0.2.0
 */
import type { Observer } from "@ugent/core"
import { Effect, Option } from "effect"
import * as Catalog from "./Catalog.ts"
import { Invoker, type Offer } from "./Invoke.ts"
import * as Recipe from "./Recipe.ts"

/**
 * What the prompt is built from.
 *
 * @category models
 * @since 0.2.0
 */
export interface Options {
  /** The paths offered to the caller (`Invoker.list`). */
  readonly offers: ReadonlyArray<Offer>
  /** The result budget in estimated tokens (the caller's settings; default 25,000). */
  readonly budgetTokens?: number | undefined
  /** The most calls one response may make (the recipe's `maxCallsPerResponse`), if limited. */
  readonly maxCallsPerResponse?: number | undefined
  /**
   * Whether to show the text formats of a call (`EXECUTE:`, `<tool_call>`,
   * `<tool_use>`): for a model that writes its calls as text (default true).
   * A model given the tools through its API's tool calling needs no formats.
   */
  readonly formats?: boolean | undefined
  /** The opening paragraph (default: what the tools are and how failures read). */
  readonly intro?: string | undefined
}

const defaultIntro =
  "You work in a project through tools. Each tool is a path such as world.tools.file.read, also callable by its provider-safe name (world_tools_file_read). Every call passes the same checks: your trust level, the room's policy, approvals and rate limits. A refused or failed call comes back as JSON with a _tag and a message that says what to do next: read it, and correct the call rather than repeating it."

/** The first sentence: up to a stop followed by a capital letter or the end (so "e.g." does not end it). */
const firstSentence = (s: string): string => {
  const m = /^(.*?[.!?])(?=\s+[A-Z]|\s*$)/s.exec(s.trim())
  return (m === null ? s.trim() : m[1]!).replace(/\s+/g, " ")
}

const isRecord = Catalog.isRecord

/** A JSON Schema's type, in a word: `string`, `integer`, `array of string`, `"a" | "b"`. */
const typeOf = (schema: unknown): string => {
  if (!isRecord(schema)) return "any"
  if (Array.isArray(schema.enum)) return schema.enum.map((v) => JSON.stringify(v)).join(" | ")
  if ("const" in schema) return JSON.stringify(schema.const)
  if (typeof schema.type === "string") {
    if (schema.type === "array") return `array of ${typeOf(schema.items)}`
    return schema.type
  }
  if (Array.isArray(schema.type)) return schema.type.join(" | ")
  const union = schema.anyOf ?? schema.oneOf
  if (Array.isArray(union)) return [...new Set(union.map(typeOf))].join(" | ")
  return "any"
}

/** The input of a path in a line: `path (string, required), limit (integer)`. */
const inputLine = (offer: Offer): string => {
  const shape = Catalog.inputShape(offer.input).schema
  const properties = isRecord(shape.properties) ? shape.properties : {}
  const required = new Set(Array.isArray(shape.required) ? (shape.required as ReadonlyArray<string>) : [])
  const names = Object.keys(properties)
  if (names.length === 0) return "none"
  return names.map((n) => `${n} (${typeOf(properties[n])}${required.has(n) ? ", required" : ""})`).join(", ")
}

/** Whether a path's input takes a read proof: it changes a file that must be read first. */
const takesProof = (offer: Offer): boolean => {
  const properties = (offer.input as { readonly properties?: unknown }).properties
  return isRecord(properties) && "proof" in properties
}

/** A path's rules, in one line. */
const rulesOf = (offer: Offer): string => {
  const e = offer.effects
  const changes: Array<string> = []
  if (e.writesFs === true) changes.push("writes files")
  if (e.callsShell === true) changes.push("runs a shell command")
  if (e.irreversible === true) changes.push("cannot be undone")
  const rules = [`L${offer.requiredTrust}`]
  if (changes.length > 0) rules.push(changes.join(", "))
  else if (offer.annotations.readOnly) rules.push("read-only")
  if (e.callsNetwork === true) rules.push("calls the network")
  if (takesProof(offer)) rules.push("read the file first (read before write)")
  if (offer.requiresApproval) rules.push("each call waits for a person's approval (a denial is final)")
  return rules.join(", ")
}

/** An example call of a path: its required arguments with placeholder values. */
const exampleArgs = (offer: Offer): Record<string, unknown> => {
  if (offer.path === "world.tools.file.read") return { path: "README.md" }
  const shape = Catalog.inputShape(offer.input).schema
  const properties = isRecord(shape.properties) ? shape.properties : {}
  const required = Array.isArray(shape.required) ? (shape.required as ReadonlyArray<string>) : []
  const args: Record<string, unknown> = {}
  for (const name of required) {
    const type = typeOf(properties[name])
    args[name] =
      type === "integer" || type === "number"
        ? 1
        : type === "boolean"
          ? true
          : type.startsWith("array")
            ? []
            : type === "object"
              ? {}
              : "…"
  }
  return args
}

const commandLine = (path: string, args: Readonly<Record<string, unknown>>): string =>
  [
    `EXECUTE: ${path}`,
    ...Object.entries(args).map(([k, v]) =>
      typeof v === "string" && /^[\w./*-]+$/.test(v) ? `--${k}=${v}` : `--${k}=${JSON.stringify(v)}`
    )
  ].join(" ")

/**
 * The example of a call in every text format, for a path (used in
 * self-correcting messages too).
 *
 * @category building
 * @since 0.2.0
 */
export const examples = (offer: Offer): ReadonlyArray<string> => {
  const args = exampleArgs(offer)
  const name = Catalog.toolName(offer.path)
  return [
    commandLine(offer.path, args),
    `<tool_call>${JSON.stringify({ tool: offer.path, params: args })}</tool_call>`,
    `<tool_use><name>${name}</name><input>${JSON.stringify(args)}</input></tool_use>`
  ]
}

/**
 * The example arguments of a path: its required arguments with placeholder
 * values, as a JSON object.
 *
 * @category building
 * @since 0.2.0
 */
export const exampleInput = (offer: Offer): string => JSON.stringify(exampleArgs(offer))

/**
 * The system prompt for a caller's offers.
 *
 * **Example** (The prompt of a reader)
 * ```ts
 * import { Invoke, Prompt, Server } from "@ugent/agentese"
 * import { Effect } from "effect"
 * import { tmpdir } from "node:os"
 * const offers = await Effect.runPromise(
 *   Effect.flatMap(Invoke.Invoker, (road) => road.list).pipe(
 *     Effect.provide(Server.layer({ root: tmpdir(), stores: "memory", recipe: { name: "r", allow: ["world.tools.file.read", "world.tools.file.edit"], maxCallsPerResponse: 3 }, trust: 1 }))
 *   )
 * )
 * const text = Prompt.system({ offers, maxCallsPerResponse: 3 })
 * for (const line of text.split("\n").filter((l) => l.startsWith("- world.tools.file"))) console.log(line)
 * // => - world.tools.file.edit (world_tools_file_edit): Replace exact text in a file you have read (pass the proof). oldText must match exactly and be unique unless replaceAll; several edits apply in order, all or nothing; dryRun shows the diff only.
 * // => - world.tools.file.read (world_tools_file_read): Read a text file of the workspace.
 * console.log(text.includes("At most 3 calls in one response"), text.includes("<tool_use><name>world_tools_file_read</name>"))
 * // => true true
 * ```
 *
 * @category building
 * @since 0.2.0
 */
export const system = (options: Options): string => {
  const offers = [...options.offers].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
  const has = (path: string) => offers.some((o) => o.path === path)
  const lines: Array<string> = [options.intro ?? defaultIntro, "", "## Tools", ""]
  if (offers.length === 0) lines.push("No tool is offered to you: answer from what you know.")
  for (const offer of offers) {
    const name = Catalog.toolName(offer.path)
    lines.push(`- ${offer.path}${name === offer.path ? "" : ` (${name})`}: ${firstSentence(offer.description)}`)
    lines.push(`  ${rulesOf(offer)}. Input: ${inputLine(offer)}.`)
  }
  const budget = options.budgetTokens ?? 25_000
  const rules: Array<string> = []
  if (offers.some(takesProof)) {
    rules.push(
      "Read before write: a tool that changes a file (read the file first) works only on a file whose current content you have read; your reads are remembered for you, so you need not copy a proof. A file changed since you read it must be read again. Creating a new file needs no read."
    )
  }
  rules.push(
    has("self.memory.read")
      ? `Large results: a result over about ${budget.toLocaleString("en-US")} tokens is not returned whole. You get overBudget: true, a summary, a memoryId and next (how to get the rest): read the kept result in parts with self.memory.read {"id": "<memoryId>", "line": 1, "lines": 200}, or call the tool again for less.`
      : `Large results: a result over about ${budget.toLocaleString("en-US")} tokens is not returned whole: you get a summary and how to ask for less (a smaller range or limit).`
  )
  if (options.maxCallsPerResponse !== undefined && Number.isFinite(options.maxCallsPerResponse)) {
    rules.push(
      `At most ${options.maxCallsPerResponse} calls in one response: make the most important calls first and continue in the next response.`
    )
  }
  if (has("self.tools.mode.plan")) {
    rules.push(
      "Plan mode: self.tools.mode.plan lets you plan without changing anything; while in it, tools that write files, run a shell or call the network are refused. self.tools.mode.execute leaves it."
    )
  }
  rules.push("When you have the answer, reply with it and make no call.")
  lines.push("", "## Rules", "", ...rules.map((r) => `- ${r}`))
  if (options.formats ?? true) {
    const sample = offers.find((o) => o.path === "world.tools.file.read") ?? offers[0]
    const [execute, toolCall, toolUse] =
      sample === undefined
        ? [
            "EXECUTE: world.tools.file.read --path=README.md",
            '<tool_call>{"tool": "world.tools.file.read", "params": {"path": "README.md"}}</tool_call>',
            '<tool_use><name>world_tools_file_read</name><input>{"path": "README.md"}</input></tool_use>'
          ]
        : examples(sample)
    lines.push(
      "",
      "## How to call a tool",
      "",
      "Write each call in one of these forms; the results come back in the next message.",
      "",
      execute!,
      toolCall!,
      toolUse!,
      "",
      "- EXECUTE: a line of its own; arguments are --key=value (numbers, true, false, null and JSON objects or arrays are typed; quote a value to keep it a string).",
      '- tool_call: a JSON object with "tool" (the path) and "params" (the arguments).',
      "- tool_use: a name element with the path, then an input element with a JSON object of the arguments; the text inside is not XML-escaped.",
      "- A pipeline a >> b passes a's output to b as its input, merged with b's own arguments: EXECUTE: world.tools.file.read --path=notes.md >> world.tools.file.edit --oldText=a --newText=b"
    )
  }
  return lines.join("\n")
}

/**
 * The system prompt of the caller in context, from its offers, settings and
 * recipe.
 *
 * @category building
 * @since 0.2.0
 */
export const fromRoad = (
  options?: Omit<Options, "offers" | "budgetTokens" | "maxCallsPerResponse">
): Effect.Effect<string, never, Invoker | Observer.Observer | Recipe.CurrentRecipe> =>
  Effect.gen(function* () {
    const road = yield* Invoker
    const recipe = yield* Recipe.CurrentRecipe
    const offers = yield* road.list
    const settings = yield* road.settings
    return system({
      ...options,
      offers,
      budgetTokens: settings.budgetTokens,
      maxCallsPerResponse: recipe.maxCallsPerResponse
    })
  })

/**
 * The offer of a path or provider-safe name among offers.
 *
 * @category building
 * @since 0.2.0
 */
export const findOffer = (offers: ReadonlyArray<Offer>, name: string): Option.Option<Offer> =>
  Option.flatMap(Catalog.pathOf(name), (path) => Option.fromUndefinedOr(offers.find((o) => o.path === path)))
