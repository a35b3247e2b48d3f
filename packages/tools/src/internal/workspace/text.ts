/**
 * Lines of workspace text, as the file tools show them: a line is what
 * precedes a `\n` (a final line without one counts too, an empty trailing
 * piece does not), a `\r` before the `\n` is hidden from display, and line
 * numbers are 1-based. Reads work on the bytes: lines are counted with the
 * native `indexOf` and only the shown window is decoded, so showing 2,000
 * lines of a 1 MB file neither decodes nor splits the rest.
 *
 * @internal
 */

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

export interface Lines extends Window {
  readonly totalLines: number
  readonly lineEndings: "lf" | "crlf" | "mixed" | "none"
}

/**
 * Lines `start..start + limit - 1` (1-based) of UTF-8 bytes read from `from`
 * (past a byte order mark), each cut at `maxLength` characters, with the
 * file's line count and line-ending style. Every byte is visited once: the
 * lines before and after the window by the native `indexOf`, the window by
 * one decode and split.
 */
export const readLines = (bytes: Uint8Array, from: number, start: number, limit: number, maxLength: number): Lines => {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  let lf = 0
  let crlf = 0
  /** Counts the newlines of `buf[pos..]`, at most `max`; returns where it stopped. */
  const skip = (pos: number, max: number): { readonly pos: number; readonly lines: number } => {
    let lines = 0
    while (lines < max && pos < buf.length) {
      const nl = buf.indexOf(10, pos)
      if (nl === -1) {
        lines++
        pos = buf.length
        break
      }
      if (nl > from && buf[nl - 1] === 13) crlf++
      else lf++
      lines++
      pos = nl + 1
    }
    return { pos, lines }
  }
  const before = skip(from, start - 1)
  const window = skip(before.pos, limit)
  const after = skip(window.pos, Number.POSITIVE_INFINITY)
  const totalLines = before.lines + window.lines + after.lines
  const newlines = lf + crlf
  const lineEndings = newlines === 0 ? "none" : lf === 0 ? "crlf" : crlf === 0 ? "lf" : "mixed"
  if (window.lines === 0) return { lines: [], cut: 0, totalLines, lineEndings }
  const text = buf.toString("utf8", before.pos, window.pos)
  const pieces = text.split("\n")
  if (text.endsWith("\n")) pieces.pop()
  let cut = 0
  for (let i = 0; i < pieces.length; i++) {
    let content = pieces[i]!
    if (content.endsWith("\r")) content = content.slice(0, -1)
    if (content.length > maxLength) {
      cut++
      content = `${content.slice(0, maxLength)}… [line cut: ${content.length - maxLength} more characters]`
    }
    pieces[i] = content
  }
  return { lines: pieces, cut, totalLines, lineEndings }
}

/** `N<TAB>line` numbering, joined with `\n`. */
export const numbered = (lines: ReadonlyArray<string>, start: number): string => {
  // String concatenation builds a rope in V8, cheaper here than map + join.
  let out = ""
  for (let i = 0; i < lines.length; i++) out += `${i === 0 ? "" : "\n"}${start + i}\t${lines[i]}`
  return out
}
