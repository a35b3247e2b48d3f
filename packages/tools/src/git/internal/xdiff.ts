/**
 * A line diff that finds the same changes as git's default algorithm, so the
 * pure-JavaScript backend prints the hunks `git diff` prints. It follows the
 * published design of git's xdiff: records are classed by content, common
 * ends are trimmed, lines with no match on the other side are set aside (and
 * lines with very many matches when they sit among those), then Myers'
 * divide-and-conquer search runs on what remains with xdiff's cost limits and
 * its "good snake" shortcut, and finally each group of changed lines is slid
 * to its canonical place: aligned with a change on the other side when it
 * can be, else where the indent heuristic scores best. jsdiff's Myers breaks
 * ties differently, which is why this is our own.
 *
 * @internal
 */

/** One change: `chg1` lines of the old file at `i1` replaced by `chg2` lines of the new file at `i2` (0-based). */
export interface Change {
  readonly i1: number
  readonly i2: number
  readonly chg1: number
  readonly chg2: number
}

export interface LineDiffOptions {
  /** Compare lines with all whitespace removed (`git diff -w`). */
  readonly ignoreWhitespace?: boolean | undefined
  /** Slide ambiguous groups by git's indent heuristic (git's default since 2.14). */
  readonly indentHeuristic?: boolean | undefined
}

/** Splits text into records the way git does: each line keeps its `\n`; a last line without one is a record too. */
export const splitLines = (text: string): Array<string> => {
  const out: Array<string> = []
  let start = 0
  for (;;) {
    const nl = text.indexOf("\n", start)
    if (nl === -1) break
    out.push(text.slice(start, nl + 1))
    start = nl + 1
  }
  if (start < text.length) out.push(text.slice(start))
  return out
}

// git's own isspace: tab, line feed, carriage return and space (not \v or \f).
const isGitSpace = (c: number): boolean => c === 32 || c === 9 || c === 10 || c === 13
const withoutSpace = (line: string): string => {
  let out = ""
  for (let i = 0; i < line.length; i++) if (!isGitSpace(line.charCodeAt(i))) out += line[i]
  return out
}

const bogosqrt = (n: number): number => {
  let i = 1
  for (let m = n; m > 0; m = Math.floor(m / 4)) i *= 2
  return i
}

const MAX_EQLIMIT = 1024
const SIMSCAN_WINDOW = 100
const KPDIS_RUN = 4
const MAX_COST_MIN = 256
const HEUR_MIN_COST = 256
const SNAKE_CNT = 20
const K_HEUR = 4
const LINE_MAX = 2 ** 31 - 1

interface Side {
  /** Class of each record. */
  readonly ha: Int32Array
  /** 1-offset change flags: record i is `rchg[i + 1]`, with a zero guard on both ends. */
  readonly rchg: Uint8Array
  readonly nrec: number
}

/**
 * Computes the changes between two lists of records (lines with their `\n`).
 */
