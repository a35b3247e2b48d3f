/**
 * Blame for the pure-JavaScript backend, on the published design of git's
 * blame. Lines start as suspects of the blamed commit (or of a virtual
 * working-tree commit whose parent is HEAD). Commits are taken newest first
 * by commit date; for each one, its parents are tried in order: a parent
 * holding the same blob takes every line at once; otherwise the parent's
 * version of the file (same path, or, failing that, the file it was renamed
 * from, found with git's rename rules) is line-diffed with the git-compatible
 * diff, and the lines outside the changed regions move to that parent. Lines
 * no parent takes stay with the commit: it introduced them.
 *
 * This matches `git blame` without `-M`/`-C` for linear and merge histories,
 * and follows whole-file renames as git does by default. Where a change can be
 * placed in several equivalent ways (a "slider"), both use the same diff and
 * the same indent heuristic, so the same line is credited.
 *
 * @internal
 */
import { isoDate, type Mailmap, shortHash, summaryOf } from "./format.ts"
import { diffTreeSides, flattenTree, rawChanges } from "./isoDiff.ts"
import { type CommitData, isTreeMode, type RepoStore } from "./objects.ts"
import { text } from "./tokens.ts"
import { diffLines, splitLines } from "./xdiff.ts"
import type * as Results from "./results.ts"

interface Origin {
  readonly commit: string
  readonly path: string
  readonly blob: string
  suspects: Array<Entry>
  lines?: Array<string>
}

interface Entry {
  /** Line in the final file (0-based). */
  readonly lno: number
  /** Line in the suspect's version (0-based). */
  sLno: number
  num: number
  suspect: Origin
}

/** A commit-like node: a real commit, or the working tree on top of HEAD. */
interface Node {
  readonly oid: string
  readonly date: number
  readonly parents: ReadonlyArray<string>
  readonly tree: string | undefined
}

export interface BlameTarget {
  /** The commit to blame, or `undefined` for the working tree. */
  readonly commit: string | undefined
  readonly head: string | undefined
  readonly path: string
  /** For the working tree: the file's bytes. */
  readonly workingBytes?: Uint8Array | undefined
  /** For the working tree: the paths in the index (a staged rename is followed, as git does). */
  readonly indexPaths?: ReadonlySet<string> | undefined
}

const WORKTREE = "working-tree"

class Queue {
  private readonly items: Array<{ readonly oid: string; readonly date: number; readonly seq: number }> = []
  private seq = 0
  push(oid: string, date: number) {
    this.items.push({ oid, date, seq: this.seq++ })
    let i = this.items.length - 1
    while (i > 0) {
      const parent = (i - 1) >> 1
      if (this.before(i, parent)) {
        ;[this.items[i], this.items[parent]] = [this.items[parent]!, this.items[i]!]
        i = parent
      } else break
    }
  }
  pop(): string | undefined {
    const top = this.items[0]
    const last = this.items.pop()
    if (top === undefined || last === undefined) return undefined
    if (this.items.length > 0) {
      this.items[0] = last
      let i = 0
      for (;;) {
        const l = 2 * i + 1
        const r = l + 1
        let m = i
        if (l < this.items.length && this.before(l, m)) m = l
        if (r < this.items.length && this.before(r, m)) m = r
        if (m === i) break
        ;[this.items[i], this.items[m]] = [this.items[m]!, this.items[i]!]
        i = m
      }
    }
    return top.oid
  }
  private before(a: number, b: number) {
    const x = this.items[a]!
    const y = this.items[b]!
    return x.date > y.date || (x.date === y.date && x.seq < y.seq)
  }
}

