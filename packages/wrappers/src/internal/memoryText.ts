// How working memory measures and cuts its text. Every MemoryStore backend cuts
// in JavaScript with these functions, so offsets (UTF-16 code units, like
// `String.length`) and line numbers mean the same thing on every backend.

/** Lines of a text: a final newline does not start another line. */
export const countLines = (text: string): number => {
  if (text === "") return 0
  let n = 1
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) n++
  return text.endsWith("\n") ? n - 1 : n
}

/** The characters `[offset, offset + length)`, clamped to the text. */
export const sliceChars = (text: string, offset: number, length: number) => {
  const start = Math.min(Math.max(0, Math.floor(offset)), text.length)
  const end = Math.min(text.length, start + Math.max(0, Math.floor(length)))
  return { content: text.slice(start, end), offset: start, length: end - start, hasMore: end < text.length }
}

/** Lines `start .. start + count - 1` (1-based), clamped to the text, joined by newlines. */
export const sliceLines = (text: string, start: number, count: number) => {
  const total = countLines(text)
  const first = Math.max(1, Math.floor(start))
  const last = Math.min(total, first + Math.max(0, Math.floor(count)) - 1)
  if (last < first) return { content: "", start: first, end: first - 1, hasMore: false, lines: total }
  // Walk to the first line's offset without splitting the whole text.
  let from = 0
  for (let line = 1; line < first; line++) from = text.indexOf("\n", from) + 1
  let to = from
  for (let line = first; line <= last; line++) {
    const nl = text.indexOf("\n", to)
    to = nl === -1 ? text.length : nl + 1
  }
  const content = text.slice(from, to).replace(/\n$/, "")
  return { content, start: first, end: last, hasMore: last < total, lines: total }
}