export const diffLines = (
  a: ReadonlyArray<string>,
  b: ReadonlyArray<string>,
  options: LineDiffOptions = {}
): Array<Change> => {
  const ignoreWs = options.ignoreWhitespace === true
  const classes = new Map<string, number>()
  const count1: Array<number> = []
  const count2: Array<number> = []
  const classify = (lines: ReadonlyArray<string>, counts: Array<number>, other: Array<number>): Int32Array => {
    const ha = new Int32Array(lines.length)
    for (let i = 0; i < lines.length; i++) {
      const key = ignoreWs ? withoutSpace(lines[i]!) : lines[i]!
      let k = classes.get(key)
      if (k === undefined) {
        k = classes.size
        classes.set(key, k)
        counts.push(0)
        other.push(0)
      }
      counts[k]!++
      ha[i] = k
    }
    return ha
  }
  const ha1 = classify(a, count1, count2)
  const ha2 = classify(b, count2, count1)
  const x1: Side = { ha: ha1, rchg: new Uint8Array(a.length + 2), nrec: a.length }
  const x2: Side = { ha: ha2, rchg: new Uint8Array(b.length + 2), nrec: b.length }

  // Trim the common head and tail.
  const lim = Math.min(a.length, b.length)
  let dstart = 0
  while (dstart < lim && ha1[dstart] === ha2[dstart]) dstart++
  let tail = 0
  while (tail < lim - dstart && ha1[a.length - 1 - tail] === ha2[b.length - 1 - tail]) tail++
  const dend1 = a.length - tail - 1
  const dend2 = b.length - tail - 1

  // Set aside lines without a match on the other side, and many-match lines among them.
  const reduce = (side: Side, dend: number, counts: Array<number>) => {
    const dis = new Uint8Array(side.nrec + 1)
    const mlim = Math.min(bogosqrt(side.nrec), MAX_EQLIMIT)
    for (let i = dstart; i <= dend; i++) {
      const nm = counts[side.ha[i]!]!
      dis[i] = nm === 0 ? 0 : nm >= mlim ? 2 : 1
    }
    const rindex: Array<number> = []
    for (let i = dstart; i <= dend; i++) {
      if (dis[i] === 1 || (dis[i] === 2 && !cleanMultimatch(dis, i, dstart, dend))) rindex.push(i)
      else side.rchg[i + 1] = 1
    }
    const ha = new Int32Array(rindex.length)
    for (let k = 0; k < rindex.length; k++) ha[k] = side.ha[rindex[k]!]!
    return { ha, rindex }
  }
  const r1 = reduce(x1, dend1, count2)
  const r2 = reduce(x2, dend2, count1)

  compare(r1.ha, r1.rindex, x1.rchg, r2.ha, r2.rindex, x2.rchg)

  compact(x1, x2, a, options.indentHeuristic !== false)
  compact(x2, x1, b, options.indentHeuristic !== false)
  return script(x1, x2)
}

const cleanMultimatch = (dis: Uint8Array, i: number, s0: number, e0: number): boolean => {
  const s = i - s0 > SIMSCAN_WINDOW ? i - SIMSCAN_WINDOW : s0
  const e = e0 - i > SIMSCAN_WINDOW ? i + SIMSCAN_WINDOW : e0
  let rdis0 = 0
  let rpdis0 = 1
  for (let r = 1; i - r >= s; r++) {
    const d = dis[i - r]
    if (d === 0) rdis0++
    else if (d === 2) rpdis0++
    else break
  }
  if (rdis0 === 0) return false
  let rdis1 = 0
  let rpdis1 = 1
  for (let r = 1; i + r <= e; r++) {
    const d = dis[i + r]
    if (d === 0) rdis1++
    else if (d === 2) rpdis1++
    else break
  }
  if (rdis1 === 0) return false
  rdis1 += rdis0
  rpdis1 += rpdis0
  return rpdis1 * KPDIS_RUN < rpdis1 + rdis1
}

