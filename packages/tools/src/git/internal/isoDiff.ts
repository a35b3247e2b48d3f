/**
 * Diffs in the pure-JavaScript backend: two flat sides (a tree, the index,
 * the working tree) are compared path by path in git's order, renames are
 * paired as git pairs them, and each changed file is line-diffed with the
 * git-compatible diff into the shared `ChangesAcc` (same statuses, same
 * counts, same hunks, same budget rule as the native backend). Submodules
 * (gitlinks) are left out, as the native backend's `--ignore-submodules=all`
 * leaves them out.
 *
 * @internal
 */
import type * as Results from "./results.ts"
import type { DiffShape } from "./model.ts"
import { admitHunks, Budget, ChangesAcc, type FileAcc } from "./changes.ts"
import { isGitlink, isTreeMode, type RepoStore } from "./objects.ts"
import { detectRenames, isBinary, type Side } from "./rename.ts"
import { byBytes } from "./statusShape.ts"
import { text } from "./tokens.ts"
import { diffLines, type Hunk, hunksOf, splitLines } from "./xdiff.ts"

/** One side of a file: its blob id, its mode, and how to read its bytes. */
export interface Entry {
  readonly oid: string
  readonly mode: string
  readonly load: () => Promise<Uint8Array>
}

export type Flat = Map<string, Entry>

/** Whether a path is selected by literal pathspecs (a path or a directory above it); no pathspec selects all. */
export const selected = (paths: ReadonlyArray<string>, p: string): boolean =>
  paths.length === 0 || paths.some((s) => s === "" || p === s || p.startsWith(`${s}/`))

/** Whether a directory may hold selected paths. */
export const worthWalking = (paths: ReadonlyArray<string>, dir: string): boolean =>
  paths.length === 0 ||
  dir === "" ||
  dir === "." ||
  paths.some((s) => s === "" || dir === s || dir.startsWith(`${s}/`) || s.startsWith(`${dir}/`))

/** The files of a tree, flattened, limited to the pathspecs. */
export const flattenTree = async (
  store: RepoStore,
  treeOid: string | undefined,
  paths: ReadonlyArray<string>
): Promise<Flat> => {
  const out: Flat = new Map()
  if (treeOid === undefined) return out
  const walk = async (oid: string, prefix: string): Promise<void> => {
    for (const e of await store.tree(oid)) {
      const p = prefix === "" ? e.name : `${prefix}/${e.name}`
      if (isTreeMode(e.mode)) {
        if (worthWalking(paths, p)) await walk(e.oid, p)
      } else if (!isGitlink(e.mode) && selected(paths, p)) {
        out.set(p, { oid: e.oid, mode: e.mode, load: () => store.blob(e.oid) })
      }
    }
  }
  await walk(treeOid, "")
  return out
}

/** The files that differ between two trees, limited to the pathspecs; identical subtrees are skipped. */
export const diffTreeSides = async (
  store: RepoStore,
  oldTree: string | undefined,
  newTree: string | undefined,
  paths: ReadonlyArray<string>
): Promise<{ readonly old: Flat; readonly new: Flat }> => {
  const oldSide: Flat = new Map()
  const newSide: Flat = new Map()
  const addAll = async (oid: string, prefix: string, into: Flat) => {
    const flat = await flattenTree(store, oid, [])
    for (const [p, e] of flat) {
      const full = prefix === "" ? p : `${prefix}/${p}`
      if (selected(paths, full)) into.set(full, e)
    }
  }
  const walk = async (a: string | undefined, b: string | undefined, prefix: string): Promise<void> => {
    if (a === b) return
    const ea = a === undefined ? [] : await store.tree(a)
    const eb = b === undefined ? [] : await store.tree(b)
    const byName = new Map<string, { a?: (typeof ea)[number]; b?: (typeof eb)[number] }>()
    for (const e of ea) byName.set(e.name, { a: e })
    for (const e of eb) byName.set(e.name, { ...byName.get(e.name), b: e })
    for (const [name, pair] of byName) {
      const p = prefix === "" ? name : `${prefix}/${name}`
      const x = pair.a
      const y = pair.b
      if (x !== undefined && y !== undefined && x.oid === y.oid && x.mode === y.mode) continue
      const xTree = x !== undefined && isTreeMode(x.mode)
      const yTree = y !== undefined && isTreeMode(y.mode)
      if (xTree || yTree) {
        if (!worthWalking(paths, p)) {
          // a file on the other side may still be selected
        } else if (xTree && yTree) {
          await walk(x.oid, y.oid, p)
        } else {
          if (xTree) await addAll(x.oid, p, oldSide)
          if (yTree) await addAll(y.oid, p, newSide)
        }
      }
      if (!selected(paths, p)) continue
      if (x !== undefined && !xTree && !isGitlink(x.mode))
        oldSide.set(p, { oid: x.oid, mode: x.mode, load: () => store.blob(x.oid) })
      if (y !== undefined && !yTree && !isGitlink(y.mode))
        newSide.set(p, { oid: y.oid, mode: y.mode, load: () => store.blob(y.oid) })
    }
  }
  await walk(oldTree, newTree, "")
  return { old: oldSide, new: newSide }
}

const kind = (mode: string) => (mode === "120000" ? "link" : mode === "160000" ? "gitlink" : "file")

