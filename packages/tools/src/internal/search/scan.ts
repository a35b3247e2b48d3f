/**
 * Searching one file, line by line, the way ripgrep does with memory maps
 * (which the ripgrep backend forces with `--mmap`, so both agree):
 *
 * - a NUL byte in the first 64 KiB makes the file binary: it is skipped;
 * - otherwise lines are emitted in order (a match, and in content mode the
 *   context lines around it, each line once), and the first emitted line
 *   that holds a NUL byte stops the file; what was emitted before stays in
 *   content mode, while in count and files mode the file is dropped;
 * - a file starting with a UTF-16 byte order mark is decoded to UTF-8 first,
 *   and a UTF-8 byte order mark is dropped.
 *
 * The file is read in chunks (1 MiB), so a search that stops early stops
 * reading, and memory is bounded by the chunk and the longest line. Lines
 * are found without the regex when the pattern has a required literal
 * (`Buffer.indexOf`, or a case-folding Boyer-Moore-Horspool search), and
 * the regex only confirms candidate lines.
 *
 * @internal
 */
import { readSync } from "node:fs"
import type { CompiledPattern } from "./pattern.ts"

/** A context line: its 1-based number and its text. */
export interface Line {
  readonly line: number
  readonly text: string
}

/** A matching line with its context, as the content mode reports it. */
export interface FileMatch {
  readonly line: number
  /** 1-based, in characters of the whole line (not the shown text, which may be cut). */
  readonly column: number
  readonly text: string
  readonly before: ReadonlyArray<Line>
  readonly after: ReadonlyArray<Line>
}

export interface ScanSettings {
  readonly pattern: CompiledPattern
  readonly before: number
  readonly after: number
  /** Characters of a line kept in results; longer lines are cut and end with `…`. */
  readonly lineLength: number
}

/** ripgrep's binary-detection window on a memory-mapped file. */
const binaryWindow = 65536
const chunkSize = 1 << 20
const NL = 10

/**
 * A line as results show it: decoded as UTF-8 with `Buffer#toString` (an
 * invalid sequence becomes U+FFFD), without its `\r`, cut at `max`
 * characters (never inside a surrogate pair). Both backends show lines
 * through this one function.
 */
export const displayLine = (buf: Buffer, start: number, end: number, max: number): string => {
  const last = end > start && buf[end - 1] === 13 ? end - 1 : end
  const t = buf.toString("utf8", start, last)
  if (t.length <= max) return t
  let cut = max
  const code = t.charCodeAt(cut - 1)
  if (code >= 0xd800 && code <= 0xdbff) cut--
  return `${t.slice(0, cut)}…`
}

/**
 * A read buffer shared by the files of one search (they are read one after
 * the other), so a search allocates once instead of once per file.
 */
export interface Scratch {
  buf: Buffer
}

export const makeScratch = (): Scratch => ({ buf: Buffer.allocUnsafe(0) })

/** The bytes of a file, read in chunks into one growable buffer. */
class Source {
  buf: Buffer
  len = 0
  eof = false
  private readonly fd: number | undefined
  private readonly scratch: Scratch | undefined
  constructor(fd: number | undefined, sizeHint: number, scratch: Scratch | undefined, initial?: Buffer) {
    this.fd = fd
    this.scratch = scratch
    if (initial !== undefined) {
      this.buf = initial
      this.len = initial.length
      this.eof = true
    } else {
      // Room for a small file and the read that reports its end; big files are read a chunk at a time.
      const want = Math.min(Math.max(sizeHint + 1, 4096), chunkSize)
      if (scratch !== undefined && scratch.buf.length < want) scratch.buf = Buffer.allocUnsafe(want)
      this.buf = scratch?.buf ?? Buffer.allocUnsafe(want)
    }
  }
  /** Reads at least `want` bytes more, or to the end. */
  fill(want: number): void {
    if (this.eof || this.fd === undefined) return
    let got = 0
    while (got < want) {
      if (this.len === this.buf.length) {
        const grown = Buffer.allocUnsafe(this.buf.length * 2)
        this.buf.copy(grown, 0, 0, this.len)
        this.buf = grown
        if (this.scratch !== undefined) this.scratch.buf = grown
      }
      const n = readSync(this.fd, this.buf, this.len, this.buf.length - this.len, null)
      if (n === 0) {
        this.eof = true
        return
      }
      this.len += n
      got += n
    }
  }
  /** Drops the bytes before `from`; returns how far positions moved. */
  compact(from: number): number {
    if (from <= 0) return 0
    this.buf.copy(this.buf, 0, from, this.len)
    this.len -= from
    return from
  }
}

