/**
 * The pattern language of `search.grep`: RE2 syntax, checked by re2js (a
 * linear-time port of RE2), and the three things derived from one parse of
 * it. (1) A translation to the syntax of ripgrep's Rust engine that means
 * the same thing: Perl classes (`\d \w \s`) and word boundaries (`\b \B`)
 * are ASCII in both engines, as in RE2, Go and JavaScript; every literal
 * punctuation character is written as `\x{..}` so the two parsers cannot
 * read it differently; octal escapes, `\Q…\E` and `(?<name>…)` become forms
 * Rust accepts. (2) The longest literal every matching line must contain,
 * used to skip lines and files that cannot match before the regex runs.
 * (3) The rule both engines share: a pattern that can only match a newline
 * is refused, because a match never spans lines.
 *
 * @internal
 */
import { RE2JS } from "re2js"

/** Why a pattern cannot be used. */
export interface PatternProblem {
  readonly reason: "nul-byte" | "syntax" | "newline" | "too-large"
  readonly detail: string
}

/**
 * How to find candidate lines without the regex: a byte string every
 * matching line contains (case-sensitive), or an ASCII string matched
 * without regard to case on the latin1 view of the bytes.
 */
export type Prefilter =
  | { readonly kind: "bytes"; readonly needle: Buffer }
  | { readonly kind: "ascii-ci"; readonly needle: string }

export interface CompiledPattern {
  readonly source: string
  readonly caseSensitive: boolean
  /** Matches one line (without its terminator). */
  readonly regex: RE2JS
  /**
   * Tests one line: with V8's `RegExp` when the pattern has neither
   * quantifiers nor groups (see {@link linearJs}), with re2js otherwise.
   */
  readonly test: (line: string) => boolean
  /** The 1-based column (in characters) where the first match in a matching line starts. */
  readonly column: (line: string) => number
  /** The same regex in the syntax of ripgrep's default engine. */
  readonly rust: string
  readonly prefilter: Prefilter | undefined
  /** A line matches exactly when it contains the prefilter's needle: no regex needed. */
  readonly exact: boolean
  /** `\A` or `\z` appear: a whole buffer cannot be searched at once, only line by line. */
  readonly textAnchors: boolean
}

type Token =
  | { readonly t: "lit"; readonly c: string }
  | {
      readonly t: "class"
      readonly rust: string
      /** The same class for V8's `RegExp` with the `u` flag, when it can be written. */
      readonly js: string | undefined
      readonly onlyNewline: boolean
    }
  | { readonly t: "zero"; readonly rust: string; readonly js: string; readonly textAnchor: boolean }
  | { readonly t: "any" }
  | { readonly t: "open"; readonly rust: string }
  | { readonly t: "flags"; readonly rust: string; readonly flags: string }
  | { readonly t: "close" }
  | { readonly t: "alt" }
  | { readonly t: "quant"; readonly rust: string; readonly min: number }

class Unsupported extends Error {}

const isOctal = (c: string | undefined) => c !== undefined && c >= "0" && c <= "7"
const isHex = (c: string | undefined) => c !== undefined && /^[0-9A-Fa-f]$/.test(c)
const isAlnum = (cp: number) => (cp >= 48 && cp <= 57) || (cp >= 65 && cp <= 90) || (cp >= 97 && cp <= 122)

/** A literal code point as Rust reads it, in or out of a class: letters, digits and non-ASCII as is, the rest as `\x{..}`. */
const rustLiteral = (c: string): string => {
  const cp = c.codePointAt(0)!
  return isAlnum(cp) || cp >= 0x80 ? c : `\\x{${cp.toString(16).toUpperCase()}}`
}

// The Perl classes with RE2's ASCII meaning, as bracket classes Rust accepts alone or nested in another class.
const perlClasses: Record<string, string> = {
  d: "[0-9]",
  D: "[^0-9]",
  w: "[0-9A-Za-z_]",
  W: "[^0-9A-Za-z_]",
  s: "[\\x{9}\\x{A}\\x{C}\\x{D}\\x{20}]",
  S: "[^\\x{9}\\x{A}\\x{C}\\x{D}\\x{20}]"
}

