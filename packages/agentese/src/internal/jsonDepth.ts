/**
 * How deep JSON text nests, read in one pass before anything walks it
 * recursively: `JSON.parse` copes with any depth, but `JSON.stringify`,
 * schema decoding and the road's records recurse, and a 100,000-deep value
 * overflows their stack (a `RangeError` where a request needed an answer).
 *
 * @internal
 */

/** The deepest nesting of arrays and objects a request may have; real MCP and tool inputs stay far below it. */
export const maxDepth = 128

/**
 * Whether `text` nests arrays and objects deeper than `max`. Strings are
 * skipped with `indexOf`, so a large string costs little; invalid JSON gets
 * some answer, which does not matter: the parser refuses it anyway.
 */
export const nestsDeeperThan = (text: string, max: number = maxDepth): boolean => {
  let depth = 0
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c === 34) {
      // A string: its end is the next quote preceded by an even run of backslashes.
      let end = i
      for (;;) {
        end = text.indexOf('"', end + 1)
        if (end === -1) return false
        let slashes = 0
        while (text.charCodeAt(end - 1 - slashes) === 92) slashes++
        if (slashes % 2 === 0) break
      }
      i = end
    } else if (c === 123 || c === 91) {
      if (++depth > max) return true
    } else if (c === 125 || c === 93) {
      depth--
    }
  }
  return false
}
