/**
 * The object store of the pure-JavaScript backend for one repository:
 * objects read through isomorphic-git (loose and packed, deltas resolved)
 * with its cache kept across calls, parsed commits and trees kept in
 * content-addressed LRU maps (an object id never changes meaning), refs and
 * HEAD read fresh on every call, and revisions resolved by the same grammar
 * and lookup order as git (`X`, `refs/X`, `refs/tags/X`, `refs/heads/X`,
 * `refs/remotes/X`, `refs/remotes/X/HEAD`, then an abbreviated hash, with
 * commits preferred when a prefix is ambiguous).
 *
 * isomorphic-git's cache holds pack indexes and the parsed index file. It is
 * renewed whenever HEAD, `packed-refs`, the refs directories, the index or
 * the pack directory change (their stats are compared on every call).
 *
 * @internal
 */
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import * as git from "isomorphic-git"
import { FileSystem } from "isomorphic-git/models"
import type { Repository } from "./model.ts"
import { UnknownRevision } from "../GitError.ts"
import { Mailmap } from "./format.ts"
import { regularBytes } from "../../internal/workspace/regular.ts"
import { jailedFs } from "./jailedFs.ts"
import { Lru } from "./lru.ts"
import { isHex, type ParsedRevision } from "./revision.ts"
import { text } from "./tokens.ts"

export interface Person {
  readonly name: string
  readonly email: string
  readonly timestamp: number
  /** Minutes east of UTC. */
  readonly offset: number
}

export interface CommitData {
  readonly oid: string
  readonly tree: string
  readonly parents: ReadonlyArray<string>
  readonly author: Person
  readonly committer: Person
  /** The message as stored. */
  readonly message: string
}

export interface TreeEntry {
  readonly name: string
  /** Six octal digits: `100644`, `100755`, `120000`, `040000`, `160000`. */
  readonly mode: string
  readonly oid: string
}

export const isTreeMode = (mode: string) => mode === "040000"
export const isGitlink = (mode: string) => mode === "160000"

const parsePerson = (line: string): Person => {
  const gt = line.lastIndexOf(">")
  const lt = line.lastIndexOf("<", gt)
  const name = line.slice(0, Math.max(lt, 0)).trim()
  const email = lt === -1 ? "" : line.slice(lt + 1, gt)
  const [ts = "0", tz = "+0000"] = line
    .slice(gt + 1)
    .trim()
    .split(/\s+/)
  const m = /^([+-])(\d\d)(\d\d)$/.exec(tz)
  const offset = m === null ? 0 : (m[1] === "-" ? -1 : 1) * (Number(m[2]) * 60 + Number(m[3]))
  return { name, email, timestamp: Number(ts), offset }
}

const parseCommit = (oid: string, bytes: Uint8Array): CommitData => {
  const s = text(bytes)
  const split = s.indexOf("\n\n")
  const headers = split === -1 ? s : s.slice(0, split)
  const message = split === -1 ? "" : s.slice(split + 2)
  let tree = ""
  const parents: Array<string> = []
  let author: Person = { name: "", email: "", timestamp: 0, offset: 0 }
  let committer = author
  for (const line of headers.split("\n")) {
    if (line.startsWith("tree ")) tree = line.slice(5)
    else if (line.startsWith("parent ")) parents.push(line.slice(7))
    else if (line.startsWith("author ")) author = parsePerson(line.slice(7))
    else if (line.startsWith("committer ")) committer = parsePerson(line.slice(10))
  }
  return { oid, tree, parents, author, committer, message }
}

const hex = (bytes: Uint8Array, from: number): string => {
  let out = ""
  for (let i = from; i < from + 20; i++) out += bytes[i]!.toString(16).padStart(2, "0")
  return out
}

const parseTree = (bytes: Uint8Array): Array<TreeEntry> => {
  const entries: Array<TreeEntry> = []
  let i = 0
  while (i < bytes.length) {
    const space = bytes.indexOf(0x20, i)
    const nul = bytes.indexOf(0, space)
    const mode = text(bytes.subarray(i, space)).padStart(6, "0")
    const name = text(bytes.subarray(space + 1, nul))
    entries.push({ name, mode, oid: hex(bytes, nul + 1) })
    i = nul + 21
  }
  return entries
}

/** A missing or unreadable object: the repository is damaged. */
export class MissingObject extends Error {
  readonly oid: string
  constructor(oid: string, cause: unknown) {
    super(`object ${oid} could not be read (${cause instanceof Error ? cause.message : String(cause)})`)
    this.oid = oid
  }
}

/** The largest `packed-refs` read: far beyond any real repository's, and bounded. */
const maxPackedRefs = 1 << 30

const statSignature = async (files: ReadonlyArray<string>): Promise<string> => {
  const parts = await Promise.all(
    files.map((f) =>
      fsp.stat(f).then(
        (s) => `${s.mtimeMs}:${s.size}:${s.ino}`,
        () => "-"
      )
    )
  )
  return parts.join("|")
}

