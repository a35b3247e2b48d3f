/**
 * Rename detection for the pure-JavaScript backend, following the published
 * design of git's diffcore-rename so both backends pair the same files:
 * exact matches first (same blob; an unused source and a same basename win),
 * then sources and destinations whose basename is unique on both sides are
 * paired when at least 75% similar, then the full matrix keeps the four best
 * sources of each destination and pairs them greedily by similarity (50% at
 * least; a same basename breaks ties; at most 1000 x 1000 candidates).
 * Similarity is git's diffcore-delta estimate: both files are cut into
 * chunks at each line feed or every 64 bytes, each chunk hashed into a
 * bucket, and the bytes common to both sides counted per bucket.
 *
 * @internal
 */

export const MAX_SCORE = 60_000
export const DEFAULT_MIN_SCORE = 30_000
const RENAME_LIMIT = 1000
const CANDIDATES_PER_DST = 4
const HASHBASE = 107_927

export interface Side {
  readonly path: string
  readonly oid: string
  readonly mode: string
  /** Loads the content (only when an inexact estimate needs it). */
  readonly load: () => Promise<Uint8Array>
}

export interface Pair {
  /** Index in the sources. */
  readonly src: number
  /** Index in the destinations. */
  readonly dst: number
}

const isRegular = (mode: string) => mode === "100644" || mode === "100755" || mode === "100664"
const isLink = (mode: string) => mode === "120000"

/** Whether bytes look binary to git: a NUL in the first 8000 bytes. */
export const isBinary = (bytes: Uint8Array): boolean => {
  const n = Math.min(bytes.length, 8000)
  for (let i = 0; i < n; i++) if (bytes[i] === 0) return true
  return false
}

/** Bytes per chunk-hash bucket: git's `hash_chars`. */
export const spanCounts = (bytes: Uint8Array): Map<number, number> => {
  const counts = new Map<number, number>()
  const text = !isBinary(bytes)
  let n = 0
  let accum1 = 0
  let accum2 = 0
  const flush = () => {
    const hashval = ((accum1 + Math.imul(accum2, 0x61)) >>> 0) % HASHBASE
    counts.set(hashval, (counts.get(hashval) ?? 0) + n)
    n = 0
    accum1 = 0
    accum2 = 0
  }
  for (let i = 0; i < bytes.length; i++) {
    const c = bytes[i]!
    // A carriage return before a line feed does not count in text.
    if (text && c === 13 && i + 1 < bytes.length && bytes[i + 1] === 10) continue
    const old1 = accum1
    accum1 = (((accum1 << 7) ^ (accum2 >>> 25)) + c) >>> 0
    accum2 = ((accum2 << 7) ^ (old1 >>> 25)) >>> 0
    n++
    if (n < 64 && c !== 10) continue
    flush()
  }
  if (n > 0) flush()
  return counts
}

const basename = (p: string) => p.slice(p.lastIndexOf("/") + 1)

/** git's `basename_same`: the same last component. */
const basenameSame = (a: string, b: string): boolean => basename(a) === basename(b)

interface Loaded {
  readonly size: number
  readonly counts: Map<number, number>
}