/** Opens the bytes of a file for scanning; `undefined` when ripgrep would skip it as binary. */
const open = (fd: number, size: number, scratch: Scratch | undefined): Source | undefined => {
  const src = new Source(fd, size, scratch)
  src.fill(binaryWindow)
  const b = src.buf
  if (src.len >= 2 && ((b[0] === 0xff && b[1] === 0xfe) || (b[0] === 0xfe && b[1] === 0xff))) {
    // UTF-16 with a byte order mark: ripgrep transcodes it to UTF-8 (dropping the mark) before searching.
    while (!src.eof) src.fill(chunkSize)
    const text = new TextDecoder(b[0] === 0xff ? "utf-16le" : "utf-16be").decode(b.subarray(0, src.len))
    const utf8 = new Source(undefined, 0, undefined, Buffer.from(text, "utf8"))
    return utf8.buf.subarray(0, Math.min(utf8.len, binaryWindow)).includes(0) ? undefined : utf8
  }
  if (b.subarray(0, Math.min(src.len, binaryWindow)).includes(0)) return undefined
  // A UTF-8 byte order mark is dropped too (ripgrep decodes such a file rather than mapping it).
  if (src.len >= 3 && b[0] === 0xef && b[1] === 0xbb && b[2] === 0xbf) src.compact(3)
  return src
}

const countNewlines = (buf: Buffer, from: number, to: number): number => {
  const view = buf.subarray(0, to)
  let n = 0
  let i = view.indexOf(NL, from)
  while (i !== -1) {
    n++
    i = view.indexOf(NL, i + 1)
  }
  return n
}

const hasNul = (buf: Buffer, from: number, to: number): boolean => buf.subarray(from, to).indexOf(0) !== -1

/** Start of the line holding position `at` (never before `floor`). */
const lineStart = (buf: Buffer, at: number, floor: number): number => {
  if (at <= floor) return floor
  const i = buf.lastIndexOf(NL, at - 1)
  return i < floor ? floor : i + 1
}

// Bytes of source code and prose from most to least frequent (a rough, static ranking, as ripgrep keeps one):
// a needle is looked for by its rarest byte.
const byFrequency = ` et\naoisrlcd.up()m,fh=;g:'"_/by{}Ew*v-STA0x1C[]kR<>IPNO2FDLM$jqB3z&|!HUWGV@#KYJQZX%^~\`\\456789+?\t`
const rarity = new Uint8Array(256).fill(255).map((_, b) => {
  const i = byFrequency.indexOf(String.fromCharCode(b))
  return i === -1 ? 255 : i
})

/**
 * Finds a byte string: `Buffer.indexOf` on its rarest byte (memchr, the
 * fastest search Node has) and a comparison of the whole needle at each
 * hit. The ranking is a guess; when the "rare" byte turns out common in the
 * files at hand (more than one hit per 256 bytes scanned), the finder
 * switches for good to `Buffer.indexOf` on the whole needle.
 */
const bytesFinder = (needle: Buffer) => {
  const n = needle.length
  let j = 0
  for (let k = 1; k < n; k++) if (rarity[needle[k]!]! > rarity[needle[j]!]!) j = k
  const rare = needle[j]!
  let byRareByte = rarity[rare]! >= 30
  let scanned = 0
  let hits = 0
  return (buf: Buffer, from: number): number => {
    if (!byRareByte) return buf.indexOf(needle, from)
    const last = buf.length - n + j
    let i = buf.indexOf(rare, from + j)
    for (; i !== -1 && i <= last; i = buf.indexOf(rare, i + 1)) {
      hits++
      if (buf.compare(needle, 0, n, i - j, i - j + n) === 0) break
    }
    scanned += (i === -1 || i > last ? buf.length : i) - from
    if (hits > 64 && hits * 256 > scanned) byRareByte = false
    return i === -1 || i > last ? -1 : i - j
  }
}