const refDirectories = async (root: string): Promise<Array<string>> => {
  const out: Array<string> = [root]
  for (let i = 0; i < out.length; i++) {
    const entries = await fsp.readdir(out[i]!, { withFileTypes: true }).catch(() => [])
    for (const e of entries) if (e.isDirectory()) out.push(path.join(out[i]!, e.name))
  }
  return out
}

export class RepoStore {
  readonly repo: Repository
  /**
   * The jailed file system isomorphic-git reads through, wrapped once (isomorphic-git wraps a raw one on each
   * call otherwise). Safe: its FileSystem constructor returns an already wrapped instance unchanged, so every
   * API accepts one as `fs`.
   */
  readonly fs: git.FsClient
  /** isomorphic-git's cache (pack indexes, the index file). */
  cache: object = {}
  private fingerprint = ""
  private packed: Map<string, string> | undefined
  private readonly commits = new Lru<string, CommitData>(200_000)
  private readonly trees = new Lru<string, ReadonlyArray<TreeEntry>>(2_000_000, (t) => t.length + 1)
  private readonly blobs = new Lru<string, Uint8Array>(64 * 1024 * 1024, (b) => b.length + 64)
  private mailmapState: { readonly signature: string; readonly map: Mailmap } | undefined

  constructor(repo: Repository) {
    this.repo = repo
    this.fs = new FileSystem(jailedFs(repo.root)) as unknown as git.FsClient
  }

  /** Renews isomorphic-git's cache if HEAD, refs, packs or the index changed. */
  async refresh(): Promise<void> {
    const { gitDir, commonDir } = this.repo
    const dirs = await refDirectories(path.join(commonDir, "refs"))
    const signature = await statSignature([
      path.join(gitDir, "HEAD"),
      path.join(commonDir, "packed-refs"),
      path.join(gitDir, "index"),
      path.join(commonDir, "objects", "pack"),
      ...dirs
    ])
    if (signature !== this.fingerprint) {
      this.fingerprint = signature
      this.cache = {}
      this.packed = undefined
    }
  }

  private async raw(oid: string): Promise<{ readonly type: string; readonly bytes: Uint8Array }> {
    try {
      const r = await git.readObject({
        fs: this.fs,
        gitdir: this.repo.commonDir,
        oid,
        format: "content",
        cache: this.cache
      })
      return { type: r.type, bytes: r.object as Uint8Array }
    } catch (e) {
      throw new MissingObject(oid, e)
    }
  }

  async commit(oid: string): Promise<CommitData> {
    const hit = this.commits.get(oid)
    if (hit !== undefined) return hit
    const { type, bytes } = await this.raw(oid)
    if (type !== "commit") throw new MissingObject(oid, new Error(`expected a commit, found a ${type}`))
    const c = parseCommit(oid, bytes)
    this.commits.set(oid, c)
    return c
  }

  async tree(oid: string): Promise<ReadonlyArray<TreeEntry>> {
    const hit = this.trees.get(oid)
    if (hit !== undefined) return hit
    const { bytes } = await this.raw(oid)
    const t = parseTree(bytes)
    this.trees.set(oid, t)
    return t
  }

  async blob(oid: string): Promise<Uint8Array> {
    const hit = this.blobs.get(oid)
    if (hit !== undefined) return hit
    const { bytes } = await this.raw(oid)
    this.blobs.set(oid, bytes)
    return bytes
  }

  /** The entry at a `/`-separated path of a tree, if any. */
  async entryAt(treeOid: string, filePath: string): Promise<TreeEntry | undefined> {
    if (filePath === "") return { name: "", mode: "040000", oid: treeOid }
    let tree = treeOid
    const parts = filePath.split("/")
    for (let i = 0; i < parts.length; i++) {
      const entries = await this.tree(tree)
      const e = entries.find((x) => x.name === parts[i])
      if (e === undefined) return undefined
      if (i === parts.length - 1) return e
      if (!isTreeMode(e.mode)) return undefined
      tree = e.oid
    }
    return undefined
  }

  // -------------------------------------------------------------------------
  // refs
  // -------------------------------------------------------------------------

  /** A small file of the git directory, read without blocking (threat 45); `undefined` unless a regular file. */
  private gitFile(file: string, maxBytes: number): string | undefined {
    return regularBytes(file, { maxBytes, root: this.repo.root })?.toString("utf8")
  }

  private async packedRefs(): Promise<Map<string, string>> {
    if (this.packed !== undefined) return this.packed
    const map = new Map<string, string>()
    const content = this.gitFile(path.join(this.repo.commonDir, "packed-refs"), maxPackedRefs) ?? ""
    for (const line of content.split("\n")) {
      const m = /^([0-9a-f]{40}) (.+)$/.exec(line)
      if (m !== null) map.set(m[2]!, m[1]!)
    }
    this.packed = map
    return map
  }

