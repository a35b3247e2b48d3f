/**
 * Lines of workspace text, as the file tools show them: a line is what
 * precedes a `\n` (a final line without one counts too, an empty trailing
 * piece does not), a `\r` before the `\n` is hidden from display, and line
 * numbers are 1-based. Counting and slicing walk the string with `indexOf`,
 * so a window of 2,000 lines of a 1 MB file does not split the whole file.
 *
 * @internal
 */

/** How many lines a text has: `""` 0, `"a"` 1, `"a\n"` 1, `"a\nb"` 2. */
export const countLines = (text: string): number => {
  if (text.length === 0) return 0
  let n = 0
  let i = text.indexOf("\n")
  while (i !== -1) {
    n++
    i = text.indexOf("\n", i + 1)
  }
  return text.endsWith("\n") ? n : n + 1
}

/** Line ending style of a text: only `\r\n`, only `\n`, both, or none (fewer than two lines). */
export const lineEndings = (text: string): "lf" | "crlf" | "mixed" | "none" => {
  let lf = 0
  let crlf = 0
  let i = text.indexOf("\n")
  while (i !== -1) {
    if (i > 0 && text.charCodeAt(i - 1) === 13) crlf++
    else lf++
    i = text.indexOf("\n", i + 1)
  }
  return lf === 0 && crlf === 0 ? "none" : lf === 0 ? "crlf" : crlf === 0 ? "lf" : "mixed"
}

export interface Window {
  /** The shown lines, numbered `start..start + lines.length - 1`. */
  readonly lines: ReadonlyArray<string>
  /** How many shown lines were cut at the length limit. */
  readonly cut: number
}

/** Lines `start..start + limit - 1` (1-based), each cut at `maxLength` characters. */
export const window = (text: string, start: number, limit: number, maxLength: number): Window => {
  const lines: Array<string> = []
  let cut = 0
  let pos = 0
  let line = 1
  while (line < start && pos < text.length) {
    const nl = text.indexOf("\n", pos)
    if (nl === -1) {
      pos = text.length
    } else {
      pos = nl + 1
    }
    line++
  }
  while (lines.length < limit && pos < text.length) {
    const nl = text.indexOf("\n", pos)
    const end = nl === -1 ? text.length : nl
    let content = text.slice(pos, end > pos && text.charCodeAt(end - 1) === 13 ? end - 1 : end)
    if (content.length > maxLength) {
      content = `${content.slice(0, maxLength)}… [line cut: ${content.length - maxLength} more characters]`
      cut++
    }
    lines.push(content)
    pos = nl === -1 ? text.length : nl + 1
  }
  return { lines, cut }
}

/** The 1-based line of the character at `index`. */
export const lineAt = (text: string, index: number): number => {
  let n = 1
  let i = text.indexOf("\n")
  while (i !== -1 && i < index) {
    n++
    i = text.indexOf("\n", i + 1)
  }
  return n
}

/** How many `\n` a string holds. */
export const newlines = (text: string): number => {
  let n = 0
  let i = text.indexOf("\n")
  while (i !== -1) {
    n++
    i = text.indexOf("\n", i + 1)
  }
  return n
}
