/**
 * Turns model text into invocations. Three forms are understood:
 *
 * - command lines: `EXECUTE: world.tools.file.read --path=README.md --limit=50`;
 *   values are typed (numbers stay numbers, `true` / `false` / `null`,
 *   JSON objects and arrays are parsed, quotes keep a value a string);
 * - JSON blocks: `<tool_call>{"tool": "world.tools.file.read", "params": {"path": "README.md"}}</tool_call>`
 *   (`name` / `arguments` are accepted too, and provider-safe names such as
 *   `world_tools_file_read`);
 * - XML blocks, the form Anthropic's models write:
 *   `<tool_use><name>world_tools_file_read</name><input>{"path": "README.md"}</input></tool_use>`,
 *   or with `<tool_name>` and `<parameters>` (a JSON object, or one element
 *   per argument: `<parameters><path>README.md</path></parameters>`), the
 *   form of the command-execution document's MCP prompt (the grammar is at
 *   {@link toolUse});
 * - pipelines: `a >> b >> c`, in either form: the first step gets the input,
 *   each next step the previous step's output (merged with its own
 *   arguments, if any);
 * - fan-outs: `a &&& b` is one step whose calls all get the same input and
 *   whose output is their outputs in order; every call runs and every
 *   failure is told (`&&&!` stops at the first failure instead).
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
 * One step of an invocation: a path and the arguments written on it; or a
 * fan-out (`a &&& b`), whose calls (`all`) get the same input and whose output
 * is their outputs in order. A fan-out's `path` is its calls' paths as written
 * (`a &&& b`) and its `args` are empty. `collect-all` runs every call and
 * tells every failure; `fail-fast` (`&&&!`) stops at the first.
 *
 * @category models
 * @since 0.1.0
 */
export interface Step {
  readonly path: string
  readonly args: Readonly<Record<string, unknown>>
  /** The calls of a fan-out step (since 0.2.0). */
  readonly all?: ReadonlyArray<Step> | undefined
  /** How a fan-out meets a failure (since 0.2.0). */
  readonly mode?: "collect-all" | "fail-fast" | undefined
}

/**
 * The calls of a step: a fan-out's, or the step itself.
 *
 * @category utils
 * @since 0.2.0
 */
export const callsOf = (step: Step): ReadonlyArray<Step> => step.all ?? [step]

/**
 * A fan-out step of these calls.
 *
 * @category constructors
 * @since 0.2.0
 */
export const fanout = (all: ReadonlyArray<Step>, mode: "collect-all" | "fail-fast" = "collect-all"): Step => ({
  path: all.map((s) => s.path).join(mode === "fail-fast" ? " &&&! " : " &&& "),
  args: {},
  all,
  mode
})

/**
 * A parsed call: one step, or a pipeline of several.
 *
 * @category models
 * @since 0.1.0
 */