/** Finds renames between deleted sources and added destinations (both sorted by path). */
export const detectRenames = async (
  sources: ReadonlyArray<Side>,
  destinations: ReadonlyArray<Side>,
  minScore: number = DEFAULT_MIN_SCORE
): Promise<Array<Pair & { readonly score: number }>> => {
  const pairs: Array<Pair & { score: number }> = []
  if (sources.length === 0 || destinations.length === 0) return pairs
  const srcUsed = new Array<boolean>(sources.length).fill(false)
  const dstDone = new Array<boolean>(destinations.length).fill(false)

  // 1. Exact renames.
  const byOid = new Map<string, Array<number>>()
  sources.forEach((s, i) => {
    const list = byOid.get(s.oid) ?? []
    list.push(i)
    byOid.set(s.oid, list)
  })
  destinations.forEach((d, j) => {
    const candidates = byOid.get(d.oid)
    if (candidates === undefined) return
    let best = -1
    let bestScore = -1
    let tries = 100
    for (const i of candidates) {
      const s = sources[i]!
      if ((!isRegular(s.mode) || !isRegular(d.mode)) && s.mode !== d.mode) continue
      if (srcUsed[i]) continue
      const score = 1 + (basenameSame(s.path, d.path) ? 1 : 0)
      if (score > bestScore) {
        best = i
        bestScore = score
        if (score === 2) break
      }
      if (--tries === 0) break
    }
    if (best !== -1) {
      srcUsed[best] = true
      dstDone[j] = true
      pairs.push({ src: best, dst: j, score: MAX_SCORE })
    }
  })
  if (minScore >= MAX_SCORE) return pairs

  const loaded = new Map<string, Promise<Loaded>>()
  const load = (side: Side): Promise<Loaded> => {
    let p = loaded.get(side.oid)
    if (p === undefined) {
      p = side.load().then((bytes) => ({ size: bytes.length, counts: spanCounts(bytes) }))
      loaded.set(side.oid, p)
    }
    return p
  }
  const estimate = async (s: Side, d: Side, min: number): Promise<number> => {
    if (!isRegular(s.mode) || !isRegular(d.mode)) return 0
    const a = await load(s)
    const b = await load(d)
    const maxSize = Math.max(a.size, b.size)
    const delta = maxSize - Math.min(a.size, b.size)
    if (maxSize * (MAX_SCORE - min) < delta * MAX_SCORE) return 0
    if (b.size === 0) return 0
    let copied = 0
    for (const [h, n] of a.counts) {
      const m = b.counts.get(h)
      if (m !== undefined) copied += Math.min(n, m)
    }
    return Math.floor((copied * MAX_SCORE) / maxSize)
  }

  // 2. Unique basenames on both sides, at a higher bar.
  const minBasename = minScore + Math.floor(0.5 * (MAX_SCORE - minScore))
  const uniqueBy = <A>(items: ReadonlyArray<A>, keep: (i: number) => boolean, path: (a: A) => string) => {
    const map = new Map<string, number>()
    items.forEach((item, i) => {
      if (!keep(i)) return
      const b = basename(path(item))
      map.set(b, map.has(b) ? -1 : i)
    })
    return map
  }
  const srcNames = uniqueBy(
    sources,
    (i) => !srcUsed[i],
    (s) => s.path
  )
  const dstNames = uniqueBy(
    destinations,
    (j) => !dstDone[j],
    (d) => d.path
  )
  for (const [name, i] of srcNames) {
    if (i === -1) continue
    const j = dstNames.get(name)
    if (j === undefined || j === -1) continue
    const score = await estimate(sources[i]!, destinations[j]!, minBasename)
    if (score < minBasename) continue
    srcUsed[i] = true
    dstDone[j] = true
    pairs.push({ src: i, dst: j, score })
  }

  // 3. The matrix of what remains.
  const srcLeft = sources.map((_, i) => i).filter((i) => !srcUsed[i])
  const dstLeft = destinations.map((_, j) => j).filter((j) => !dstDone[j])
  if (srcLeft.length === 0 || dstLeft.length === 0) return pairs
  if (srcLeft.length * dstLeft.length > RENAME_LIMIT * RENAME_LIMIT) return pairs
  interface Candidate {
    dst: number
    src: number
    score: number
    nameScore: number
  }
  const empty = (): Candidate => ({ dst: -1, src: -1, score: 0, nameScore: 0 })
  // git's score_compare: sorts unused slots last, then higher score, then same basename first.
  const compare = (a: Candidate, b: Candidate): number => {
    if (a.dst < 0) return b.dst >= 0 ? 1 : 0
    if (b.dst < 0) return -1
    if (a.score === b.score) return b.nameScore - a.nameScore
    return b.score - a.score
  }
  const matrix: Array<Candidate> = []
  for (const j of dstLeft) {
    const slots = [empty(), empty(), empty(), empty()]
    for (const i of srcLeft) {
      const d = destinations[j]!
      const s = sources[i]!
      const candidate: Candidate = {
        dst: j,
        src: i,
        score: await estimate(s, d, minScore),
        nameScore: basenameSame(s.path, d.path) ? 1 : 0
      }
      let worst = 0
      for (let k = 1; k < CANDIDATES_PER_DST; k++) if (compare(slots[k]!, slots[worst]!) > 0) worst = k
      if (compare(slots[worst]!, candidate) > 0) slots[worst] = candidate
    }
    matrix.push(...slots)
  }
  const sorted = matrix.map((c, k) => ({ c, k })).sort((x, y) => compare(x.c, y.c) || x.k - y.k)
  for (const { c } of sorted) {
    if (c.dst < 0 || c.score < minScore) break
    if (dstDone[c.dst] || srcUsed[c.src]) continue
    srcUsed[c.src] = true
    dstDone[c.dst] = true
    pairs.push({ src: c.src, dst: c.dst, score: c.score })
  }
  return pairs
}

export { isLink }
