/**
 * A parser for the part of the POSIX shell / bash grammar that decides which
 * programs a command line runs: lists (`;`, `&`, newlines), `&&`, `||`,
 * pipelines, subshells and groups, command and process substitutions
 * (`$(…)`, backticks, `<(…)`), parameter and arithmetic expansions that may
 * hide substitutions, quoting (single, double, `$'…'`), escapes, here-documents
 * and redirections. It returns every simple command, nested ones included,
 * with its words after quote removal and flags saying which words are computed
 * at run time. Anything it does not understand is an error, never a pass.
 *
 * @internal
 */

/** One word after quote removal. */
export interface Word {
  /** The literal text; expansions are kept as written (`$HOME`, `$(…)`). */
  readonly text: string
  /** Contains a parameter, command or arithmetic expansion, or brace expansion: its value is known only at run time. */
  readonly dynamic: boolean
  /** Contains an unquoted glob character. */
  readonly glob: boolean
  /** Contains any quoting: `'rm'` is not the reserved word or the name `rm` written bare, but runs the same. */
  readonly quoted: boolean
}

/** A redirection: its operator (`>`, `>>`, `2>`, `&>`, `<`, …) and target word. */
export interface Redirect {
  readonly op: string
  readonly target: Word
}

/** A simple command: its words and redirections, and the source text it came from. */
export interface SimpleCommand {
  readonly words: ReadonlyArray<Word>
  readonly redirects: ReadonlyArray<Redirect>
  readonly source: string
}

export type ParseResult =
  | { readonly ok: true; readonly commands: ReadonlyArray<SimpleCommand> }
  | { readonly ok: false; readonly error: string }

class ParseError extends Error {}

/** Nesting beyond this is refused (never passed): no real command needs it, and it bounds the recursion. */
export const maxDepth = 32

const blank = (c: string | undefined) => c === " " || c === "\t"
const wordEnd = (c: string | undefined) =>
  c === undefined ||
  blank(c) ||
  c === "\n" ||
  c === ";" ||
  c === "&" ||
  c === "|" ||
  c === "<" ||
  c === ">" ||
  c === "(" ||
  c === ")"

interface MutableWord {
  text: string
  dynamic: boolean
  glob: boolean
  quoted: boolean
}

interface PendingHeredoc {
  readonly delimiter: string
  readonly expand: boolean
  readonly stripTabs: boolean
}

class Parser {
  pos = 0
  readonly src: string
  readonly depth: number
  readonly out: Array<SimpleCommand>
  heredocs: Array<PendingHeredoc> = []

  constructor(src: string, depth: number, out: Array<SimpleCommand>) {
    if (depth > maxDepth) throw new ParseError(`the command nests substitutions or shells more than ${maxDepth} deep`)
    this.src = src
    this.depth = depth
    this.out = out
  }

  private peek(offset = 0): string | undefined {
    return this.src[this.pos + offset]
  }

  private startsWith(s: string): boolean {
    return this.src.startsWith(s, this.pos)
  }

  /** Parses a command string nested in this one (backticks, `sh -c` strings) with its own position. */
  private nested(src: string): void {
    const inner = new Parser(src, this.depth + 1, this.out)
    inner.parseList(undefined)
  }