// Myers' middle-snake divide and conquer over the reduced records, with xdiff's
// cost limit and good-snake heuristic. An explicit stack replaces recursion so
// a long file cannot overflow the call stack.
const compare = (
  ha1: Int32Array,
  rindex1: ReadonlyArray<number>,
  rchg1: Uint8Array,
  ha2: Int32Array,
  rindex2: ReadonlyArray<number>,
  rchg2: Uint8Array
): void => {
  const n1 = ha1.length
  const n2 = ha2.length
  const ndiags = n1 + n2 + 3
  const base = n2 + 1
  const kvdf = new Float64Array(ndiags + 1)
  const kvdb = new Float64Array(ndiags + 1)
  const mxcost = Math.max(bogosqrt(ndiags), MAX_COST_MIN)
  const split = { i1: 0, i2: 0, minLo: false, minHi: false }

  const xsplit = (off1: number, lim1: number, off2: number, lim2: number, needMin: boolean): void => {
    const dmin = off1 - lim2
    const dmax = lim1 - off2
    const fmid = off1 - off2
    const bmid = lim1 - lim2
    const odd = ((fmid - bmid) & 1) !== 0
    let fmin = fmid
    let fmax = fmid
    let bmin = bmid
    let bmax = bmid
    kvdf[base + fmid] = off1
    kvdb[base + bmid] = lim1
    for (let ec = 1; ; ec++) {
      let gotSnake = false
      if (fmin > dmin) kvdf[base + --fmin - 1] = -1
      else ++fmin
      if (fmax < dmax) kvdf[base + ++fmax + 1] = -1
      else --fmax
      for (let d = fmax; d >= fmin; d -= 2) {
        let i1 = kvdf[base + d - 1]! >= kvdf[base + d + 1]! ? kvdf[base + d - 1]! + 1 : kvdf[base + d + 1]!
        const prev1 = i1
        let i2 = i1 - d
        while (i1 < lim1 && i2 < lim2 && ha1[i1] === ha2[i2]) {
          i1++
          i2++
        }
        if (i1 - prev1 > SNAKE_CNT) gotSnake = true
        kvdf[base + d] = i1
        if (odd && bmin <= d && d <= bmax && kvdb[base + d]! <= i1) {
          split.i1 = i1
          split.i2 = i2
          split.minLo = split.minHi = true
          return
        }
      }
      if (bmin > dmin) kvdb[base + --bmin - 1] = LINE_MAX
      else ++bmin
      if (bmax < dmax) kvdb[base + ++bmax + 1] = LINE_MAX
      else --bmax
      for (let d = bmax; d >= bmin; d -= 2) {
        let i1 = kvdb[base + d - 1]! < kvdb[base + d + 1]! ? kvdb[base + d - 1]! : kvdb[base + d + 1]! - 1
        const prev1 = i1
        let i2 = i1 - d
        while (i1 > off1 && i2 > off2 && ha1[i1 - 1] === ha2[i2 - 1]) {
          i1--
          i2--
        }
        if (prev1 - i1 > SNAKE_CNT) gotSnake = true
        kvdb[base + d] = i1
        if (!odd && fmin <= d && d <= fmax && i1 <= kvdf[base + d]!) {
          split.i1 = i1
          split.i2 = i2
          split.minLo = split.minHi = true
          return
        }
      }
      if (needMin) continue
      if (gotSnake && ec > HEUR_MIN_COST) {
        let best = 0
        for (let d = fmax; d >= fmin; d -= 2) {
          const dd = d > fmid ? d - fmid : fmid - d
          const i1 = kvdf[base + d]!
          const i2 = i1 - d
          const v = i1 - off1 + (i2 - off2) - dd
          if (
            v > K_HEUR * ec &&
            v > best &&
            off1 + SNAKE_CNT <= i1 &&
            i1 < lim1 &&
            off2 + SNAKE_CNT <= i2 &&
            i2 < lim2
          ) {
            for (let k = 1; ha1[i1 - k] === ha2[i2 - k]; k++) {
              if (k === SNAKE_CNT) {
                best = v
                split.i1 = i1
                split.i2 = i2
                break
              }
            }
          }
        }
        if (best > 0) {
          split.minLo = true
          split.minHi = false
          return
        }
        for (let d = bmax; d >= bmin; d -= 2) {
          const dd = d > bmid ? d - bmid : bmid - d
          const i1 = kvdb[base + d]!
          const i2 = i1 - d
          const v = lim1 - i1 + (lim2 - i2) - dd
          if (
            v > K_HEUR * ec &&
            v > best &&
            off1 < i1 &&
            i1 <= lim1 - SNAKE_CNT &&
            off2 < i2 &&
            i2 <= lim2 - SNAKE_CNT
          ) {
            for (let k = 0; ha1[i1 + k] === ha2[i2 + k]; k++) {
              if (k === SNAKE_CNT - 1) {
                best = v
                split.i1 = i1
                split.i2 = i2
                break
              }
            }
          }
        }
        if (best > 0) {
          split.minLo = false
          split.minHi = true
          return
        }
      }
      if (ec >= mxcost) {
        let fbest = -1
        let fbest1 = -1
        for (let d = fmax; d >= fmin; d -= 2) {
          let i1 = Math.min(kvdf[base + d]!, lim1)
          let i2 = i1 - d
          if (lim2 < i2) {
            i1 = lim2 + d
            i2 = lim2
          }
          if (fbest < i1 + i2) {
            fbest = i1 + i2
            fbest1 = i1
          }
        }
        let bbest = LINE_MAX
        let bbest1 = LINE_MAX
        for (let d = bmax; d >= bmin; d -= 2) {
          let i1 = Math.max(off1, kvdb[base + d]!)
          let i2 = i1 - d
          if (i2 < off2) {
            i1 = off2 + d
            i2 = off2
          }
          if (i1 + i2 < bbest) {
            bbest = i1 + i2
            bbest1 = i1
          }
        }
        if (lim1 + lim2 - bbest < fbest - (off1 + off2)) {
          split.i1 = fbest1
          split.i2 = fbest - fbest1
          split.minLo = true
          split.minHi = false
        } else {
          split.i1 = bbest1
          split.i2 = bbest - bbest1
          split.minLo = false
          split.minHi = true
        }
        return
      }
    }
  }

  const stack: Array<[number, number, number, number, boolean]> = [[0, n1, 0, n2, false]]
  while (stack.length > 0) {
    let [off1, lim1, off2, lim2, needMin] = stack.pop()!
    while (off1 < lim1 && off2 < lim2 && ha1[off1] === ha2[off2]) {
      off1++
      off2++
    }
    while (off1 < lim1 && off2 < lim2 && ha1[lim1 - 1] === ha2[lim2 - 1]) {
      lim1--
      lim2--
    }
    if (off1 === lim1) {
      for (; off2 < lim2; off2++) rchg2[rindex2[off2]! + 1] = 1
    } else if (off2 === lim2) {
      for (; off1 < lim1; off1++) rchg1[rindex1[off1]! + 1] = 1
    } else {
      xsplit(off1, lim1, off2, lim2, needMin)
      const { i1, i2, minLo, minHi } = split
      stack.push([i1, lim1, i2, lim2, minHi])
      stack.push([off1, i1, off2, i2, minLo])
    }
  }
}