  /** Reads a ref (following symbolic refs); `undefined` if it does not exist or is unborn. */
  async readRef(name: string, depth = 0): Promise<string | undefined> {
    if (depth > 5) return undefined
    const perWorktree =
      !name.startsWith("refs/") || name.startsWith("refs/bisect/") || name.startsWith("refs/worktree/")
    const base = perWorktree ? this.repo.gitDir : this.repo.commonDir
    const content = this.gitFile(path.join(base, name), 4096)
    if (content !== undefined) {
      const v = content.trim()
      if (v.startsWith("ref: ")) return this.readRef(v.slice(5).trim(), depth + 1)
      if (/^[0-9a-f]{40}$/.test(v)) return v
      return undefined
    }
    return (await this.packedRefs()).get(name)
  }

  /** HEAD: the branch it names (full ref) and its commit. */
  async head(): Promise<{ readonly ref: string | undefined; readonly oid: string | undefined }> {
    const content = (this.gitFile(path.join(this.repo.gitDir, "HEAD"), 4096) ?? "").trim()
    if (content.startsWith("ref: ")) {
      const ref = content.slice(5).trim()
      return { ref, oid: await this.readRef(ref) }
    }
    return { ref: undefined, oid: /^[0-9a-f]{40}$/.test(content) ? content : undefined }
  }

  private async objectType(oid: string): Promise<string | undefined> {
    try {
      return (await this.raw(oid)).type
    } catch {
      return undefined
    }
  }

  /** Peels tags down to a commit; `undefined` if it ends anywhere else. */
  private async peel(oid: string): Promise<string | undefined> {
    let current = oid
    for (let i = 0; i < 10; i++) {
      const obj = await this.raw(current).catch(() => undefined)
      if (obj === undefined) return undefined
      if (obj.type === "commit") return current
      if (obj.type !== "tag") return undefined
      const m = /^object ([0-9a-f]{40})$/m.exec(text(obj.bytes))
      if (m === null) return undefined
      current = m[1]!
    }
    return undefined
  }

  private async expandHex(prefix: string, rev: string): Promise<string | undefined> {
    let candidates: Array<string>
    try {
      candidates = [
        await git.expandOid({
          fs: this.fs,
          gitdir: this.repo.commonDir,
          oid: prefix.toLowerCase(),
          cache: this.cache
        })
      ]
    } catch (e) {
      const name = (e as { code?: string }).code
      if (name !== "AmbiguousError") return undefined
      const data = (e as { data?: { matches?: Array<string> } }).data
      candidates = data?.matches ?? []
      const committish: Array<string> = []
      for (const c of candidates) {
        const t = await this.objectType(c)
        if (t === "commit" || (t === "tag" && (await this.peel(c)) !== undefined)) committish.push(c)
      }
      if (committish.length === 1) return committish[0]
      throw new UnknownRevision({ revision: rev, reason: "ambiguous" })
    }
    return candidates[0]
  }

  /** Resolves a checked revision to a commit id. */
  async resolve(rev: ParsedRevision): Promise<string> {
    const unknown = () => new UnknownRevision({ revision: rev.text, reason: "unknown" })
    let oid: string | undefined
    const base = rev.base
    if (base === "HEAD" || base === "@") {
      const head = await this.head()
      if (head.oid === undefined) throw new UnknownRevision({ revision: rev.text, reason: "no-commits" })
      oid = head.oid
    } else if (/^[0-9a-f]{40}$/i.test(base) && (await this.objectType(base.toLowerCase())) !== undefined) {
      oid = base.toLowerCase()
    } else {
      const candidates = [
        ...(/^[A-Z_]+$/.test(base) || base.startsWith("refs/") ? [base] : []),
        `refs/${base}`,
        `refs/tags/${base}`,
        `refs/heads/${base}`,
        `refs/remotes/${base}`,
        `refs/remotes/${base}/HEAD`
      ]
      for (const c of candidates) {
        oid = await this.readRef(c)
        if (oid !== undefined) break
      }
      if (oid === undefined && isHex(base)) oid = await this.expandHex(base, rev.text)
    }
    if (oid === undefined) throw unknown()
    let commit = await this.peel(oid)
    if (commit === undefined) throw unknown()
    for (const step of rev.steps) {
      if (step.kind === "~") {
        for (let i = 0; i < step.n; i++) {
          const c = await this.commit(commit)
          const p = c.parents[0]
          if (p === undefined) throw unknown()
          commit = p
        }
      } else if (step.n > 0) {
        const c = await this.commit(commit)
        const p = c.parents[step.n - 1]
        if (p === undefined) throw unknown()
        commit = p
      }
    }
    return commit
  }

  // -------------------------------------------------------------------------
  // .mailmap
  // -------------------------------------------------------------------------

  /** The working tree's `.mailmap` (what git reads for a non-bare repository). */
  async mailmap(): Promise<Mailmap> {
    const file = path.join(this.repo.workTree, ".mailmap")
    const signature = await statSignature([file])
    if (this.mailmapState?.signature === signature) return this.mailmapState.map
    // A link is not read (as git does), a FIFO cannot block, and the file must be inside the root.
    const content =
      regularBytes(file, { maxBytes: 1 << 20, root: this.repo.root, follow: false })?.toString("utf8") ?? ""
    const map = content === "" ? Mailmap.empty : Mailmap.parse(content)
    this.mailmapState = { signature, map }
    return map
  }
}