export const blameLines = async (
  store: RepoStore,
  target: BlameTarget,
  startLine: number,
  endLine: number,
  mailmap: Mailmap
): Promise<{ readonly lines: Array<Results.BlameLine>; readonly total: number }> => {
  const nodes = new Map<string, Node>()
  const origins = new Map<string, Map<string, Origin>>()
  const blobs = new Map<string, Array<string>>()
  const queued = new Set<string>()
  const queue = new Queue()

  const nodeOf = async (oid: string): Promise<Node> => {
    const hit = nodes.get(oid)
    if (hit !== undefined) return hit
    const c = await store.commit(oid)
    const n = { oid, date: c.committer.timestamp, parents: c.parents, tree: c.tree }
    nodes.set(oid, n)
    return n
  }
  const linesOf = async (blob: string): Promise<Array<string>> => {
    let l = blobs.get(blob)
    if (l === undefined) {
      l = splitLines(text(await store.blob(blob)))
      blobs.set(blob, l)
    }
    return l
  }
  const originOf = (commit: string, path: string, blob: string): Origin => {
    let byPath = origins.get(commit)
    if (byPath === undefined) {
      byPath = new Map()
      origins.set(commit, byPath)
    }
    let o = byPath.get(path)
    if (o === undefined) {
      o = { commit, path, blob, suspects: [] }
      byPath.set(path, o)
    }
    return o
  }
  const give = (origin: Origin, entries: ReadonlyArray<Entry>) => {
    if (entries.length === 0) return
    for (const e of entries) e.suspect = origin
    origin.suspects.push(...entries)
    origin.suspects.sort((a, b) => a.sLno - b.sLno)
    if (!queued.has(origin.commit)) {
      queued.add(origin.commit)
      queue.push(origin.commit, nodes.get(origin.commit)?.date ?? 0)
    }
  }

  // The final version and the first suspect.
  let finalLines: Array<string>
  let first: Origin
  if (target.commit === undefined) {
    finalLines = splitLines(text(target.workingBytes ?? new Uint8Array(0)))
    const headTree = target.head === undefined ? undefined : (await nodeOf(target.head)).tree
    nodes.set(WORKTREE, {
      oid: WORKTREE,
      date: Number.MAX_SAFE_INTEGER,
      parents: target.head === undefined ? [] : [target.head],
      tree: headTree
    })
    first = originOf(WORKTREE, target.path, WORKTREE)
    first.lines = finalLines
  } else {
    const node = await nodeOf(target.commit)
    const entry = node.tree === undefined ? undefined : await store.entryAt(node.tree, target.path)
    if (entry === undefined || isTreeMode(entry.mode)) throw new Error("no-such-path")
    finalLines = await linesOf(entry.oid)
    first = originOf(target.commit, target.path, entry.oid)
  }
  const total = finalLines.length
  const last = Math.min(endLine, total)
  if (startLine > last) return { lines: [], total }
  const finished: Array<Entry> = []
  give(first, [{ lno: startLine - 1, sLno: startLine - 1, num: last - startLine + 1, suspect: first }])

  const originLines = async (o: Origin) => o.lines ?? linesOf(o.blob)

  /** The parent's version of the file: same path, else (second pass) the file it was renamed from. */
  const findOrigin = async (parent: string, origin: Origin, renames: boolean): Promise<Origin | undefined> => {
    const p = await nodeOf(parent)
    if (p.tree === undefined) return undefined
    if (!renames) {
      const e = await store.entryAt(p.tree, origin.path)
      if (e === undefined || isTreeMode(e.mode) || e.mode === "160000") return undefined
      return originOf(parent, origin.path, e.oid)
    }
    const child = nodes.get(origin.commit)!
    const sides = await diffTreeSides(store, p.tree, child.tree, [])
    if (origin.commit === WORKTREE) {
      // The working tree stands on the index: sources are files of HEAD the index no longer has.
      const head = await flattenTree(store, p.tree, [])
      sides.old.clear()
      for (const [k, e] of head) if (target.indexPaths?.has(k) !== true) sides.old.set(k, e)
      sides.new.clear()
      const bytes = new TextEncoder().encode(finalLines.join(""))
      sides.new.set(origin.path, { oid: WORKTREE, mode: "100644", load: async () => bytes })
    } else {
      // Only the blamed path is a rename destination (git's single_follow); only deleted files are sources.
      for (const k of [...sides.new.keys()]) if (k !== origin.path) sides.new.delete(k)
      for (const k of [...sides.old.keys()]) {
        if (child.tree !== undefined && (await store.entryAt(child.tree, k)) !== undefined) sides.old.delete(k)
      }
    }
    const changes = await rawChanges(sides.old, sides.new)
    const renamed = changes.find((c) => c.status === "renamed" && c.path === origin.path)
    if (renamed?.oldPath === undefined || renamed.old === undefined) return undefined
    return originOf(parent, renamed.oldPath, renamed.old.oid)
  }

  const passToParent = async (target: Origin, parent: Origin): Promise<void> => {
    if (target.suspects.length === 0) return
    const a = await originLines(parent)
    const b = await originLines(target)
    const changes = diffLines(a, b, { indentHeuristic: true })
    const moved: Array<Entry> = []
    const kept: Array<Entry> = []
    let pending = target.suspects
    let offset = 0
    // Regions of the target: unchanged [from, c.i2) maps to the parent with `offset`; [c.i2, c.i2 + c.chg2) stays.
    const pass = (upTo: number, off: number) => {
      const rest: Array<Entry> = []
      for (const e of pending) {
        if (e.sLno >= upTo) {
          rest.push(e)
          continue
        }
        if (e.sLno + e.num > upTo) {
          const len = upTo - e.sLno
          rest.push({ lno: e.lno + len, sLno: e.sLno + len, num: e.num - len, suspect: e.suspect })
          e.num = len
        }
        moved.push({ lno: e.lno, sLno: e.sLno + off, num: e.num, suspect: parent })
      }
      pending = rest
    }
    const keep = (upTo: number) => {
      const rest: Array<Entry> = []
      for (const e of pending) {
        if (e.sLno >= upTo) {
          rest.push(e)
          continue
        }
        if (e.sLno + e.num > upTo) {
          const len = upTo - e.sLno
          rest.push({ lno: e.lno + len, sLno: e.sLno + len, num: e.num - len, suspect: e.suspect })
          e.num = len
        }
        kept.push(e)
      }
      pending = rest
    }
    for (const c of changes) {
      pass(c.i2, offset)
      keep(c.i2 + c.chg2)
      offset = c.i1 + c.chg1 - (c.i2 + c.chg2)
    }
    pass(Number.MAX_SAFE_INTEGER, offset)
    target.suspects = kept
    give(parent, moved)
  }

  const passBlame = async (origin: Origin): Promise<void> => {
    const node = nodes.get(origin.commit) ?? (await nodeOf(origin.commit))
    const parents = node.parents
    const found: Array<Origin | undefined> = parents.map(() => undefined)
    for (const renames of [false, true]) {
      for (let i = 0; i < parents.length; i++) {
        if (found[i] !== undefined) continue
        const porigin = await findOrigin(parents[i]!, origin, renames)
        if (porigin === undefined) continue
        if (porigin.blob === origin.blob) {
          const all = origin.suspects
          origin.suspects = []
          give(porigin, all)
          return
        }
        if (!found.slice(0, i).some((f) => f !== undefined && f.blob === porigin.blob)) found[i] = porigin
      }
    }
    for (const porigin of found) {
      if (porigin === undefined) continue
      await passToParent(origin, porigin)
      if (origin.suspects.length === 0) return
    }
  }

  for (let oid = queue.pop(); oid !== undefined; oid = queue.pop()) {
    queued.delete(oid)
    const byPath = origins.get(oid)
    if (byPath === undefined) continue
    for (const origin of byPath.values()) {
      if (origin.suspects.length === 0) continue
      await passBlame(origin)
      finished.push(...origin.suspects)
      origin.suspects = []
    }
  }

  const infos = new Map<string, Results.BlameCommit>()
  const infoOf = async (oid: string): Promise<Results.BlameCommit | null> => {
    if (oid === WORKTREE) return null
    const hit = infos.get(oid)
    if (hit !== undefined) return hit
    const c: CommitData = await store.commit(oid)
    const who = mailmap.map(c.author.name, c.author.email)
    const info = {
      hash: oid,
      shortHash: shortHash(oid),
      author: who.name,
      email: who.email,
      date: isoDate(c.author.timestamp, c.author.offset),
      message: summaryOf(c.message, oid)
    }
    infos.set(oid, info)
    return info
  }
  const out: Array<Results.BlameLine> = []
  for (const e of finished) {
    const commit = await infoOf(e.suspect.commit)
    for (let k = 0; k < e.num; k++) {
      const raw = finalLines[e.lno + k] ?? ""
      out.push({
        line: e.lno + k + 1,
        originalLine: e.sLno + k + 1,
        originalPath: e.suspect.path,
        text: raw.endsWith("\n") ? raw.slice(0, -1) : raw,
        commit
      })
    }
  }
  out.sort((x, y) => x.line - y.line)
  return { lines: out, total }
}
