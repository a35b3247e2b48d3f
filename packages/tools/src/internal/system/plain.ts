/**
 * Plain command lines: the only shell text whose meaning can be read without
 * a shell. A plain line is words joined by `&&`, `||`, `;` or `|`; a word is
 * a run of letters, digits and `_ . / : = , + @ % -` (and `~` inside a
 * word, where bash leaves it), or text in single quotes (which bash never
 * expands). Anything else (`$`, backquotes, double
 * quotes, backslashes, globs, a leading `~`, braces, parentheses, redirections, `&`,
 * newlines, comments, an assignment in command position) makes the line not
 * plain. Its simple commands are then exactly the argument vectors bash
 * runs, so matching them against an allow-list cannot be re-spelled around.
 *
 * @internal
 */

const wordChar = /[A-Za-z0-9_./:=,+@%-]/

/** The simple commands of a plain line, as argument vectors; `undefined` when the line is not plain. */
export const plainCommands = (line: string): ReadonlyArray<ReadonlyArray<string>> | undefined => {
  const commands: Array<Array<string>> = []
  let current: Array<string> = []
  let i = 0
  const endCommand = (): boolean => {
    if (current.length === 0) return false
    commands.push(current)
    current = []
    return true
  }
  while (i < line.length) {
    const c = line[i]!
    if (c === " " || c === "\t") {
      i++
      continue
    }
    if (c === ";") {
      if (!endCommand()) return undefined
      i++
      continue
    }
    if (c === "&" || c === "|") {
      const twice = line[i + 1] === c
      // A lone `&` runs in the background and `|&` pipes stderr: neither is plain.
      if (c === "&" && !twice) return undefined
      if (c === "|" && line[i + 1] === "&") return undefined
      if (!endCommand()) return undefined
      i += twice ? 2 : 1
      continue
    }
    let word = ""
    let quoted = false
    while (i < line.length) {
      const d = line[i]!
      if (wordChar.test(d)) {
        word += d
        i++
      } else if (d === "~" && word !== "" && !word.endsWith("=") && !word.endsWith(":")) {
        // A tilde inside a word (HEAD~1) is literal; at its start, or after = or :, bash expands it.
        word += d
        i++
      } else if (d === "'") {
        const close = line.indexOf("'", i + 1)
        if (close === -1) return undefined
        word += line.slice(i + 1, close)
        quoted = true
        i = close + 1
      } else break
    }
    if (i < line.length && !/[ \t;&|]/.test(line[i]!)) return undefined
    // An unquoted assignment in command position sets a variable for the command (PATH=., BASH_ENV=…).
    if (current.length === 0 && !quoted && word.includes("=")) return undefined
    current.push(word)
  }
  if (current.length > 0) commands.push(current)
  else if (commands.length > 0) return undefined // a trailing operator
  return commands.length === 0 ? undefined : commands
}

/** Whether an argument vector matches a pattern: its words literally, and a final `*` any further words. */
export const matches = (argv: ReadonlyArray<string>, pattern: ReadonlyArray<string>): boolean => {
  const open = pattern.length > 0 && pattern[pattern.length - 1] === "*"
  const fixed = open ? pattern.slice(0, -1) : pattern
  if (open ? argv.length < fixed.length : argv.length !== fixed.length) return false
  return fixed.every((w, i) => argv[i] === w)
}
