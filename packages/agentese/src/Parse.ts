/**
 * Turns model text into invocations. Three forms are understood:
 *
 * - command lines: `EXECUTE: world.tools.file.read --path=README.md --limit=50`;
 *   values are typed (numbers stay numbers, `true` / `false` / `null`,
 *   JSON objects and arrays are parsed, quotes keep a value a string);
 * - JSON blocks: `<tool_call>{"tool": "world.tools.file.read", "params": {"path": "README.md"}}</tool_call>`
 *   (`name` / `arguments` are accepted too, and provider-safe names such as
 *   `world_tools_file_read`);
 * - pipelines: `a >> b >> c`, in either form: the first step gets the input,
 *   each next step the previous step's output (merged with its own
 *   arguments, if any).
 *
 * Whatever does not parse becomes a `ParseError` whose message shows what a
 * correct call looks like, so a model can correct itself.
 *
 * @since 0.1.0
 */
import type { ToolError } from "@ugent/core"
import { Option, Schema } from "effect"
import { fromProviderName, isPath } from "./Path.ts"

/**
 * One step of an invocation: a path and the arguments written on it.
 *
 * @category models
 * @since 0.1.0
 */
export interface Step {
  readonly path: string
  readonly args: Readonly<Record<string, unknown>>
}

/**
 * A parsed call: one step, or a pipeline of several.
 *
 * @category models
 * @since 0.1.0
 */
export interface Invocation {
  readonly steps: ReadonlyArray<Step>
  readonly source: "execute" | "tool_call" | "pipeline"
  /** The text it was parsed from. */
  readonly text: string
}

/**
 * Text that looked like a call but did not parse.
 *
 * @category errors
 * @since 0.1.0
 */
export class ParseError extends Schema.TaggedError<ParseError>()("ParseError", {
  text: Schema.String,
  problem: Schema.String,
  example: Schema.String
}) {
  static readonly kind: ToolError.Kind = "parse"
  override get message(): string {
    return `Could not parse ${JSON.stringify(this.text.length > 200 ? `${this.text.slice(0, 200)}…` : this.text)}: ${this.problem}. A correct call looks like: ${this.example}`
  }
}

const executeExample = "EXECUTE: world.tools.file.read --path=README.md --limit=50"
const toolCallExample = '<tool_call>{"tool": "world.tools.file.read", "params": {"path": "README.md"}}</tool_call>'
const pipelineExample = "world.tools.file.glob --pattern=*.md >> world.tools.text.count"

/**
 * Reads a path or a provider-safe name.
 *
 * @category parsing
 * @since 0.1.0
 */
export const pathOf = (name: string): Option.Option<string> => {
  const trimmed = name.trim()
  if (isPath(trimmed)) return Option.some(trimmed)
  return /^[a-z][a-z0-9-]*(_[a-z][a-z0-9-]*)+$/.test(trimmed) ? fromProviderName(trimmed) : Option.none()
}

// ---------------------------------------------------------------------------
// Command lines
// ---------------------------------------------------------------------------

type Token = { readonly kind: "word" | "quoted" | "json"; readonly value: string }

/** Splits a command line into words, quoted strings and balanced JSON values. Our own: shell-words libraries do not read JSON. */
const tokenize = (line: string): Array<Token> | string => {
  const tokens: Array<Token> = []
  let i = 0
  while (i < line.length) {
    const c = line[i]!
    if (/\s/.test(c)) {
      i++
      continue
    }
    let word = ""
    let kind: Token["kind"] = "word"
    while (i < line.length && !/\s/.test(line[i]!)) {
      const ch = line[i]!
      if (ch === '"' || ch === "'") {
        const quote = ch
        i++
        let closed = false
        while (i < line.length) {
          const q = line[i]!
          if (q === "\\" && quote === '"' && i + 1 < line.length) {
            const next = line[i + 1]!
            word += next === "n" ? "\n" : next === "t" ? "\t" : next
            i += 2
            continue
          }
          if (q === quote) {
            closed = true
            i++
            break
          }
          word += q
          i++
        }
        if (!closed) return `an unclosed ${quote} quote`
        kind = "quoted"
      } else if ((ch === "{" || ch === "[") && (word === "" || word.endsWith("="))) {
        const start = i
        let depth = 0
        let inString = false
        for (; i < line.length; i++) {
          const j = line[i]!
          if (inString) {
            if (j === "\\") i++
            else if (j === '"') inString = false
          } else if (j === '"') inString = true
          else if (j === "{" || j === "[") depth++
          else if (j === "}" || j === "]") {
            depth--
            if (depth === 0) {
              i++
              break
            }
          }
        }
        if (depth !== 0) return "an unbalanced JSON value"
        word += line.slice(start, i)
        kind = "json"
      } else {
        word += ch
        i++
      }
    }
    tokens.push({ kind, value: word })
  }
  return tokens
}