// ---------------------------------------------------------------------------
// Sliding groups of changed lines (xdiff's change compaction)
// ---------------------------------------------------------------------------

interface Group {
  start: number
  end: number
}

const MAX_INDENT = 200
const MAX_BLANKS = 20
const START_OF_FILE_PENALTY = 1
const END_OF_FILE_PENALTY = 21
const TOTAL_BLANK_WEIGHT = -30
const POST_BLANK_WEIGHT = 6
const RELATIVE_INDENT_PENALTY = -4
const RELATIVE_INDENT_WITH_BLANK_PENALTY = 10
const RELATIVE_OUTDENT_PENALTY = 24
const RELATIVE_OUTDENT_WITH_BLANK_PENALTY = 17
const RELATIVE_DEDENT_PENALTY = 23
const RELATIVE_DEDENT_WITH_BLANK_PENALTY = 17
const INDENT_WEIGHT = 60
const INDENT_HEURISTIC_MAX_SLIDING = 100

const indentOf = (line: string): number => {
  let ret = 0
  for (let i = 0; i < line.length; i++) {
    const c = line.charCodeAt(i)
    if (!isGitSpace(c)) return ret
    if (c === 32) ret += 1
    else if (c === 9) ret += 8 - (ret % 8)
    if (ret >= MAX_INDENT) return MAX_INDENT
  }
  return -1
}

interface Score {
  effectiveIndent: number
  penalty: number
}

const addSplitScore = (lines: ReadonlyArray<string>, split: number, s: Score): void => {
  const nrec = lines.length
  const endOfFile = split >= nrec
  const indent = endOfFile ? -1 : indentOf(lines[split]!)
  let preBlank = 0
  let preIndent = -1
  for (let i = split - 1; i >= 0; i--) {
    preIndent = indentOf(lines[i]!)
    if (preIndent !== -1) break
    preBlank += 1
    if (preBlank === MAX_BLANKS) {
      preIndent = 0
      break
    }
  }
  let postBlank = 0
  let postIndent = -1
  for (let i = split + 1; i < nrec; i++) {
    postIndent = indentOf(lines[i]!)
    if (postIndent !== -1) break
    postBlank += 1
    if (postBlank === MAX_BLANKS) {
      postIndent = 0
      break
    }
  }
  if (preIndent === -1 && preBlank === 0) s.penalty += START_OF_FILE_PENALTY
  if (endOfFile) s.penalty += END_OF_FILE_PENALTY
  const blanksAfter = indent === -1 ? 1 + postBlank : 0
  const totalBlank = preBlank + blanksAfter
  s.penalty += TOTAL_BLANK_WEIGHT * totalBlank
  s.penalty += POST_BLANK_WEIGHT * blanksAfter
  const effective = indent !== -1 ? indent : postIndent
  const anyBlanks = totalBlank !== 0
  s.effectiveIndent += effective
  if (effective === -1 || preIndent === -1) return
  if (effective > preIndent) {
    s.penalty += anyBlanks ? RELATIVE_INDENT_WITH_BLANK_PENALTY : RELATIVE_INDENT_PENALTY
  } else if (effective < preIndent) {
    if (postIndent !== -1 && postIndent > effective) {
      s.penalty += anyBlanks ? RELATIVE_OUTDENT_WITH_BLANK_PENALTY : RELATIVE_OUTDENT_PENALTY
    } else {
      s.penalty += anyBlanks ? RELATIVE_DEDENT_WITH_BLANK_PENALTY : RELATIVE_DEDENT_PENALTY
    }
  }
}