export interface Invocation {
  readonly steps: ReadonlyArray<Step>
  readonly source: "execute" | "tool_call" | "tool_use" | "pipeline"
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
const toolUseExample = '<tool_use><name>world_tools_file_read</name><input>{"path": "README.md"}</input></tool_use>'
const pipelineExample = "world.tools.file.glob --pattern=*.md >> world.tools.text.count"
const fanoutExample = "world.tools.file.read --path=a.md &&& world.tools.file.read --path=b.md"

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

/** A pipeline step split on `&&&` / `&&&!` outside quotes and JSON: its calls, and the operators met. */
const splitGroup = (tokens: ReadonlyArray<Token>) => {
  const parts: Array<Array<Token>> = [[]]
  const operators = new Set<string>()
  for (const t of tokens) {
    if (t.kind === "word" && (t.value === "&&&" || t.value === "&&&!")) {
      operators.add(t.value)
      parts.push([])
    } else parts[parts.length - 1]!.push(t)
  }
  return { parts, operators }
}

const stepsOf = (body: string, text: string, example: string): ReadonlyArray<Step> | ParseError => {
  const tokens = tokenize(body)
  if (typeof tokens === "string") return new ParseError({ text, problem: `the line has ${tokens}`, example })
  const steps: Array<Step> = []
  for (const part of splitPipeline(tokens)) {
    const { parts, operators } = splitGroup(part)
    if (operators.size > 1) {
      return new ParseError({
        text,
        problem: "one fan-out mixes &&& (every call runs) and &&&! (the first failure stops it); write one of them",
        example: fanoutExample
      })
    }
    const calls: Array<Step> = []
    for (const call of parts) {
      if (call.length === 0) {
        return new ParseError({
          text,
          problem:
            parts.length > 1
              ? "a call of a fan-out is empty (two &&& in a row, or &&& at an end)"
              : "a pipeline step is empty (two >> in a row, or >> at an end)",
          example: parts.length > 1 ? fanoutExample : pipelineExample
        })
      }
      const s = step(call, text, example)
      if (s instanceof ParseError) return s
      calls.push(s)
    }
    steps.push(calls.length === 1 ? calls[0]! : fanout(calls, operators.has("&&&!") ? "fail-fast" : "collect-all"))
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
  const source = steps.length > 1 || steps.some((s) => s.all !== undefined) ? "pipeline" : "execute"
  return { _tag: "Right", right: { steps, source, text: line.trim() } }
}

/**
 * Parses the pipeline DSL `a >> b >> c` (a single path is a one-step
 * pipeline), with fan-out steps `a &&& b` (`&&&!`: fail fast).
 *
 * **Example** (Two reads on one input, then a count of their outputs)
 * ```ts
 * import { Parse } from "@ugent/agentese"
 * const r = Parse.pipeline("world.tools.file.read --path=a.md &&& world.tools.file.read --path=b.md")
 * console.log(r._tag === "Right" ? r.right.steps.map((s) => s.path) : r.left.message)
 * // => [ 'world.tools.file.read &&& world.tools.file.read' ]
 * ```
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

/** A `<parameters>` child's text as a value: a number, `true`/`false`/`null` or JSON as in `EXECUTE` lines, else the text. */
const elementValue = (raw: string): unknown => {
  const trimmed = raw.trim()
  if (trimmed.startsWith("{") || trimmed.startsWith("[")) {
    try {
      return JSON.parse(trimmed)
    } catch {
      // Not JSON: the text it is.
    }
  }
  const value = typed(trimmed, "word")
  // The newline a model puts after `<content>` and before `</content>` is layout, not content.
  return typeof value === "string" ? raw.replace(/^\r?\n/, "").replace(/\r?\n$/, "") : value
}

/** The arguments of a block: a JSON object, or (in `<parameters>`) one element per argument. */
const argumentsOf = (raw: string, element: "input" | "parameters"): Record<string, unknown> | string => {
  const trimmed = raw.trim()
  if (trimmed === "") return {}
  if (element === "parameters" && trimmed.startsWith("<")) {
    const args: Record<string, unknown> = {}
    const child = /\s*<([A-Za-z_][\w-]*)>([\s\S]*?)<\/\1>\s*/y
    let at = 0
    while (at < raw.length) {
      child.lastIndex = at
      const m = child.exec(raw)
      if (m === null) {
        return `<parameters> holds a JSON object or one <key>value</key> element per argument; "${raw.slice(at, at + 40).trim()}" is neither`
      }
      if (m[1]! in args) return `the argument <${m[1]}> is given twice`
      args[m[1]!] = elementValue(m[2]!)
      at = child.lastIndex
    }
    return args
  }
  let value: unknown
  try {
    value = JSON.parse(trimmed)
  } catch (e) {
    return `the <${element}> is not JSON (${e instanceof Error ? e.message : String(e)})`
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return `the <${element}> must be a JSON object of the tool's arguments`
  }
  return value as Record<string, unknown>
}

/**
 * Parses the body of one `<tool_use>` block (the text between `<tool_use>`
 * and `</tool_use>`), in either of the two forms models write. The grammar,
 * where `ws` is any run of spaces, tabs and newlines:
 *
 * ```text
 * block  := "<tool_use>" ws name ws [ args ws ] "</tool_use>"
 * name   := "<name>" ws NAME ws "</name>" | "<tool_name>" ws NAME ws "</tool_name>"
 * args   := "<input>" ws OBJECT ws "</input>"
 *         | "<parameters>" ws ( OBJECT | { "<" KEY ">" VALUE "</" KEY ">" ws } ) "</parameters>"
 * ```
 *
 * `NAME` is a path, a provider-safe name (`world_tools_file_read`) or a
 * pipeline of them (`a >> b`); `OBJECT` is a JSON object, the arguments of
 * the first step (no arguments element is `{}`). In `<parameters>` each
 * argument may be an element of its own (`<path>README.md</path>`), its
 * value typed as in `EXECUTE` lines (numbers, `true`, `false`, `null`, JSON
 * objects and arrays; anything else is text, without the newline after the
 * opening tag and before the closing one). The body is raw text, not XML: no
 * entity is decoded (`&lt;` stays as written), an element ends at the first
 * closing tag of its name, and the block at the first `</tool_use>`. Anything
 * else (another element, text outside the elements, input that is not a JSON
 * object) is a `ParseError` that shows a correct block.
 *
 * **Example** (Both forms, and a mistake)
 * ```ts
 * import { Parse } from "@ugent/agentese"
 * const ok = Parse.toolUse('\n  <name>world_tools_file_read</name>\n  <input>{"path": "README.md", "limit": 5}</input>\n')
 * console.log(ok._tag === "Right" ? ok.right.steps : ok.left.message)
 * // => [ { path: 'world.tools.file.read', args: { path: 'README.md', limit: 5 } } ]
 * const named = Parse.toolUse("<tool_name>world_tools_file_read</tool_name><parameters><path>README.md</path><endLine>5</endLine></parameters>")
 * console.log(named._tag === "Right" ? named.right.steps : named.left.message)
 * // => [ { path: 'world.tools.file.read', args: { path: 'README.md', endLine: 5 } } ]
 * const bad = Parse.toolUse("<name>world_tools_file_read</name><input>path=README.md</input>")
 * console.log(bad._tag === "Left" ? bad.left.problem : "parsed")
 * // => the <input> is not JSON (Unexpected token 'p', "path=README.md" is not valid JSON)
 * ```
 *
 * @category parsing
 * @since 0.2.0
 */
export const toolUse = (
  body: string
): { readonly _tag: "Right"; readonly right: Invocation } | { readonly _tag: "Left"; readonly left: ParseError } => {
  const text = `<tool_use>${body}</tool_use>`
  const fail = (problem: string) => ({
    _tag: "Left" as const,
    left: new ParseError({ text, problem, example: toolUseExample })
  })
  const named = /^\s*<(name|tool_name)>([\s\S]*?)<\/\1>/.exec(body)
  if (named === null) return fail("the block needs a <name> (or <tool_name>) element with the path first")
  const rest = body.slice(named[0].length)
  let params: Record<string, unknown> = {}
  if (rest.trim() !== "") {
    // Greedy to the last closing tag, so an argument may contain "<input>" text.
    const input = /^\s*<(input|parameters)>([\s\S]*)<\/\1>\s*$/.exec(rest)
    if (input === null) {
      return fail(
        `after </${named[1]}> only an <input> (or <parameters>) element with a JSON object of the arguments may follow`
      )
    }
    const args = argumentsOf(input[2]!, input[1] as "input" | "parameters")
    if (typeof args === "string") return fail(args)
    params = args
  }
  const steps: Array<Step> = []
  for (const [i, n] of named[2]!.split(">>").entries()) {
    const path = pathOf(n)
    if (Option.isNone(path)) return fail(`"${n.trim()}" is not a path (dot-separated lowercase words)`)
    steps.push({ path: path.value, args: i === 0 ? params : {} })
  }
  return { _tag: "Right", right: { steps, source: steps.length > 1 ? "pipeline" : "tool_use", text } }
}

/**
 * Every call in a model response, in order (`EXECUTE:` lines, `<tool_call>`
 * and `<tool_use>` blocks), and every block or line that looked like a call
 * but did not parse. A line inside a block belongs to the block.
 *
 * **Example** (A response with two calls and a mistake)
 * ```ts
 * import { Parse } from "@ugent/agentese"
 * const r = Parse.response([
 *   "Let me look.",
 *   "EXECUTE: world.tools.file.read --path=README.md",
 *   '<tool_call>{"tool": "world_tools_git_log", "params": {"limit": 5}}</tool_call>',
 *   '<tool_use><name>world_tools_search_grep</name><input>{"pattern": "TODO"}</input></tool_use>',
 *   "EXECUTE: world.tools.file.read path=x"
 * ].join("\n"))
 * console.log(r.invocations.map((i) => i.steps[0]?.path), r.errors.length)
 * // => [ 'world.tools.file.read', 'world.tools.git.log', 'world.tools.search.grep' ] 1
 * ```
 *
 * @category parsing
 * @since 0.1.0
 */
export const response = (
  text: string
): { readonly invocations: ReadonlyArray<Invocation>; readonly errors: ReadonlyArray<ParseError> } => {
  const found: Array<{ readonly at: number; readonly result: ReturnType<typeof execute> }> = []
  const forms = [
    { tag: "tool_call", parse: (body: string) => toolCall(body.trim()), example: toolCallExample },
    { tag: "tool_use", parse: toolUse, example: toolUseExample }
  ] as const
  // A line inside a block is the block's, not an EXECUTE line of its own.
  const inBlocks: Array<readonly [number, number]> = []
  for (const form of forms) {
    const blocks = new RegExp(`<${form.tag}>([\\s\\S]*?)</${form.tag}>`, "g")
    for (const m of text.matchAll(blocks)) {
      found.push({ at: m.index, result: form.parse(m[1]!) })
      inBlocks.push([m.index, m.index + m[0].length])
    }
    const rest = text.replace(blocks, (m) => " ".repeat(m.length))
    const unclosed = rest.indexOf(`<${form.tag}>`)
    if (unclosed >= 0) {
      found.push({
        at: unclosed,
        result: {
          _tag: "Left",
          left: new ParseError({
            text: text.slice(unclosed, unclosed + 80),
            problem: `the <${form.tag}> block is not closed`,
            example: form.example
          })
        }
      })
    }
  }
  let offset = 0
  for (const line of text.split("\n")) {
    const inside = inBlocks.some(([from, to]) => offset >= from && offset < to)
    if (!inside && /^\s*EXECUTE:/i.test(line)) found.push({ at: offset, result: execute(line) })
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