const typed = (raw: string, kind: Token["kind"]): unknown | ParseFailure => {
  if (kind === "quoted") return raw
  if (kind === "json") {
    try {
      return JSON.parse(raw)
    } catch (e) {
      return { failure: `the JSON value ${raw} is invalid (${e instanceof Error ? e.message : String(e)})` }
    }
  }
  if (/^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?$/.test(raw)) return Number(raw)
  if (raw === "true") return true
  if (raw === "false") return false
  if (raw === "null") return null
  return raw
}

interface ParseFailure {
  readonly failure: string
}
const isFailure = (u: unknown): u is ParseFailure =>
  typeof u === "object" && u !== null && Object.keys(u).length === 1 && "failure" in u

/** Reads `path --k=v --flag …` into a step. */
const step = (tokens: ReadonlyArray<Token>, text: string, example: string): Step | ParseError => {
  const [head, ...rest] = tokens
  if (head === undefined) return new ParseError({ text, problem: "no path is given", example })
  const path = pathOf(head.value)
  if (Option.isNone(path)) {
    return new ParseError({ text, problem: `"${head.value}" is not a path (dot-separated lowercase words)`, example })
  }
  const args: Record<string, unknown> = {}
  for (let k = 0; k < rest.length; k++) {
    const token = rest[k]!
    const m = /^--([A-Za-z_][\w-]*)(=([\s\S]*))?$/.exec(token.value)
    if (m === null || (token.kind !== "word" && m[2] === undefined)) {
      return new ParseError({
        text,
        problem: `"${token.value}" is not an argument; write arguments as --key=value`,
        example
      })
    }
    const key = m[1]!
    if (key in args) return new ParseError({ text, problem: `--${key} is given twice`, example })
    if (m[2] === undefined) {
      args[key] = true
      continue
    }
    const value = typed(m[3]!, token.kind)
    if (isFailure(value)) return new ParseError({ text, problem: value.failure, example })
    args[key] = value
  }
  return { path: path.value, args }
}

/** Splits on `>>` outside quotes and JSON. */
const splitPipeline = (tokens: ReadonlyArray<Token>): Array<Array<Token>> => {
  const parts: Array<Array<Token>> = [[]]
  for (const t of tokens) {
    if (t.kind === "word" && t.value === ">>") parts.push([])
    else parts[parts.length - 1]!.push(t)
  }
  return parts
}

const stepsOf = (body: string, text: string, example: string): ReadonlyArray<Step> | ParseError => {
  const tokens = tokenize(body)
  if (typeof tokens === "string") return new ParseError({ text, problem: `the line has ${tokens}`, example })
  const parts = splitPipeline(tokens)
  const steps: Array<Step> = []
  for (const part of parts) {
    if (part.length === 0) {
      return new ParseError({
        text,
        problem: "a pipeline step is empty (two >> in a row, or >> at an end)",
        example: pipelineExample
      })
    }
    const s = step(part, text, example)
    if (s instanceof ParseError) return s
    steps.push(s)
  }
  return steps
}

/**
 * Parses one `EXECUTE:` line (the prefix is optional here).
 *
 * **Example** (Typed values)
 * ```ts
 * import { Parse } from "@ugent/agentese"
 * const r = Parse.execute(`EXECUTE: world.tools.file.edit --path="my notes.md" --limit=50 --dryRun --edits=[{"oldText":"a b","newText":"c"}]`)
 * console.log(r._tag === "Right" ? r.right.steps[0] : r.left.message)
 * // => { path: 'world.tools.file.edit', args: { path: 'my notes.md', limit: 50, dryRun: true, edits: [ { oldText: 'a b', newText: 'c' } ] } }
 * ```
 *
 * @category parsing
 * @since 0.1.0
 */