const scoreCmp = (s1: Score, s2: Score): number => {
  const cmpIndents =
    (s1.effectiveIndent > s2.effectiveIndent ? 1 : 0) - (s1.effectiveIndent < s2.effectiveIndent ? 1 : 0)
  return INDENT_WEIGHT * cmpIndents + (s1.penalty - s2.penalty)
}

const compact = (xdf: Side, xdfo: Side, lines: ReadonlyArray<string>, indentHeuristic: boolean): void => {
  const rchg = xdf.rchg
  const nrec = xdf.nrec
  const changed = (i: number) => rchg[i + 1] === 1
  const recsMatch = (i: number, j: number) => xdf.ha[i] === xdf.ha[j]
  const init = (side: Side): Group => {
    const g = { start: 0, end: 0 }
    while (side.rchg[g.end + 1] === 1) g.end++
    return g
  }
  const next = (side: Side, g: Group): boolean => {
    if (g.end === side.nrec) return false
    g.start = g.end + 1
    for (g.end = g.start; side.rchg[g.end + 1] === 1; g.end++);
    return true
  }
  const previous = (side: Side, g: Group): boolean => {
    if (g.start === 0) return false
    g.end = g.start - 1
    for (g.start = g.end; side.rchg[g.start] === 1; g.start--);
    return true
  }
  const slideDown = (g: Group): boolean => {
    if (g.end < nrec && recsMatch(g.start, g.end)) {
      rchg[g.start++ + 1] = 0
      rchg[g.end++ + 1] = 1
      while (changed(g.end)) g.end++
      return true
    }
    return false
  }
  const slideUp = (g: Group): boolean => {
    if (g.start > 0 && recsMatch(g.start - 1, g.end - 1)) {
      rchg[--g.start + 1] = 1
      rchg[--g.end + 1] = 0
      while (changed(g.start - 1)) g.start--
      return true
    }
    return false
  }
  const g = init(xdf)
  const go = init(xdfo)
  for (;;) {
    if (g.end !== g.start) {
      let groupsize: number
      let earliestEnd: number
      let endMatchingOther: number
      do {
        groupsize = g.end - g.start
        endMatchingOther = -1
        while (slideUp(g)) previous(xdfo, go)
        earliestEnd = g.end
        if (go.end > go.start) endMatchingOther = g.end
        for (;;) {
          if (!slideDown(g)) break
          next(xdfo, go)
          if (go.end > go.start) endMatchingOther = g.end
        }
      } while (groupsize !== g.end - g.start)
      if (g.end === earliestEnd) {
        // no shifting was possible
      } else if (endMatchingOther !== -1) {
        while (go.end === go.start) {
          slideUp(g)
          previous(xdfo, go)
        }
      } else if (indentHeuristic) {
        let shift = earliestEnd
        if (g.end - groupsize - 1 > shift) shift = g.end - groupsize - 1
        if (g.end - INDENT_HEURISTIC_MAX_SLIDING > shift) shift = g.end - INDENT_HEURISTIC_MAX_SLIDING
        let bestShift = -1
        const best: Score = { effectiveIndent: 0, penalty: 0 }
        for (; shift <= g.end; shift++) {
          const score: Score = { effectiveIndent: 0, penalty: 0 }
          addSplitScore(lines, shift, score)
          addSplitScore(lines, shift - groupsize, score)
          if (bestShift === -1 || scoreCmp(score, best) <= 0) {
            best.effectiveIndent = score.effectiveIndent
            best.penalty = score.penalty
            bestShift = shift
          }
        }
        while (g.end > bestShift) {
          slideUp(g)
          previous(xdfo, go)
        }
      }
    }
    if (!next(xdf, g)) break
    next(xdfo, go)
  }
}

