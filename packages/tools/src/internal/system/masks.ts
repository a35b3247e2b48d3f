/**
 * What the sandbox hides or freezes inside the workspace, found by walking it
 * with the workspace's own blocked-name policy before each run: `.git`
 * (anywhere) is mounted read-only, so a command can read history but cannot
 * plant a hook, a config entry that runs a program, or an alternate object
 * store that the host's git would later follow; `.ugent` (the server's own
 * state) is hidden behind an empty directory; every other blocked entry
 * (`.env*`, `*secret*`, keys, credential files) is masked: a file by an empty
 * read-only file, a directory by an empty read-only directory. A regular file
 * that is a hard link to a masked file is masked too. Symbolic links are not
 * followed (their targets are either outside, where nothing is mounted, or
 * inside, where the walk meets them by their own name). `node_modules` is not
 * walked: third-party code, and the bulk of most trees.
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

/** Walks `root` and sorts every blocked entry into what to mount over it. */
export const find = (root: string, policy: MaskPolicy): Masks => {
  const readOnly: Array<string> = []
  const files: Array<string> = []
  const dirs: Array<string> = []
  const linked: Array<{ dev: number; ino: number }> = []

  const walk = (dir: string, relative: string) => {
    let entries: Array<fs.Dirent>
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true })
    } catch {
      return // Unreadable or gone: nothing in it can be read by the sandbox either.
    }
    for (const entry of entries) {
      if (entry.isSymbolicLink()) continue
      const full = path.join(dir, entry.name)
      const rel = relative === "" ? entry.name : `${relative}/${entry.name}`
      const rule = policy.blockedBy(rel)
      if (rule !== undefined) {
        const lower = entry.name.toLowerCase()
        if (readOnlyNames.has(lower)) readOnly.push(full)
        else if (entry.isDirectory()) dirs.push(full)
        else if (hiddenNames.has(lower)) files.push(full)
        else if (entry.isFile()) {
          files.push(full)
          try {
            const st = fs.lstatSync(full)
            if (st.nlink > 1) linked.push({ dev: st.dev, ino: st.ino })
          } catch {
            // Gone since the listing.
          }
        } else files.push(full)
        continue
      }
      if (entry.isDirectory() && !policy.skip.has(entry.name)) walk(full, rel)
    }
  }
  walk(root, "")

  if (linked.length > 0) {
    // A second name for a masked file reads its bytes: find and mask every other link.
    const masked = new Set(files)
    const wanted = new Set(linked.map((l) => `${l.dev}:${l.ino}`))
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
          if (!policy.skip.has(entry.name) && !dirs.includes(full) && !readOnly.includes(full)) again(full)
        } else if (entry.isFile() && !masked.has(full)) {
          try {
            const st = fs.lstatSync(full)
            if (st.nlink > 1 && wanted.has(`${st.dev}:${st.ino}`)) files.push(full)
          } catch {
            // Gone since the listing.
          }
        }
      }
    }
    again(root)
  }
  return { readOnly, files, dirs }
}
