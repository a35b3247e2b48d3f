/**
 * The pure-JavaScript backend, for machines without `git`: isomorphic-git
 * reads objects, the index and the working tree (without ever writing the
 * index: stat refreshes are off), and our own code does what isomorphic-git
 * does not (line diffs, rename detection, blame, path-limited history), each
 * built to give the same answers as the native backend.
 *
 * Known limits, all documented in the README: the index must be version 2
 * or 3 (isomorphic-git cannot read version 4); a linked worktree's own index
 * is not read; `.gitattributes` (binary, text conversion, filters) is not
 * applied, so a file git treats as binary by attribute is diffed as text
 * here; commit messages are decoded as UTF-8 whatever their `encoding`
 * header says.
 *
 * @internal
 */
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import { Effect } from "effect"
import * as git from "isomorphic-git"
import type {
  BlameQuery,
  DiffQuery,
  DiffShape,
  GitBackendShape,
  LogQuery,
  Repository,
  RevisionError,
  ShowQuery,
  StatusQuery
} from "./model.ts"
import { regularBytes } from "../../internal/workspace/regular.ts"
import { GitFailed, InvalidRevision, PathNotInRepository, UnknownRevision } from "../GitError.ts"
import { Budget, type ChangesAcc } from "./changes.ts"
import { isoDate, messageOf, shortHash, subjectOf } from "./format.ts"
import { blameLines } from "./isoBlame.ts"
import {
  buildChanges,
  countChanges,
  diffTreeSides,
  type Entry,
  type Flat,
  flattenTree,
  rawChanges,
  selected,
  worthWalking
} from "./isoDiff.ts"
import { makeIsoWrites } from "./isoWrites.ts"
import { Lru } from "./lru.ts"
import { type CommitData, MissingObject, RepoStore } from "./objects.ts"
import { detectRenames } from "./rename.ts"
import { parseRevision } from "./revision.ts"
import { shapeStatus } from "./statusShape.ts"
import type * as Results from "./results.ts"

/** The largest index read whole: far beyond any real repository's, and bounded. */
const maxIndexBytes = 1 << 30

const modeString = (mode: number): string => mode.toString(8).padStart(6, "0")
const kindOf = (mode: string) => (mode === "120000" ? "link" : "file")

/** ASCII-only case folding, as git's `-i` does under the C locale. */
const foldAscii = (s: string) => s.replace(/[A-Z]/g, (c) => String.fromCharCode(c.charCodeAt(0) + 32))