export const execute = (
  line: string
): { readonly _tag: "Right"; readonly right: Invocation } | { readonly _tag: "Left"; readonly left: ParseError } => {
  const body = line.trim().replace(/^EXECUTE:\s*/i, "")
  const steps = stepsOf(body, line.trim(), executeExample)
  if (steps instanceof ParseError) return { _tag: "Left", left: steps }
  return { _tag: "Right", right: { steps, source: steps.length > 1 ? "pipeline" : "execute", text: line.trim() } }
}

/**
 * Parses the pipeline DSL `a >> b >> c` (a single path is a one-step pipeline).
 *
 * @category parsing
 * @since 0.1.0
 */
export const pipeline = execute

/**
 * Parses the JSON of one `<tool_call>` block.
 *
 * @category parsing
 * @since 0.1.0
 */
export const toolCall = (
  json: string
): { readonly _tag: "Right"; readonly right: Invocation } | { readonly _tag: "Left"; readonly left: ParseError } => {
  const text = `<tool_call>${json}</tool_call>`
  const fail = (problem: string) => ({
    _tag: "Left" as const,
    left: new ParseError({ text, problem, example: toolCallExample })
  })
  let value: unknown
  try {
    value = JSON.parse(json)
  } catch (e) {
    return fail(`the block is not JSON (${e instanceof Error ? e.message : String(e)})`)
  }
  if (typeof value !== "object" || value === null || Array.isArray(value))
    return fail("the block must be a JSON object")
  const record = value as Record<string, unknown>
  const name = record.tool ?? record.name
  if (typeof name !== "string") return fail('the object needs a "tool" field with the path')
  const params = record.params ?? record.arguments ?? {}
  if (typeof params !== "object" || params === null || Array.isArray(params)) {
    return fail('"params" must be a JSON object of the tool\'s arguments')
  }
  const names = name.split(">>").map((s) => s.trim())
  const steps: Array<Step> = []
  for (const [i, n] of names.entries()) {
    const path = pathOf(n)
    if (Option.isNone(path)) return fail(`"${n}" is not a path (dot-separated lowercase words)`)
    steps.push({ path: path.value, args: i === 0 ? (params as Record<string, unknown>) : {} })
  }
  return { _tag: "Right", right: { steps, source: steps.length > 1 ? "pipeline" : "tool_call", text } }
}

/**
 * Every call in a model response, in order, and every block or line that
 * looked like a call but did not parse.
 *
 * **Example** (A response with two calls and a mistake)
 * ```ts
 * import { Parse } from "@ugent/agentese"
 * const r = Parse.response([
 *   "Let me look.",
 *   "EXECUTE: world.tools.file.read --path=README.md",
 *   '<tool_call>{"tool": "world_tools_git_log", "params": {"limit": 5}}</tool_call>',
 *   "EXECUTE: world.tools.file.read path=x"
 * ].join("\n"))
 * console.log(r.invocations.map((i) => i.steps[0]?.path), r.errors.length)
 * // => [ 'world.tools.file.read', 'world.tools.git.log' ] 1
 * ```
 *
 * @category parsing
 * @since 0.1.0
 */
export const response = (
  text: string
): { readonly invocations: ReadonlyArray<Invocation>; readonly errors: ReadonlyArray<ParseError> } => {
  const found: Array<{ readonly at: number; readonly result: ReturnType<typeof execute> }> = []
  const blocks = /<tool_call>([\s\S]*?)<\/tool_call>/g
  for (const m of text.matchAll(blocks)) found.push({ at: m.index, result: toolCall(m[1]!.trim()) })
  const unclosed = text.replace(blocks, "").indexOf("<tool_call>")
  if (unclosed >= 0) {
    found.push({
      at: unclosed,
      result: {
        _tag: "Left",
        left: new ParseError({
          text: text.slice(unclosed, unclosed + 80),
          problem: "the <tool_call> block is not closed",
          example: toolCallExample
        })
      }
    })
  }
  let offset = 0
  for (const line of text.split("\n")) {
    if (/^\s*EXECUTE:/i.test(line)) found.push({ at: offset, result: execute(line) })
    offset += line.length + 1
  }
  found.sort((a, b) => a.at - b.at)
  const invocations: Array<Invocation> = []
  const errors: Array<ParseError> = []
  for (const { result } of found) {
    if (result._tag === "Right") invocations.push(result.right)
    else errors.push(result.left)
  }
  return { invocations, errors }
}