// The same classes for V8's RegExp (`u` flag): \d and \w are ASCII there too; \s is not, so it is spelled out.
const perlJs: Record<string, { readonly alone: string; readonly inClass: string | undefined }> = {
  d: { alone: "\\d", inClass: "\\d" },
  D: { alone: "\\D", inClass: "\\D" },
  w: { alone: "\\w", inClass: "\\w" },
  W: { alone: "\\W", inClass: "\\W" },
  s: { alone: "[\\t\\n\\f\\r ]", inClass: "\\t\\n\\f\\r " },
  S: { alone: "[^\\t\\n\\f\\r ]", inClass: undefined }
}

// POSIX classes as the ranges they name (V8 has no `[:alpha:]`).
const posixJs: Record<string, string> = {
  alnum: "0-9A-Za-z",
  alpha: "A-Za-z",
  ascii: "\\x00-\\x7F",
  blank: "\\t ",
  cntrl: "\\x00-\\x1F\\x7F",
  digit: "0-9",
  graph: "!-~",
  lower: "a-z",
  print: " -~",
  punct: "!-\\/:-@\\[-`{-~",
  space: "\\t\\n\\v\\f\\r ",
  upper: "A-Z",
  word: "0-9A-Za-z_",
  xdigit: "0-9A-Fa-f"
}

/** A literal code point for V8's RegExp with the `u` flag. */
const jsLiteral = (c: string): string => {
  const cp = c.codePointAt(0)!
  return isAlnum(cp) ? c : `\\u{${cp.toString(16)}}`
}

const posixNames = new Set([
  "alnum",
  "alpha",
  "ascii",
  "blank",
  "cntrl",
  "digit",
  "graph",
  "lower",
  "print",
  "punct",
  "space",
  "upper",
  "word",
  "xdigit"
])