/** A small binary heap of commits: newest commit date first, then first inserted. */
class DateQueue {
  private readonly items: Array<{ readonly oid: string; readonly date: number; readonly seq: number }> = []
  private seq = 0
  get size() {
    return this.items.length
  }
  push(oid: string, date: number) {
    const items = this.items
    items.push({ oid, date, seq: this.seq++ })
    let i = items.length - 1
    while (i > 0) {
      const p = (i - 1) >> 1
      if (!this.before(i, p)) break
      ;[items[i], items[p]] = [items[p]!, items[i]!]
      i = p
    }
  }
  pop(): string | undefined {
    const items = this.items
    const top = items[0]
    const last = items.pop()
    if (top === undefined || last === undefined) return undefined
    if (items.length > 0) {
      items[0] = last
      let i = 0
      for (;;) {
        const l = 2 * i + 1
        let m = i
        if (l < items.length && this.before(l, m)) m = l
        if (l + 1 < items.length && this.before(l + 1, m)) m = l + 1
        if (m === i) break
        ;[items[i], items[m]] = [items[m]!, items[i]!]
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

export const makeIsomorphic = (): GitBackendShape => {
  const stores = new Map<string, RepoStore>()
  const counts = new Lru<string, { filesChanged: number; additions: number; deletions: number }>(100_000)

  const storeOf = async (repo: Repository): Promise<RepoStore> => {
    let store = stores.get(repo.gitDir)
    if (store === undefined) {
      store = new RepoStore(repo)
      stores.set(repo.gitDir, store)
    }
    await store.refresh()
    return store
  }

  const attempt = <A, E = never>(
    operation: string,
    f: () => Promise<A>,
    known?: (e: unknown) => E | undefined
  ): Effect.Effect<A, E | GitFailed> =>
    Effect.tryPromise({
      try: f,
      // isomorphic-git's messages can quote what it read; only a fixed phrase is reported.
      catch: (e) =>
        known?.(e) ??
        new GitFailed({
          operation,
          detail:
            e instanceof MissingObject
              ? "the repository is damaged or incomplete (an object could not be read)"
              : "the repository could not be read"
        })
    })

  const revisionError = (e: unknown): RevisionError | undefined =>
    e instanceof UnknownRevision || e instanceof InvalidRevision || e instanceof GitFailed ? e : undefined

  const resolve = (store: RepoStore, rev: string) =>
    Effect.flatMap(parseRevision(rev), (parsed) => attempt("rev-parse", () => store.resolve(parsed), revisionError))

  const config = async (store: RepoStore, key: string): Promise<unknown> =>
    git.getConfig({ fs: store.fs, gitdir: store.repo.commonDir, path: key }).catch(() => undefined)

  // -------------------------------------------------------------------------
  // Working tree and index
  // -------------------------------------------------------------------------

  interface WorkRow {
    stage?: { readonly oid: string; readonly mode: string }
    work?: { readonly mode: string; readonly oid: () => Promise<string>; readonly load: () => Promise<Uint8Array> }
  }

  /** Walks the index and the working tree; untracked ignored files are skipped, as git skips them. */
  const walkWorktree = async (
    store: RepoStore,
    options: { readonly paths: ReadonlyArray<string>; readonly untracked: boolean }
  ): Promise<Map<string, WorkRow>> => {
    const { workTree, gitDir } = store.repo
    const indexStat = await fsp.stat(path.join(gitDir, "index"), { bigint: true }).catch(() => undefined)
    const indexMtimeNs = indexStat?.mtimeNs ?? 0n
    const rows = new Map<string, WorkRow>()
    await git.walk({
      fs: store.fs,
      dir: workTree,
      gitdir: gitDir,
      cache: store.cache,
      trees: [git.STAGE(), git.WORKDIR({ refresh: false })],
      map: async (filepath, [stage, work]) => {
        if (filepath === ".") return undefined
        if (filepath === ".git" || filepath.startsWith(".git/")) return null
        const st = stage === null || stage === undefined ? undefined : await stage.type()
        const wt = work === null || work === undefined ? undefined : await work.type()
        if (st === "commit" || (st === undefined && wt === undefined)) return null
        if (st === undefined) {
          if (!options.untracked || wt === "special") return null
          if (await git.isIgnored({ fs: store.fs, dir: workTree, gitdir: gitDir, filepath })) return null
        }
        if (!worthWalking(options.paths, filepath)) return null
        if (!selected(options.paths, filepath)) return undefined
        const row: WorkRow = {}
        if (st === "blob" && stage !== null && stage !== undefined) {
          row.stage = { oid: await stage.oid(), mode: modeString(await stage.mode()) }
        }
        if (wt === "blob" && work !== null && work !== undefined) {
          const mode = modeString(await work.mode())
          const load = async () => (await work.content()) ?? new Uint8Array(0)
          const indexed =
            row.stage === undefined || stage === null || stage === undefined ? undefined : await stage.stat()
          const oid = async () => {
            // git's own check: the index's stat data (to the nanosecond) still describes the file, and the
            // file is not newer than the index (racy git). isomorphic-git compares in float milliseconds,
            // which never matches to the nanosecond, so it would hash every file.
            if (indexed !== undefined && row.stage !== undefined) {
              const now = await fsp.lstat(path.join(workTree, filepath), { bigint: true }).catch(() => undefined)
              if (
                now !== undefined &&
                now.mtimeNs < indexMtimeNs &&
                now.size === BigInt(indexed.size) &&
                now.ino % 2n ** 32n === BigInt(indexed.ino) &&
                now.mtimeNs / 1_000_000_000n === BigInt(indexed.mtimeSeconds) &&
                now.mtimeNs % 1_000_000_000n === BigInt(indexed.mtimeNanoseconds) &&
                now.ctimeNs / 1_000_000_000n === BigInt(indexed.ctimeSeconds) &&
                now.ctimeNs % 1_000_000_000n === BigInt(indexed.ctimeNanoseconds)
              ) {
                return row.stage.oid
              }
            }
            return (await git.hashBlob({ object: await load() })).oid
          }
          row.work = { mode, oid, load }
        }
        if (row.stage === undefined && row.work === undefined) return undefined
        rows.set(filepath, row)
        return undefined
      }
    })
    return rows
  }

  const unmergedPaths = async (store: RepoStore): Promise<Set<string>> => {
    const file = path.join(store.repo.gitDir, "index")
    // Read without blocking: a FIFO planted as the index is not a file (the store check refuses it first).
    const bytes = regularBytes(file, { maxBytes: maxIndexBytes, root: store.repo.root })
    const out = new Set<string>()
    if (bytes === undefined || bytes.length < 12) return out
    // A quick scan of the entry flags: stage bits (12-13) of each entry of a version 2/3 index.
    const count = bytes.readUInt32BE(8)
    const version = bytes.readUInt32BE(4)
    let at = 12
    for (let i = 0; i < count && at + 62 <= bytes.length; i++) {
      const flags = bytes.readUInt16BE(at + 60)
      const nameLength = flags & 0xfff
      const extended = version >= 3 && (flags & 0x4000) !== 0
      const nameAt = at + 62 + (extended ? 2 : 0)
      const end = nameLength < 0xfff ? nameAt + nameLength : bytes.indexOf(0, nameAt)
      if ((flags >> 12) & 3) out.add(bytes.subarray(nameAt, end).toString("utf8"))
      const entryLength = end - at + 1
      at += Math.ceil(entryLength / 8) * 8
    }
    return out
  }

  const sameMode = (a: string, b: string, filemode: boolean) =>
    a === b || (!filemode && kindOf(a) === "file" && kindOf(b) === "file")

  const status = (repo: Repository, query: StatusQuery): Effect.Effect<Results.StatusOutput, GitFailed> =>
    attempt("status", async () => {
      const store = await storeOf(repo)
      const head = await store.head()
      const filemode = (await config(store, "core.filemode")) !== false
      const headTree = head.oid === undefined ? undefined : (await store.commit(head.oid)).tree
      const headFlat = await flattenTree(store, headTree, [])
      const rows = await walkWorktree(store, { paths: [], untracked: true })
      const conflicted = await unmergedPaths(store)
      const staged: Array<Results.Change> = []
      const unstaged: Array<Results.Change> = []
      const untracked: Array<string> = []
      const deleted: Array<{ path: string; entry: Entry }> = []
      const added: Array<{ path: string; entry: Entry }> = []
      for (const p of new Set([...headFlat.keys(), ...rows.keys()])) {
        if (conflicted.has(p)) continue
        const h = headFlat.get(p)
        const row = rows.get(p)
        const s = row?.stage
        const w = row?.work
        if (h === undefined && s !== undefined) {
          added.push({ path: p, entry: { oid: s.oid, mode: s.mode, load: () => store.blob(s.oid) } })
          staged.push({ path: p, status: "added" })
        } else if (h !== undefined && s === undefined) {
          deleted.push({ path: p, entry: h })
          staged.push({ path: p, status: "deleted" })
        } else if (h !== undefined && s !== undefined && (h.oid !== s.oid || h.mode !== s.mode)) {
          staged.push({ path: p, status: kindOf(h.mode) === kindOf(s.mode) ? "modified" : "typechange" })
        }
        if (s !== undefined) {
          if (w === undefined) unstaged.push({ path: p, status: "deleted" })
          else if (kindOf(w.mode) !== kindOf(s.mode)) unstaged.push({ path: p, status: "typechange" })
          else if (!sameMode(w.mode, s.mode, filemode) || (await w.oid()) !== s.oid) {
            unstaged.push({ path: p, status: "modified" })
          }
        } else if (w !== undefined) untracked.push(p)
      }
      const side = (x: { path: string; entry: Entry }) => ({
        path: x.path,
        oid: x.entry.oid,
        mode: x.entry.mode,
        load: x.entry.load
      })
      const byPath = (a: { path: string }, b: { path: string }) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)
      deleted.sort(byPath)
      added.sort(byPath)
      const pairs = await detectRenames(deleted.map(side), added.map(side))
      const renamedTo = new Map<string, string>()
      const gone = new Set<string>()
      for (const pair of pairs) {
        renamedTo.set(added[pair.dst]!.path, deleted[pair.src]!.path)
        gone.add(deleted[pair.src]!.path)
      }
      const stagedFinal = staged
        .filter((c) => !(c.status === "deleted" && gone.has(c.path)))
        .map((c) => {
          const from = c.status === "added" ? renamedTo.get(c.path) : undefined
          return from === undefined ? c : { path: c.path, status: "renamed" as const, oldPath: from }
        })
      return shapeStatus(
        {
          branch: head.ref === undefined ? null : head.ref.startsWith("refs/heads/") ? head.ref.slice(11) : head.ref,
          head: head.oid ?? null,
          staged: stagedFinal,
          unstaged,
          untracked,
          conflicted: [...conflicted]
        },
        query.limit
      )
    })

  // -------------------------------------------------------------------------
  // Commits
  // -------------------------------------------------------------------------

  const commitChanges = async (store: RepoStore, c: CommitData, paths: ReadonlyArray<string>) => {
    const parent = c.parents[0] === undefined ? undefined : (await store.commit(c.parents[0])).tree
    const sides = await diffTreeSides(store, parent, c.tree, paths)
    return rawChanges(sides.old, sides.new)
  }

  const commitCounts = async (store: RepoStore, c: CommitData, ignoreWhitespace: boolean) => {
    const key = `${c.oid}:${ignoreWhitespace}`
    const hit = counts.get(key)
    if (hit !== undefined) return hit
    const result = await countChanges(await commitChanges(store, c, []), ignoreWhitespace)
    counts.set(key, result)
    return result
  }

  const toCommit = async (store: RepoStore, c: CommitData, ignoreWhitespace: boolean): Promise<Results.Commit> => {
    const mailmap = await store.mailmap()
    const author = mailmap.map(c.author.name, c.author.email)
    const committer = mailmap.map(c.committer.name, c.committer.email)
    const n = await commitCounts(store, c, ignoreWhitespace)
    return {
      hash: c.oid,
      shortHash: shortHash(c.oid),
      parents: [...c.parents],
      author: author.name,
      email: author.email,
      date: isoDate(c.author.timestamp, c.author.offset),
      committer: committer.name,
      committerDate: isoDate(c.committer.timestamp, c.committer.offset),
      subject: subjectOf(c.message),
      message: messageOf(c.message),
      filesChanged: n.filesChanged,
      stats: { additions: n.additions, deletions: n.deletions }
    }
  }

  const changesJson = async (
    store: RepoStore,
    c: CommitData,
    shape: DiffShape,
    budget: Budget,
    paths: ReadonlyArray<string>
  ): Promise<Results.Changes> => {
    const acc: ChangesAcc = await buildChanges(await commitChanges(store, c, paths), shape, budget)
    return acc.toJSON()
  }

  /** Whether a commit is TREESAME to a parent for a path: the same entry (or none) on both sides. */
  const sameAt = async (store: RepoStore, a: string, b: string, p: string) => {
    const x = await store.entryAt(a, p)
    const y = await store.entryAt(b, p)
    return x === undefined ? y === undefined : y !== undefined && x.oid === y.oid && x.mode === y.mode
  }

  const log = (repo: Repository, query: LogQuery): Effect.Effect<Results.LogOutput, RevisionError> =>
    Effect.gen(function* () {
      const store = yield* attempt("log", () => storeOf(repo), revisionError)
      const start =
        query.rev === undefined
          ? (yield* attempt("log", () => store.head(), revisionError)).oid
          : yield* resolve(store, query.rev)
      if (start === undefined) return { commits: [], truncated: false }
      return yield* attempt(
        "log",
        async () => {
          const mailmap = await store.mailmap()
          const queue = new DateQueue()
          const seen = new Set<string>([start])
          queue.push(start, (await store.commit(start)).committer.timestamp)
          const shown: Array<CommitData> = []
          const author = query.author === undefined ? undefined : foldAscii(query.author)
          const grep = query.grep === undefined ? undefined : foldAscii(query.grep)
          while (shown.length <= query.limit) {
            const oid = queue.pop()
            if (oid === undefined) break
            const c = await store.commit(oid)
            const parents = c.parents
            let show = true
            if (query.path !== undefined) {
              // Like git log with --diff-merges: every parent is followed (full history), and a commit is
              // left out when the path is the same as in all its parents (a root: when it lacks the path).
              if (parents.length === 0) show = (await store.entryAt(c.tree, query.path)) !== undefined
              else {
                show = false
                for (const p of parents) {
                  if (!(await sameAt(store, c.tree, (await store.commit(p)).tree, query.path))) {
                    show = true
                    break
                  }
                }
              }
            }
            for (const p of parents) {
              if (seen.has(p)) continue
              seen.add(p)
              queue.push(p, (await store.commit(p)).committer.timestamp)
            }
            if (!show) continue
            const date = c.committer.timestamp
            if (query.since !== undefined && date < query.since) continue
            if (query.until !== undefined && date > query.until) continue
            if (author !== undefined) {
              const who = mailmap.map(c.author.name, c.author.email)
              if (!foldAscii(`${who.name} <${who.email}>`).includes(author)) continue
            }
            if (grep !== undefined && !c.message.split("\n").some((l) => foldAscii(l).includes(grep))) continue
            shown.push(c)
          }
          const budget = new Budget(query.diff.maxDiffSize)
          const commits: Array<Results.Commit> = []
          for (const c of shown.slice(0, query.limit)) {
            const commit = await toCommit(store, c, query.diff.ignoreWhitespace)
            commits.push(
              query.includeDiff ? { ...commit, diff: await changesJson(store, c, query.diff, budget, []) } : commit
            )
          }
          return { commits, truncated: shown.length > query.limit }
        },
        revisionError
      )
    })

  // -------------------------------------------------------------------------
  // diff, show, blame
  // -------------------------------------------------------------------------

  const diff = (repo: Repository, query: DiffQuery): Effect.Effect<Results.DiffOutput, RevisionError> =>
    Effect.gen(function* () {
      const store = yield* attempt("diff", () => storeOf(repo), revisionError)
      const [base, compare] = yield* Effect.all([
        query.base === undefined
          ? Effect.map(
              attempt("diff", () => store.head(), revisionError),
              (h) => h.oid
            )
          : resolve(store, query.base),
        query.compare === undefined ? Effect.succeed(undefined) : resolve(store, query.compare)
      ])
      return yield* attempt(
        "diff",
        async () => {
          const baseTree = base === undefined ? undefined : (await store.commit(base)).tree
          let sides: { readonly old: Flat; readonly new: Flat }
          if (compare !== undefined) {
            sides = await diffTreeSides(store, baseTree, (await store.commit(compare)).tree, query.paths)
          } else {
            const old = await flattenTree(store, baseTree, query.paths)
            const rows = await walkWorktree(store, { paths: query.paths, untracked: false })
            const next: Flat = new Map()
            for (const [p, row] of rows) {
              const s = row.stage
              if (s === undefined) continue
              if (query.staged) next.set(p, { oid: s.oid, mode: s.mode, load: () => store.blob(s.oid) })
              else if (row.work !== undefined) {
                const w = row.work
                next.set(p, { oid: await w.oid(), mode: w.mode, load: w.load })
              }
            }
            sides = { old, new: next }
          }
          const acc = await buildChanges(await rawChanges(sides.old, sides.new), query, new Budget(query.maxDiffSize))
          return {
            base: base === undefined ? null : (query.base ?? "HEAD"),
            compare: query.compare ?? (query.staged ? "index" : "working tree"),
            ...acc.toJSON()
          }
        },
        revisionError
      )
    })

  const show = (repo: Repository, query: ShowQuery): Effect.Effect<Results.ShowOutput, RevisionError> =>
    Effect.gen(function* () {
      const store = yield* attempt("show", () => storeOf(repo), revisionError)
      const oid = yield* resolve(store, query.rev)
      return yield* attempt(
        "show",
        async () => {
          const c = await store.commit(oid)
          const commit = await toCommit(store, c, query.ignoreWhitespace)
          if (!query.includeDiff) return { commit }
          return { commit, diff: await changesJson(store, c, query, new Budget(query.maxDiffSize), query.paths) }
        },
        revisionError
      )
    })

  const blame = (
    repo: Repository,
    query: BlameQuery
  ): Effect.Effect<Results.BlameOutput, RevisionError | PathNotInRepository> =>
    Effect.gen(function* () {
      const store = yield* attempt("blame", () => storeOf(repo), revisionError)
      const rev = query.rev === undefined ? undefined : yield* resolve(store, query.rev)
      const known = (e: unknown) => (e instanceof PathNotInRepository ? e : revisionError(e))
      return yield* attempt(
        "blame",
        async () => {
          const head = await store.head()
          let workingBytes: Uint8Array | undefined
          let indexPaths: Set<string> | undefined
          if (rev === undefined) {
            if (head.oid === undefined) throw new UnknownRevision({ revision: "HEAD", reason: "no-commits" })
            const rows = await walkWorktree(store, { paths: [], untracked: false })
            indexPaths = new Set([...rows].filter(([, r]) => r.stage !== undefined).map(([p]) => p))
            const inHead = (await store.entryAt((await store.commit(head.oid)).tree, query.path)) !== undefined
            if (!inHead && !indexPaths.has(query.path)) {
              throw new PathNotInRepository({ path: query.path, reason: "not-tracked" })
            }
            // Read by the tool through the workspace; the backend never opens a working-tree path.
            workingBytes = query.contents
            if (workingBytes === undefined) throw new PathNotInRepository({ path: query.path, reason: "not-tracked" })
          } else {
            const entry = await store.entryAt((await store.commit(rev)).tree, query.path)
            if (entry === undefined || entry.mode === "040000" || entry.mode === "160000") {
              throw new PathNotInRepository({
                path: query.path,
                reason: "not-in-revision",
                ...(query.rev === undefined ? {} : { revision: query.rev })
              })
            }
          }
          const last =
            query.endLine === undefined
              ? query.startLine + query.maxLines
              : Math.min(query.endLine, query.startLine + query.maxLines)
          const result = await blameLines(
            store,
            { commit: rev, head: head.oid, path: query.path, workingBytes, indexPaths },
            query.startLine,
            last,
            await store.mailmap()
          )
          const truncated = result.lines.length > query.maxLines
          return {
            path: query.path,
            rev: query.rev ?? "working tree",
            lines: truncated ? result.lines.slice(0, query.maxLines) : result.lines,
            truncated,
            ...(truncated ? { nextLine: query.startLine + query.maxLines } : {})
          }
        },
        known
      )
    })

  // A write drops the repository's cached objects and index: the next read starts afresh.
  const writes = makeIsoWrites((repo) => stores.delete(repo.gitDir))
  return { kind: "isomorphic", status, log, diff, blame, show, writes }
}