/** ASCII letters folded to lower case; every other byte as is. */
const folded = new Uint8Array(256).map((_, b) => (b >= 65 && b <= 90 ? b | 0x20 : b))

/**
 * Finds an ASCII needle regardless of case, with Boyer-Moore-Horspool on
 * folded bytes: the byte under the end of the window decides how far the
 * window moves (usually the needle's length), so most bytes are never read.
 */
const asciiCaseless = (needle: string) => {
  const pattern = Uint8Array.from(Buffer.from(needle, "latin1"), (b) => folded[b]!)
  const n = pattern.length
  const shift = new Int32Array(256).fill(n)
  for (let k = 0; k < n - 1; k++) {
    for (let b = 0; b < 256; b++) if (folded[b] === pattern[k]) shift[b] = n - 1 - k
  }
  return (buf: Buffer, from: number): number => {
    const len = buf.length
    for (let i = from + n - 1; i < len; i += shift[buf[i]!]!) {
      let k = n - 1
      let j = i
      while (k >= 0 && folded[buf[j]!] === pattern[k]) {
        k--
        j--
      }
      if (k < 0) return j + 1
    }
    return -1
  }
}

/**
 * Finds matching lines in `[from, end)` of a buffer whose region holds whole
 * lines. Returns the line's bounds (`end` excludes the `\n`), or undefined.
 */
const makeMatcher = (pattern: CompiledPattern) => {
  const pre = pattern.prefilter
  const find =
    pre === undefined ? undefined : pre.kind === "bytes" ? bytesFinder(pre.needle) : asciiCaseless(pre.needle)
  const candidate = (buf: Buffer, from: number, end: number): number =>
    find === undefined ? (from < end ? from : -1) : find(buf, from)
  return {
    /** `buf` ends with the region (a view), so no search runs into bytes past it. */
    next: (buf: Buffer, from: number, end: number): { readonly start: number; readonly end: number } | undefined => {
      let at = from
      while (at < end) {
        const hit = candidate(buf, at, end)
        if (hit === -1) return undefined
        const ls = lineStart(buf, hit, at)
        const nl = buf.indexOf(NL, hit)
        const le = nl === -1 ? end : nl
        if (pattern.exact || pattern.test(buf.toString("utf8", ls, le))) return { start: ls, end: le }
        at = le + 1
      }
      return undefined
    }
  }
}

type Matcher = ReturnType<typeof makeMatcher>

// A matcher holds no state between calls, so one per pattern serves every file of a search.
const matchers = new WeakMap<CompiledPattern, Matcher>()
const matcher = (pattern: CompiledPattern): Matcher => {
  let m = matchers.get(pattern)
  if (m === undefined) {
    m = makeMatcher(pattern)
    matchers.set(pattern, m)
  }
  return m
}

/** End of the region of whole lines from `pos`: after the last `\n`, or the end of the file. */
const regionEnd = (src: Source, pos: number): number => {
  if (src.eof) return src.len
  const i = src.buf.lastIndexOf(NL, src.len - 1)
  return i < pos ? pos : i + 1
}

/**
 * The matches of a file with their context (content mode), in order. The
 * generator stops reading as soon as its consumer stops pulling.
 */