const script = (x1: Side, x2: Side): Array<Change> => {
  const out: Array<Change> = []
  const r1 = x1.rchg
  const r2 = x2.rchg
  for (let i1 = x1.nrec, i2 = x2.nrec; i1 >= 0 || i2 >= 0; i1--, i2--) {
    if (r1[i1] === 1 || r2[i2] === 1) {
      const l1 = i1
      const l2 = i2
      while (r1[i1] === 1) i1--
      while (r2[i2] === 1) i2--
      out.push({ i1, i2, chg1: l1 - i1, chg2: l2 - i2 })
    }
  }
  return out.reverse()
}

// ---------------------------------------------------------------------------
// Hunks
// ---------------------------------------------------------------------------

export interface HunkLine {
  readonly type: "context" | "add" | "delete"
  /** The line without its line feed. */
  readonly content: string
  readonly oldLine?: number
  readonly newLine?: number
  /** The line is the last of its file and has no line feed (git's "\ No newline at end of file"). */
  readonly noNewlineAtEnd?: true
}

export interface Hunk {
  readonly oldStart: number
  readonly oldLines: number
  readonly newStart: number
  readonly newLines: number
  readonly lines: ReadonlyArray<HunkLine>
}

const lineOf = (
  type: HunkLine["type"],
  record: string,
  oldLine: number | undefined,
  newLine: number | undefined
): HunkLine => {
  const hasNl = record.endsWith("\n")
  const content = hasNl ? record.slice(0, -1) : record
  return {
    type,
    content,
    ...(oldLine === undefined ? {} : { oldLine }),
    ...(newLine === undefined ? {} : { newLine }),
    ...(hasNl ? {} : { noNewlineAtEnd: true as const })
  }
}

/**
 * Groups changes into hunks with `context` lines around them, merging changes
 * whose gap is at most twice the context (git's rule with no inter-hunk
 * context). Context lines are taken from the new file, as git prints them.
 */
export const hunksOf = (
  a: ReadonlyArray<string>,
  b: ReadonlyArray<string>,
  changes: ReadonlyArray<Change>,
  context: number
): Array<Hunk> => {
  const hunks: Array<Hunk> = []
  const maxCommon = 2 * context
  let k = 0
  while (k < changes.length) {
    const first = changes[k]!
    let last = first
    let j = k + 1
    while (j < changes.length) {
      const c = changes[j]!
      if (c.i1 - (last.i1 + last.chg1) > maxCommon) break
      last = c
      j++
    }
    const s1 = Math.max(first.i1 - context, 0)
    const s2 = Math.max(first.i2 - context, 0)
    const e1 = Math.min(last.i1 + last.chg1 + context, a.length)
    const e2 = Math.min(last.i2 + last.chg2 + context, b.length)
    const lines: Array<HunkLine> = []
    let o = s1
    let n = s2
    for (let idx = k; idx < j; idx++) {
      const c = changes[idx]!
      for (; n < c.i2; n++, o++) lines.push(lineOf("context", b[n]!, o + 1, n + 1))
      for (o = c.i1; o < c.i1 + c.chg1; o++) lines.push(lineOf("delete", a[o]!, o + 1, undefined))
      for (n = c.i2; n < c.i2 + c.chg2; n++) lines.push(lineOf("add", b[n]!, undefined, n + 1))
    }
    for (; n < e2; n++, o++) lines.push(lineOf("context", b[n]!, o + 1, n + 1))
    const oldLines = e1 - s1
    const newLines = e2 - s2
    hunks.push({
      oldStart: oldLines === 0 ? s1 : s1 + 1,
      oldLines,
      newStart: newLines === 0 ? s2 : s2 + 1,
      newLines,
      lines
    })
    k = j
  }
  return hunks
}