/** Splits an RE2 pattern (already accepted by re2js) into tokens. */
const tokenize = (p: string): ReadonlyArray<Token> => {
  const tokens: Array<Token> = []
  let i = 0
  const at = (k = 0): string | undefined => p[i + k]
  const codePoint = (): string => {
    const c = String.fromCodePoint(p.codePointAt(i)!)
    i += c.length
    return c
  }
  // After a backslash, at the escaped character: octal, hex, control and punctuation escapes.
  const escaped = (): string => {
    const c = at()
    if (c === undefined) throw new Unsupported("trailing backslash")
    if (isOctal(c) && (c === "0" || isOctal(at(1)))) {
      let digits = ""
      while (digits.length < 3 && isOctal(at())) digits += p[i++]
      return String.fromCodePoint(Number.parseInt(digits, 8))
    }
    if (c === "x") {
      i++
      if (at() === "{") {
        const end = p.indexOf("}", i)
        if (end < 0) throw new Unsupported("unclosed \\x{")
        const hex = p.slice(i + 1, end)
        i = end + 1
        return String.fromCodePoint(Number.parseInt(hex, 16))
      }
      if (!isHex(at()) || !isHex(at(1))) throw new Unsupported("bad \\x escape")
      const hex = p.slice(i, i + 2)
      i += 2
      return String.fromCodePoint(Number.parseInt(hex, 16))
    }
    const controls: Record<string, string> = { a: "\x07", f: "\f", n: "\n", r: "\r", t: "\t", v: "\v" }
    const control = controls[c]
    if (control !== undefined) {
      i++
      return control
    }
    const cp = c.codePointAt(0)!
    if (cp < 0x80 && !isAlnum(cp)) {
      i++
      return c
    }
    throw new Unsupported(`escape \\${c}`)
  }
  // At `\p` or `\P`: a Unicode class, with `\p{^X}` written as `\P{X}`.
  const unicodeClass = (): string => {
    const negated = at(1) === "P"
    i += 2
    let name: string
    if (at() === "{") {
      const end = p.indexOf("}", i)
      if (end < 0) throw new Unsupported("unclosed \\p{")
      name = p.slice(i + 1, end)
      i = end + 1
    } else {
      name = codePoint()
    }
    let neg = negated
    if (name.startsWith("^")) {
      neg = !neg
      name = name.slice(1)
    }
    return `\\${neg ? "P" : "p"}{${name}}`
  }
  const bracket = (): Token => {
    i++ // [
    const negated = at() === "^"
    if (negated) i++
    const items: Array<string> = []
    // The V8 spelling; undefined once an item has none (a negated POSIX or Perl class, a Unicode class).
    let js: Array<string> | undefined = []
    let onlyNewline = true
    let first = true
    while (i < p.length && (at() !== "]" || first)) {
      first = false
      if (at() === "[" && at(1) === ":") {
        const end = p.indexOf(":]", i + 2)
        const name = end < 0 ? "" : p.slice(i + 2, end)
        if (end >= 0 && posixNames.has(name.replace(/^\^/, ""))) {
          items.push(`[:${name}:]`)
          if (name.startsWith("^")) js = undefined
          else js?.push(posixJs[name]!)
          onlyNewline = false
          i = end + 2
          continue
        }
      }
      if (at() === "\\" && (at(1) === "p" || at(1) === "P")) {
        items.push(unicodeClass())
        js = undefined
        onlyNewline = false
        continue
      }
      if (at() === "\\" && at(1) !== undefined && perlClasses[at(1)!] !== undefined) {
        items.push(perlClasses[at(1)!]!)
        const inClass = perlJs[at(1)!]!.inClass
        if (inClass === undefined) js = undefined
        else js?.push(inClass)
        onlyNewline = false
        i += 2
        continue
      }
      const classChar = (): string => {
        if (at() === "\\") {
          i++
          return escaped()
        }
        return codePoint()
      }
      const lo = classChar()
      if (at() === "-" && at(1) !== undefined && at(1) !== "]") {
        i++
        const hi = classChar()
        items.push(`${rustLiteral(lo)}-${rustLiteral(hi)}`)
        js?.push(`${jsLiteral(lo)}-${jsLiteral(hi)}`)
        if (lo !== "\n" || hi !== "\n") onlyNewline = false
      } else {
        items.push(rustLiteral(lo))
        js?.push(jsLiteral(lo))
        if (lo !== "\n") onlyNewline = false
      }
    }
    if (at() !== "]") throw new Unsupported("unclosed class")
    i++
    return {
      t: "class",
      rust: `[${negated ? "^" : ""}${items.join("")}]`,
      js: js === undefined ? undefined : `[${negated ? "^" : ""}${js.join("")}]`,
      onlyNewline: onlyNewline && !negated
    }
  }

  while (i < p.length) {
    const c = at()!
    if (c === "(") {
      if (at(1) === "?") {
        const named = /^\(\?P?<([A-Za-z0-9_]+)>/.exec(p.slice(i))
        if (named !== null) {
          tokens.push({ t: "open", rust: `(?P<${named[1]}>` })
          i += named[0].length
          continue
        }
        const flags = /^\(\?([imsU]*(?:-[imsU]*)?)([:)])/.exec(p.slice(i))
        if (flags === null) throw new Unsupported("group syntax")
        i += flags[0].length
        if (flags[2] === ":") tokens.push({ t: "open", rust: `(?${flags[1]}:` })
        else tokens.push({ t: "flags", rust: `(?${flags[1]})`, flags: flags[1]! })
        continue
      }
      tokens.push({ t: "open", rust: "(" })
      i++
    } else if (c === ")") {
      tokens.push({ t: "close" })
      i++
    } else if (c === "|") {
      tokens.push({ t: "alt" })
      i++
    } else if (c === "*" || c === "+" || c === "?") {
      i++
      const lazy = at() === "?" ? "?" : ""
      i += lazy.length
      tokens.push({ t: "quant", rust: c + lazy, min: c === "+" ? 1 : 0 })
    } else if (c === "{" && /^\{\d+(,\d*)?\}/.test(p.slice(i))) {
      const m = /^\{(\d+)(,\d*)?\}/.exec(p.slice(i))!
      i += m[0].length
      const lazy = at() === "?" ? "?" : ""
      i += lazy.length
      tokens.push({ t: "quant", rust: m[0] + lazy, min: Number(m[1]) })
    } else if (c === "^" || c === "$") {
      tokens.push({ t: "zero", rust: c, js: c, textAnchor: false })
      i++
    } else if (c === ".") {
      tokens.push({ t: "any" })
      i++
    } else if (c === "[") {
      tokens.push(bracket())
    } else if (c === "\\") {
      const e = at(1)
      if (e === "A" || e === "z") {
        tokens.push({ t: "zero", rust: `\\${e}`, js: e === "A" ? "^" : "$", textAnchor: true })
        i += 2
      } else if (e === "b" || e === "B") {
        tokens.push({ t: "zero", rust: `(?-u:\\${e})`, js: `\\${e}`, textAnchor: false })
        i += 2
      } else if (e === "Q") {
        i += 2
        const end = p.indexOf("\\E", i)
        const text = end < 0 ? p.slice(i) : p.slice(i, end)
        i = end < 0 ? p.length : end + 2
        for (const ch of text) tokens.push({ t: "lit", c: ch })
      } else if (e !== undefined && perlClasses[e] !== undefined) {
        tokens.push({ t: "class", rust: perlClasses[e]!, js: perlJs[e]!.alone, onlyNewline: false })
        i += 2
      } else if (e === "p" || e === "P") {
        tokens.push({ t: "class", rust: unicodeClass(), js: undefined, onlyNewline: false })
      } else {
        i++
        tokens.push({ t: "lit", c: escaped() })
      }
    } else {
      tokens.push({ t: "lit", c: codePoint() })
    }
  }
  return tokens
}

const toRust = (tokens: ReadonlyArray<Token>): string =>
  tokens
    .map((tok) => {
      switch (tok.t) {
        case "lit":
          return rustLiteral(tok.c)
        case "any":
          return "."
        case "close":
          return ")"
        case "alt":
          return "|"
        default:
          return tok.rust
      }
    })
    .join("")

const caseFoldsOutsideAscii = new Set(["k", "K", "s", "S"])

/** The longest run of a case-insensitive literal that an ASCII case-insensitive search finds exactly. */
const asciiCiPart = (text: string): string => {
  let best = ""
  let current = ""
  for (const ch of text) {
    const cp = ch.codePointAt(0)!
    if (cp < 0x80 && !caseFoldsOutsideAscii.has(ch)) {
      current += ch
      if (current.length > best.length) best = current
    } else {
      current = ""
    }
  }
  return best
}

interface Run {
  readonly text: string
  readonly ci: boolean
}

/** The literal runs every match must contain, or `undefined` when the top level has an alternation. */
const requiredRuns = (tokens: ReadonlyArray<Token>, ci0: boolean): ReadonlyArray<Run> | undefined => {
  const runs: Array<Run> = []
  let depth = 0
  let ci = ci0
  let text = ""
  const end = () => {
    if (text !== "") runs.push({ text, ci })
    text = ""
  }
  for (let k = 0; k < tokens.length; k++) {
    const tok = tokens[k]!
    if (tok.t === "open") {
      if (depth === 0) end()
      depth++
      continue
    }
    if (tok.t === "close") {
      depth--
      continue
    }
    if (depth > 0) continue
    if (tok.t === "alt") return undefined
    if (tok.t === "flags") {
      end()
      const [on = "", off = ""] = tok.flags.split("-")
      if (on.includes("i")) ci = true
      if (off.includes("i")) ci = false
      continue
    }
    if (tok.t === "lit") {
      const next = tokens[k + 1]
      if (next?.t === "quant") {
        if (next.min >= 1) text += tok.c
        end()
        k++
        continue
      }
      text += tok.c
      continue
    }
    end()
  }
  end()
  return runs
}

/**
 * The largest compiled program accepted. Matching is linear in the line
 * length, but its constant grows with the program (`a{1000}` repeated a
 * thousand times would cost a million steps per byte), so size is bounded
 * as ripgrep bounds it.
 */
export const maxProgramSize = 5000

/**
 * The pattern as a V8 `RegExp`, when that is safe and means the same. Safe:
 * without quantifiers and groups, a backtracking engine tries each
 * alternative once at each position of the line and compares at most the
 * pattern's length there, so its time is linear in the line (times the
 * pattern's length), like re2js, only with a smaller constant. The same:
 * the `u` flag makes `.` and classes work on code points, `.` is written
 * `[^\n]`, `\s` is spelled out, and `\b` is not used with case folding
 * (V8 then counts `ſ` and the Kelvin sign as word characters; RE2 does not).
 */
const linearJs = (tokens: ReadonlyArray<Token>, caseInsensitive: boolean): RegExp | undefined => {
  let source = ""
  for (const tok of tokens) {
    if (tok.t === "lit") source += jsLiteral(tok.c)
    else if (tok.t === "any") source += "[^\\n]"
    else if (tok.t === "alt") source += "|"
    else if (tok.t === "class" && tok.js !== undefined) source += tok.js
    else if (tok.t === "zero" && !(caseInsensitive && (tok.js === "\\b" || tok.js === "\\B"))) source += tok.js
    else return undefined
  }
  try {
    return new RegExp(source, caseInsensitive ? "iu" : "u")
  } catch {
    return undefined
  }
}

const problem = (reason: PatternProblem["reason"], detail: string): PatternProblem => ({ reason, detail })

/** Where the first match starts, counted in characters (code points) from 1; re2js reports UTF-16 units. */
const columnOf = (regex: RE2JS, line: string): number => {
  const m = regex.matcher(line)
  if (!m.find()) return 1
  let column = 1
  for (let i = 0; i < m.start(); i++) {
    const code = line.charCodeAt(i)
    // A surrogate pair is one character.
    if (code >= 0xd800 && code <= 0xdbff && i + 1 < m.start()) i++
    column++
  }
  return column
}

/**
 * Checks and compiles a pattern. `caseSensitive: false` is ripgrep's `-i`
 * (RE2's `(?i)` for the whole pattern); inline flags work in both cases.
 */
export const compile = (
  source: string,
  caseSensitive: boolean
):
  | { readonly ok: true; readonly value: CompiledPattern }
  | { readonly ok: false; readonly problem: PatternProblem } => {
  if (source.includes("\0")) {
    return { ok: false, problem: problem("nul-byte", "the pattern contains a NUL byte") }
  }
  let regex: RE2JS
  try {
    regex = RE2JS.compile(source, caseSensitive ? 0 : RE2JS.CASE_INSENSITIVE)
  } catch (e) {
    return { ok: false, problem: problem("syntax", e instanceof Error ? e.message : String(e)) }
  }
  if (regex.programSize() > maxProgramSize) {
    return {
      ok: false,
      problem: problem(
        "too-large",
        `the compiled program has ${regex.programSize()} instructions, over the limit of ${maxProgramSize}`
      )
    }
  }
  let tokens: ReadonlyArray<Token>
  try {
    tokens = tokenize(source)
  } catch (e) {
    // re2js accepted something this reader does not know: refuse it rather than guess what ripgrep would do.
    return { ok: false, problem: problem("syntax", `unsupported syntax (${(e as Error).message})`) }
  }
  if (tokens.some((tok) => (tok.t === "lit" && tok.c === "\n") || (tok.t === "class" && tok.onlyNewline))) {
    return {
      ok: false,
      problem: problem("newline", "the literal '\\n' is not allowed in a regex: a match never spans lines")
    }
  }
  const runs = requiredRuns(tokens, !caseSensitive) ?? []
  let prefilter: Prefilter | undefined
  let weight = 0
  for (const run of runs) {
    if (run.ci) {
      const part = asciiCiPart(run.text)
      if (part.length > weight) {
        weight = part.length
        prefilter = { kind: "ascii-ci", needle: part }
      }
    } else {
      const needle = Buffer.from(run.text, "utf8")
      if (needle.length > weight) {
        weight = needle.length
        prefilter = { kind: "bytes", needle }
      }
    }
  }
  // Exact: the pattern is one literal (after an optional leading flag group) and the prefilter covers all of it.
  const body = tokens[0]?.t === "flags" ? tokens.slice(1) : tokens
  const pure = body.length > 0 && body.every((tok) => tok.t === "lit") && runs.length === 1
  const whole = runs[0]?.text ?? ""
  const exact =
    pure &&
    prefilter !== undefined &&
    (prefilter.kind === "bytes" ? prefilter.needle.toString("utf8") === whole : prefilter.needle === whole)
  const v8 = linearJs(tokens, !caseSensitive)
  return {
    ok: true,
    value: {
      source,
      caseSensitive,
      regex,
      test: v8 === undefined ? (line) => regex.test(line) : (line) => v8.test(line),
      column: (line) => columnOf(regex, line),
      rust: toRust(tokens),
      prefilter,
      exact,
      textAnchors: tokens.some((tok) => tok.t === "zero" && tok.textAnchor)
    }
  }
}