  /** Parses a list until `terminator` (`)`) or the end of the input. */
  parseList(terminator: ")" | undefined): void {
    let words: Array<Word> = []
    let redirects: Array<Redirect> = []
    let start = this.pos
    const finish = () => {
      if (words.length > 0 || redirects.length > 0) {
        this.out.push({ words, redirects, source: this.src.slice(start, this.pos).trim() })
      }
      words = []
      redirects = []
      start = this.pos
    }
    for (;;) {
      while (blank(this.peek())) this.pos++
      const c = this.peek()
      if (c === undefined) {
        if (terminator !== undefined) throw new ParseError(`a "(" or "$(" is never closed`)
        if (this.heredocs.length > 0) throw new ParseError("a here-document is never terminated")
        finish()
        return
      }
      if (c === "\\" && this.peek(1) === "\n") {
        this.pos += 2
        continue
      }
      if (c === "#") {
        // `#` at the start of a word begins a comment.
        while (this.peek() !== undefined && this.peek() !== "\n") this.pos++
        continue
      }
      if (c === ")") {
        if (terminator !== ")") {
          throw new ParseError(
            /(^|[\s;&|(])case\s/.test(this.src)
              ? "case statements are not supported by the command policy; use if/elif instead"
              : `a ")" has no matching "("`
          )
        }
        finish()
        this.pos++
        return
      }
      if (c === "\n") {
        finish()
        this.pos++
        this.readHeredocs()
        start = this.pos
        continue
      }
      if (c === ";" || c === "&" || c === "|") {
        if (this.startsWith(";;") || this.startsWith(";&")) {
          throw new ParseError("case statements are not supported by the command policy")
        }
        if (c === "&" && this.peek(1) === ">") {
          // `&>file` and `&>>file`: a redirection, not a separator.
          redirects.push(this.parseRedirect())
          continue
        }
        finish()
        this.pos += this.startsWith("&&") || this.startsWith("||") || this.startsWith("|&") ? 2 : 1
        start = this.pos
        continue
      }
      if ((c === "<" || c === ">") && this.peek(1) === "(") {
        // Process substitution: a command list whose output is a file name.
        this.pos += 2
        this.sub()
        words.push({ text: "<(…)", dynamic: true, glob: false, quoted: false })
        continue
      }
      if (c === "(") {
        if (words.length === 0) {
          if (this.peek(1) === "(") {
            // `(( arithmetic ))` as a command.
            this.pos += 2
            this.skipArithmetic()
            continue
          }
          this.pos++
          this.sub()
          start = this.pos
          continue
        }
        const last = words[words.length - 1]
        if (last?.text.endsWith("=") && !blank(this.src[this.pos - 1])) {
          // `name=(a b c)`: an array assignment; its elements are words (substitutions in them are parsed).
          this.pos++
          for (;;) {
            while (blank(this.peek()) || this.peek() === "\n") this.pos++
            if (this.peek() === undefined) throw new ParseError("an array assignment is never closed")
            if (this.peek() === ")") break
            this.parseWord()
          }
          this.pos++
          continue
        }
        if (
          words.length === 1 &&
          this.src
            .slice(this.pos + 1)
            .trimStart()
            .startsWith(")")
        ) {
          // `name() { …; }`: a function definition; its body is parsed as commands of its own.
          this.pos = this.src.indexOf(")", this.pos) + 1
          words = []
          start = this.pos
          continue
        }
        throw new ParseError(`an unexpected "(" follows "${words.map((w) => w.text).join(" ")}"`)
      }
      if (this.isRedirectStart()) {
        redirects.push(this.parseRedirect())
        continue
      }
      const word = this.parseWord()
      if (words.length === 0 && !word.quoted && word.text === "[[") {
        this.skipConditional()
        words.push(word)
        continue
      }
      words.push(word)
    }
  }

  /** Parses a nested list (subshell, process substitution) up to its `)`, one level deeper. */
  private sub(): void {
    const inner = new Parser(this.src, this.depth + 1, this.out)
    inner.pos = this.pos
    inner.parseList(")")
    this.pos = inner.pos
    this.heredocs.push(...inner.heredocs)
  }

  private isRedirectStart(): boolean {
    let i = this.pos
    while (i < this.src.length && this.src[i]! >= "0" && this.src[i]! <= "9") i++
    if (i < this.src.length && this.src[i] === "{" && i === this.pos) {
      // `{fd}>file`: a redirection with a named descriptor.
      const close = this.src.indexOf("}", i)
      if (close > i && /^\{[A-Za-z_][A-Za-z0-9_]*\}[<>]/.test(this.src.slice(i, close + 2))) return true
    }
    const c = this.src[i]
    return c === "<" || c === ">"
  }

  private parseRedirect(): Redirect {
    const m = /^(\{[A-Za-z_][A-Za-z0-9_]*\}|[0-9]*)(<<<|<<-|<<|<>|<&|>>|>&|>\||&>>|&>|<|>)/.exec(
      this.src.slice(this.pos)
    )
    if (m === null) throw new ParseError("a redirection could not be read")
    this.pos += m[0].length
    const op = m[2]!
    while (blank(this.peek())) this.pos++
    if (wordEnd(this.peek())) throw new ParseError(`the redirection "${op}" has no target`)
    if (op === "<<" || op === "<<-") {
      const delimiter = this.parseWord()
      this.heredocs.push({ delimiter: delimiter.text, expand: !delimiter.quoted, stripTabs: op === "<<-" })
      return { op, target: delimiter }
    }
    return { op, target: this.parseWord() }
  }

  /** Reads the bodies of the here-documents opened on the line just ended. */
  private readHeredocs(): void {
    const pending = this.heredocs
    this.heredocs = []
    for (const doc of pending) {
      const lines: Array<string> = []
      for (;;) {
        if (this.pos >= this.src.length)
          throw new ParseError(`the here-document "${doc.delimiter}" is never terminated`)
        const end = this.src.indexOf("\n", this.pos)
        const line = this.src.slice(this.pos, end === -1 ? this.src.length : end)
        this.pos = end === -1 ? this.src.length : end + 1
        const text = doc.stripTabs ? line.replace(/^\t+/, "") : line
        if (text === doc.delimiter) break
        lines.push(text)
      }
      // An unquoted delimiter lets the body expand: substitutions in it run.
      if (doc.expand) {
        const body = new Parser(lines.join("\n"), this.depth + 1, this.out)
        body.scanExpansions()
      }
    }
  }

  /** Scans text that undergoes expansion but is not a command (a here-document body) for substitutions. */
  scanExpansions(): void {
    while (this.pos < this.src.length) {
      const c = this.peek()
      if (c === "\\") this.pos += 2
      else if (c === "$" || c === "`")
        this.parseDollarOrBacktick({ text: "", dynamic: false, glob: false, quoted: false })
      else this.pos++
    }
  }

  /** Skips `[[ … ]]`, whose operators (`<`, `&&`, `(`) are not shell operators, parsing its words for substitutions. */
  private skipConditional(): void {
    for (;;) {
      while (blank(this.peek()) || this.peek() === "\n") this.pos++
      if (this.peek() === undefined) throw new ParseError(`a "[[" is never closed by "]]"`)
      if (this.startsWith("]]") && wordEnd(this.peek(2))) {
        this.pos += 2
        return
      }
      const op = /^(&&|\|\||<|>|\(|\)|!)/.exec(this.src.slice(this.pos))
      if (op !== null) this.pos += op[0].length
      else this.parseWord()
    }
  }

  /** Skips an arithmetic expansion or command up to its closing `))`, parsing substitutions inside it. */
  private skipArithmetic(): void {
    let depth = 0
    for (;;) {
      const c = this.peek()
      if (c === undefined) throw new ParseError(`a "((" is never closed by "))"`)
      if (c === ")" && depth === 0 && this.peek(1) === ")") {
        this.pos += 2
        return
      }
      if (c === "(") depth++
      else if (c === ")") depth--
      if (c === "$" || c === "`") {
        this.parseDollarOrBacktick({ text: "", dynamic: false, glob: false, quoted: false })
        continue
      }
      this.pos++
    }
  }

  /** Reads one word: quotes removed, escapes applied, expansions parsed (their commands recorded). */
  parseWord(): Word {
    const w: MutableWord = { text: "", dynamic: false, glob: false, quoted: false }
    for (;;) {
      const c = this.peek()
      if (c === undefined || wordEnd(c)) break
      if (c === "'") {
        w.quoted = true
        const end = this.src.indexOf("'", this.pos + 1)
        if (end === -1) throw new ParseError("a single quote is never closed")
        w.text += this.src.slice(this.pos + 1, end)
        this.pos = end + 1
      } else if (c === '"') {
        w.quoted = true
        this.pos++
        this.parseDoubleQuoted(w)
      } else if (c === "\\") {
        w.quoted = true
        const next = this.peek(1)
        if (next === undefined) throw new ParseError("the command ends with a lone backslash")
        if (next !== "\n") w.text += next
        this.pos += 2
      } else if (c === "$" && this.peek(1) === "'") {
        w.quoted = true
        this.pos += 2
        w.text += this.parseAnsiC()
      } else if (c === "$" && this.peek(1) === '"') {
        w.quoted = true
        this.pos += 2
        this.parseDoubleQuoted(w)
      } else if (c === "$" || c === "`") {
        this.parseDollarOrBacktick(w)
      } else {
        if (c === "*" || c === "?" || c === "[") w.glob = true
        if (c === "{") {
          // Brace expansion turns one word into several (`{rm,-rf,/}` is `rm -rf /`): its result is computed.
          const close = this.findBraceEnd(this.pos)
          if (close !== -1 && /,|\.\./.test(this.src.slice(this.pos + 1, close))) w.dynamic = true
        }
        w.text += c
        this.pos++
      }
    }
    return w
  }

  private findBraceEnd(from: number): number {
    let depth = 0
    for (let i = from; i < this.src.length; i++) {
      const ch = this.src[i]
      if (ch === "{") depth++
      else if (ch === "}") {
        depth--
        if (depth === 0) return i
      } else if (ch === " " || ch === "\t" || ch === "\n" || ch === ";") return -1
    }
    return -1
  }

  private parseDoubleQuoted(w: MutableWord): void {
    for (;;) {
      const c = this.peek()
      if (c === undefined) throw new ParseError("a double quote is never closed")
      if (c === '"') {
        this.pos++
        return
      }
      if (c === "\\") {
        const next = this.peek(1)
        if (next === "$" || next === "`" || next === '"' || next === "\\") {
          w.text += next
          this.pos += 2
        } else if (next === "\n") {
          this.pos += 2
        } else {
          w.text += c
          this.pos++
        }
      } else if (c === "$" || c === "`") {
        this.parseDollarOrBacktick(w)
      } else {
        w.text += c
        this.pos++
      }
    }
  }

  /** `$name`, `${…}`, `$(…)`, `$((…))` and backticks: recorded as run-time values, their commands parsed. */
  private parseDollarOrBacktick(w: MutableWord): void {
    const start = this.pos
    if (this.peek() === "`") {
      this.pos++
      let body = ""
      for (;;) {
        const c = this.peek()
        if (c === undefined) throw new ParseError("a backquote is never closed")
        if (c === "`") {
          this.pos++
          break
        }
        if (c === "\\" && (this.peek(1) === "`" || this.peek(1) === "\\" || this.peek(1) === "$")) {
          body += this.peek(1)
          this.pos += 2
        } else {
          body += c
          this.pos++
        }
      }
      this.nested(body)
    } else if (this.startsWith("$((")) {
      this.pos += 3
      this.skipArithmetic()
    } else if (this.startsWith("$(")) {
      this.pos += 2
      const inner = new Parser(this.src, this.depth + 1, this.out)
      inner.pos = this.pos
      inner.parseList(")")
      this.pos = inner.pos
    } else if (this.startsWith("${")) {
      this.pos += 2
      this.skipParameter()
    } else if (/^\$[A-Za-z_0-9@*#?$!-]/.test(this.src.slice(this.pos, this.pos + 2))) {
      this.pos++
      if (/[A-Za-z_]/.test(this.peek() ?? "")) while (/[A-Za-z_0-9]/.test(this.peek() ?? "")) this.pos++
      else this.pos++
    } else {
      // A lone `$` is a literal dollar sign.
      w.text += "$"
      this.pos++
      return
    }
    w.text += this.src.slice(start, this.pos)
    w.dynamic = true
  }

  /** Skips `${…}` up to its closing brace; substitutions inside it (`${x:-$(cmd)}`) are parsed. */
  private skipParameter(): void {
    for (;;) {
      const c = this.peek()
      if (c === undefined) throw new ParseError('a "${" is never closed')
      if (c === "}") {
        this.pos++
        return
      }
      if (c === "\\") this.pos += 2
      else if (c === "'") {
        const end = this.src.indexOf("'", this.pos + 1)
        if (end === -1) throw new ParseError("a single quote is never closed")
        this.pos = end + 1
      } else if (c === '"') {
        this.pos++
        this.parseDoubleQuoted({ text: "", dynamic: false, glob: false, quoted: true })
      } else if (c === "$" || c === "`") {
        this.parseDollarOrBacktick({ text: "", dynamic: false, glob: false, quoted: false })
      } else this.pos++
    }
  }

  /** `$'…'`: decodes the escapes, so `$'\x72\x6d'` is seen as `rm`. */
  private parseAnsiC(): string {
    let out = ""
    for (;;) {
      const c = this.peek()
      if (c === undefined) throw new ParseError("a $'…' string is never closed")
      this.pos++
      if (c === "'") return out
      if (c !== "\\") {
        out += c
        continue
      }
      const e = this.peek()
      if (e === undefined) throw new ParseError("a $'…' string is never closed")
      this.pos++
      const simple: Record<string, string> = {
        n: "\n",
        t: "\t",
        r: "\r",
        a: "\x07",
        b: "\b",
        e: "\x1b",
        E: "\x1b",
        f: "\f",
        v: "\v",
        "\\": "\\",
        "'": "'",
        '"': '"',
        "?": "?"
      }
      if (e in simple) out += simple[e]
      else if (e === "x") {
        const m = /^[0-9a-fA-F]{1,2}/.exec(this.src.slice(this.pos))
        if (m === null) throw new ParseError("a \\x escape has no hex digits")
        out += String.fromCharCode(Number.parseInt(m[0], 16))
        this.pos += m[0].length
      } else if (e === "u" || e === "U") {
        const m = (e === "u" ? /^[0-9a-fA-F]{1,4}/ : /^[0-9a-fA-F]{1,8}/).exec(this.src.slice(this.pos))
        if (m === null) throw new ParseError("a \\u escape has no hex digits")
        out += String.fromCodePoint(Number.parseInt(m[0], 16))
        this.pos += m[0].length
      } else if (e >= "0" && e <= "7") {
        const m = /^[0-7]{0,2}/.exec(this.src.slice(this.pos))!
        out += String.fromCharCode(Number.parseInt(e + m[0], 8))
        this.pos += m[0].length
      } else if (e === "c") {
        throw new ParseError("\\c control escapes are not supported by the command policy")
      } else {
        out += `\\${e}`
      }
    }
  }
}

/**
 * Parses a command line into its simple commands, nested ones included, in
 * source order (a substitution's commands come before the command that uses
 * its value).
 */
export const parse = (source: string, depth = 0): ParseResult => {
  if (source.includes("\u0000")) return { ok: false, error: "the command contains a NUL byte" }
  const out: Array<SimpleCommand> = []
  try {
    const parser = new Parser(source, depth, out)
    parser.parseList(undefined)
    return { ok: true, commands: out }
  } catch (e) {
    if (e instanceof ParseError) return { ok: false, error: e.message }
    if (e instanceof RangeError) return { ok: false, error: "the command is nested too deeply to vet" }
    throw e
  }
}