export interface RawChange {
  readonly status: Results.FileStatus
  readonly path: string
  readonly oldPath?: string | undefined
  readonly old: Entry | undefined
  readonly new: Entry | undefined
}

/** Pairs two flat sides into changes in git's order, with renames detected as git detects them. */
export const rawChanges = async (oldSide: Flat, newSide: Flat): Promise<Array<RawChange>> => {
  const paths = [...new Set([...oldSide.keys(), ...newSide.keys()])].sort(byBytes)
  const changes: Array<RawChange> = []
  const deleted: Array<{ readonly path: string; readonly entry: Entry }> = []
  const added: Array<{ readonly path: string; readonly entry: Entry }> = []
  for (const p of paths) {
    const a = oldSide.get(p)
    const b = newSide.get(p)
    if (a !== undefined && b !== undefined) {
      if (a.oid === b.oid && a.mode === b.mode) continue
      changes.push({ status: kind(a.mode) === kind(b.mode) ? "modified" : "typechange", path: p, old: a, new: b })
    } else if (a !== undefined) {
      deleted.push({ path: p, entry: a })
      changes.push({ status: "deleted", path: p, old: a, new: undefined })
    } else if (b !== undefined) {
      added.push({ path: p, entry: b })
      changes.push({ status: "added", path: p, old: undefined, new: b })
    }
  }
  const side = (x: { readonly path: string; readonly entry: Entry }): Side => ({
    path: x.path,
    oid: x.entry.oid,
    mode: x.entry.mode,
    load: x.entry.load
  })
  const pairs = await detectRenames(deleted.map(side), added.map(side))
  if (pairs.length === 0) return changes
  const renamedFrom = new Map<string, string>()
  const usedSources = new Set<string>()
  for (const pair of pairs) {
    renamedFrom.set(added[pair.dst]!.path, deleted[pair.src]!.path)
    usedSources.add(deleted[pair.src]!.path)
  }
  const out: Array<RawChange> = []
  for (const c of changes) {
    if (c.status === "deleted" && usedSources.has(c.path)) continue
    const from = c.status === "added" ? renamedFrom.get(c.path) : undefined
    if (from !== undefined)
      out.push({ status: "renamed", path: c.path, oldPath: from, old: oldSide.get(from), new: c.new })
    else out.push(c)
  }
  return out
}

const decode = (bytes: Uint8Array) => splitLines(text(bytes))

const wholeHunk = (lines: ReadonlyArray<string>, type: "add" | "delete"): Array<Hunk> =>
  lines.length === 0
    ? []
    : hunksOf(
        type === "delete" ? lines : [],
        type === "add" ? lines : [],
        [{ i1: 0, i2: 0, chg1: type === "delete" ? lines.length : 0, chg2: type === "add" ? lines.length : 0 }],
        0
      )

/** Fills one file: counts always, hunks when listed and within the budget. */
const fillFile = async (file: FileAcc, change: RawChange, shape: DiffShape, budget: Budget): Promise<void> => {
  const oldBytes = change.old === undefined ? new Uint8Array(0) : await change.old.load()
  const newBytes = change.new === undefined ? new Uint8Array(0) : await change.new.load()
  if (isBinary(oldBytes) || isBinary(newBytes)) {
    file.binary = true
    return
  }
  const a = decode(oldBytes)
  const b = decode(newBytes)
  if (change.status === "typechange") {
    file.deletions = a.length
    file.additions = b.length
    admitHunks(file, [...wholeHunk(a, "delete"), ...wholeHunk(b, "add")], budget)
    return
  }
  if (change.old !== undefined && change.new !== undefined && change.old.oid === change.new.oid) return
  const edits = diffLines(a, b, { ignoreWhitespace: shape.ignoreWhitespace })
  for (const e of edits) {
    file.deletions += e.chg1
    file.additions += e.chg2
  }
  if (file.wantsHunks && !budget.closed) admitHunks(file, hunksOf(a, b, edits, shape.contextLines), budget)
  else if (file.wantsHunks && edits.length > 0) file.truncated = true
}

/** Builds the changes of a diff from its raw changes. */
export const buildChanges = async (
  raw: ReadonlyArray<RawChange>,
  shape: DiffShape,
  budget: Budget
): Promise<ChangesAcc> => {
  const acc = new ChangesAcc(shape)
  for (const c of raw) {
    const file = acc.add({
      status: c.status,
      path: c.path,
      oldPath: c.oldPath,
      oldMode: c.old?.mode ?? "000000",
      newMode: c.new?.mode ?? "000000"
    })
    await fillFile(file, c, shape, budget)
  }
  return acc
}

/** Counts only (for `filesChanged` and `stats` of a commit). */
export const countChanges = async (
  raw: ReadonlyArray<RawChange>,
  ignoreWhitespace: boolean
): Promise<{ readonly filesChanged: number; readonly additions: number; readonly deletions: number }> => {
  const shape: DiffShape = { contextLines: 0, ignoreWhitespace, maxDiffSize: 0, maxFiles: 0, redact: () => true }
  const budget = new Budget(0)
  budget.closed = true
  const acc = await buildChanges(raw, shape, budget)
  const j = acc.toJSON()
  return { filesChanged: j.stats.filesChanged, additions: j.stats.additions, deletions: j.stats.deletions }
}