export function* contentMatches(fd: number, size: number, s: ScanSettings, scratch?: Scratch): Generator<FileMatch> {
  const src = open(fd, size, scratch)
  if (src === undefined) return
  const find = matcher(s.pattern)
  const text = (a: number, b: number) => displayLine(src.buf, a, b, s.lineLength)
  const lineEndAt = (a: number, end: number) => {
    const nl = src.buf.subarray(0, end).indexOf(NL, a)
    return nl === -1 ? end : nl
  }
  // One view per region (the buffer as far as whole lines go), not one per match.
  let view = src.buf.subarray(0, 0)
  let viewOf = src.buf
  let pos = 0
  let countPos = 0
  let countLine = 1
  let visited = 0
  let prevMatchEnd = 0
  let pending:
    | {
        readonly m: { line: number; column: number; text: string; before: Array<Line>; after: Array<Line> }
        left: number
      }
    | undefined
  // Emits after-context lines of the pending match up to `upto`; false when a NUL byte stops the file.
  const flushAfter = (upto: number): boolean => {
    while (pending !== undefined && pending.left > 0 && visited < upto) {
      const le = lineEndAt(visited, upto)
      if (hasNul(src.buf, visited, le)) return false
      pending.m.after.push({ line: pending.m.line + pending.m.after.length + 1, text: text(visited, le) })
      pending.left--
      visited = Math.min(le + 1, upto)
    }
    return true
  }
  while (true) {
    const end = regionEnd(src, pos)
    if (end === pos) {
      if (src.eof) break
      // Keep the lines before-context may still need, then read on.
      let keep = pos
      for (let k = 0; k < s.before && keep > 0; k++) keep = lineStart(src.buf, keep - 1, 0)
      if (countPos < keep) {
        countLine += countNewlines(src.buf, countPos, keep)
        countPos = keep
      }
      const shift = src.compact(keep)
      pos -= shift
      countPos -= shift
      visited -= shift
      prevMatchEnd -= shift
      src.fill(chunkSize)
      continue
    }
    if (view.length !== end || viewOf !== src.buf) {
      view = src.buf.subarray(0, end)
      viewOf = src.buf
    }
    const m = find.next(view, pos, end)
    const upto = m === undefined ? end : m.start
    if (!flushAfter(upto)) {
      if (pending !== undefined) yield pending.m
      return
    }
    if (pending !== undefined && (pending.left === 0 || m !== undefined)) {
      yield pending.m
      pending = undefined
    }
    if (m === undefined) {
      pos = end
      continue
    }
    // Before-context: up to `before` lines, not reaching back over the previous match.
    const starts: Array<number> = []
    let b = m.start
    const floor = Math.max(prevMatchEnd, 0)
    while (starts.length < s.before && b > floor) {
      b = lineStart(src.buf, b - 1, floor)
      starts.unshift(b)
    }
    countLine += countNewlines(src.buf, countPos, m.start)
    countPos = m.start
    const line = countLine
    // Lines not yet emitted (ripgrep prints each line once) are checked for NUL bytes as they are emitted.
    for (const start of starts) {
      if (start >= visited && hasNul(src.buf, start, lineEndAt(start, m.start))) return
    }
    if (hasNul(src.buf, m.start, m.end)) return
    const before = starts.map((start, k) => ({
      line: line - starts.length + k,
      text: text(start, lineEndAt(start, m.start))
    }))
    const column = s.pattern.column(src.buf.toString("utf8", m.start, m.end))
    const match = { line, column, text: text(m.start, m.end), before, after: [] as Array<Line> }
    pos = Math.min(m.end + 1, end)
    visited = pos
    prevMatchEnd = pos
    if (s.after === 0) yield match
    else pending = { m: match, left: s.after }
  }
  if (!flushAfter(src.len)) {
    if (pending !== undefined) yield pending.m
    return
  }
  if (pending !== undefined) yield pending.m
}

/**
 * The number of matching lines of a file (count mode), or, with `firstOnly`,
 * 1 at the first match (files mode). `0` when nothing matches or ripgrep
 * would drop the file (binary, or a matching line holding a NUL byte).
 */
export const countMatches = (
  fd: number,
  size: number,
  pattern: CompiledPattern,
  firstOnly: boolean,
  scratch?: Scratch
): number => {
  const src = open(fd, size, scratch)
  if (src === undefined) return 0
  const find = matcher(pattern)
  // One view per region (the buffer as far as whole lines go), not one per match.
  let view = src.buf.subarray(0, 0)
  let viewOf = src.buf
  let pos = 0
  let count = 0
  while (true) {
    const end = regionEnd(src, pos)
    if (end === pos) {
      if (src.eof) return count
      pos -= src.compact(pos)
      src.fill(chunkSize)
      continue
    }
    if (view.length !== end || viewOf !== src.buf) {
      view = src.buf.subarray(0, end)
      viewOf = src.buf
    }
    const m = find.next(view, pos, end)
    if (m === undefined) {
      pos = end
      continue
    }
    if (hasNul(src.buf, m.start, m.end)) return 0
    count++
    if (firstOnly) return count
    pos = Math.min(m.end + 1, end)
  }
}
