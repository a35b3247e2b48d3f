/**
 * What the sandbox hides or freezes inside the workspace, found by walking it
 * with the workspace's own blocked-name policy before each run: `.git`
 * (anywhere) is mounted read-only, so a command can read history but cannot
 * plant a hook, a config entry that runs a program, or an alternate object
 * store that the host's git would later follow; `.ugent` (the server's own
 * state) is hidden behind an empty directory; every other blocked entry
 * (`.env*` but not its templates, keys, credential stores, and the names a recipe adds) is masked: a file by an empty
 * read-only file, a directory by an empty read-only directory. A regular file
 * that is a hard link to a masked file is masked too. Symbolic links are not
 * followed (their targets are either outside, where nothing is mounted, or
 * inside, where the walk meets them by their own name). `node_modules` is not
 * walked: third-party code, and the bulk of most trees. A {@link Walker}
 * remembers what each directory held, so a later walk reads again only the
 * directories that changed.
 *
 * @internal
 */
import * as fs from "node:fs"
import * as path from "node:path"

export interface Masks {
  /** Mounted read-only at the same path. */
  readonly readOnly: ReadonlyArray<string>
  /** Files replaced by an empty read-only file. */
  readonly files: ReadonlyArray<string>
  /** Directories replaced by an empty read-only directory. */
  readonly dirs: ReadonlyArray<string>
}

export interface MaskPolicy {
  /** The blocked rule a `/`-separated relative path matches. */
  readonly blockedBy: (relative: string) => string | undefined
  /** Directory names never descended into. */
  readonly skip: ReadonlySet<string>
}

const readOnlyNames = new Set([".git"])
const hiddenNames = new Set([".ugent"])

/** What one directory holds that matters: its blocked entries, and the directories to descend into. */
interface Listing {
  readonly key: string
  readonly readOnly: ReadonlyArray<string>
  readonly files: ReadonlyArray<string>
  readonly dirs: ReadonlyArray<string>
  readonly linked: ReadonlyArray<string>
  readonly descend: ReadonlyArray<readonly [full: string, relative: string]>
}

/**
 * A directory's listing is trusted on the next walk only when its change
 * time is this much older than the walk that read it: time stamps are coarse
 * (a clock tick), so an entry added in the same tick as the reading would
 * not change them.
 */
const settledNanos = 2_000_000_000n

/**
 * Walks a workspace for masks, remembering each directory's listing under
 * its device, inode and modification time: an entry added, removed or
 * renamed changes the time of the directory that holds it, so a later walk
 * re-reads only the directories that changed and stats the rest (a stat per
 * directory instead of a look at every entry).
 */
export class Walker {
  private cache = new Map<string, Listing>()
  readonly policy: MaskPolicy

  constructor(policy: MaskPolicy) {
    this.policy = policy
  }

  /** Every blocked entry under `root`, sorted into what to mount over it. */
  find(root: string): Masks {
    const readOnly: Array<string> = []
    const files: Array<string> = []
    const dirs: Array<string> = []
    const linked: Array<string> = []
    const next = new Map<string, Listing>()
    const visit = (dir: string, relative: string) => {
      let st: fs.BigIntStats
      try {
        st = fs.lstatSync(dir, { bigint: true })
      } catch {
        return // Gone: nothing in it can be read by the sandbox either.
      }
      const key = `${st.dev}:${st.ino}:${st.mtimeNs}:${st.ctimeNs}`
      let listing = this.cache.get(dir)
      if (listing === undefined || listing.key !== key) listing = this.read(dir, relative, key)
      if (listing === undefined) return
      if (BigInt(Date.now()) * 1_000_000n - st.mtimeNs > settledNanos) {
        next.set(dir, listing)
      }
      readOnly.push(...listing.readOnly)
      files.push(...listing.files)
      dirs.push(...listing.dirs)
      linked.push(...listing.linked)
      for (const [full, rel] of listing.descend) visit(full, rel)
    }
    visit(root, "")
    this.cache = next
    if (linked.length > 0) files.push(...hardLinksTo(root, linked, files, [...dirs, ...readOnly], this.policy))
    return { readOnly, files, dirs }
  }

  private read(dir: string, relative: string, key: string): Listing | undefined {
    let entries: Array<fs.Dirent>
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true })
    } catch {
      return undefined
    }
    const listing = {
      key,
      readOnly: [] as Array<string>,
      files: [] as Array<string>,
      dirs: [] as Array<string>,
      linked: [] as Array<string>,
      descend: [] as Array<readonly [string, string]>
    }
    for (const entry of entries) {
      if (entry.isSymbolicLink()) continue
      const full = path.join(dir, entry.name)
      const rel = relative === "" ? entry.name : `${relative}/${entry.name}`
      const rule = this.policy.blockedBy(rel)
      if (rule !== undefined) {
        const lower = entry.name.toLowerCase()
        if (readOnlyNames.has(lower)) listing.readOnly.push(full)
        else if (entry.isDirectory()) listing.dirs.push(full)
        else {
          listing.files.push(full)
          if (entry.isFile() && !hiddenNames.has(lower)) {
            try {
              if (fs.lstatSync(full).nlink > 1) listing.linked.push(full)
            } catch {
              // Gone since the listing.
            }
          }
        }
        continue
      }
      if (entry.isDirectory() && !this.policy.skip.has(entry.name)) listing.descend.push([full, rel])
    }
    return listing
  }
}

/** Every other name of the masked files that have several (a second name reads the same bytes). */
const hardLinksTo = (
  root: string,
  linked: ReadonlyArray<string>,
  masked: ReadonlyArray<string>,
  hidden: ReadonlyArray<string>,
  policy: MaskPolicy
): Array<string> => {
  const wanted = new Set<string>()
  for (const file of linked) {
    try {
      const st = fs.lstatSync(file)
      wanted.add(`${st.dev}:${st.ino}`)
    } catch {
      // Gone.
    }
  }
  const already = new Set(masked)
  const skip = new Set(hidden)
  const out: Array<string> = []
  const again = (dir: string) => {
    let entries: Array<fs.Dirent>
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true })
    } catch {
      return
    }
    for (const entry of entries) {
      const full = path.join(dir, entry.name)
      if (entry.isDirectory()) {
        if (!policy.skip.has(entry.name) && !skip.has(full)) again(full)
      } else if (entry.isFile() && !already.has(full)) {
        try {
          const st = fs.lstatSync(full)
          if (st.nlink > 1 && wanted.has(`${st.dev}:${st.ino}`)) out.push(full)
        } catch {
          // Gone since the listing.
        }
      }
    }
  }
  again(root)
  return out
}

/** Walks `root` once, without remembering anything. */
export const find = (root: string, policy: MaskPolicy): Masks => new Walker(policy).find(root)
