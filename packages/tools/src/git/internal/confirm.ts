/**
 * Checking git's working-tree results against the jail (threat 44). git
 * reads the working tree by name, so a directory swapped for a link while it
 * runs leads it out of the root: the lines and names it reports from the
 * working tree are only candidates. Before they are shown, each is found
 * again below the working tree without following any link (`Beneath`): an
 * untracked name must still be there, and every line a diff shows from the
 * working tree must be that file's line at that number (a link's own text for
 * a link). A name that is not there is left out; a line that differs fails
 * the call (`ConcurrentChange`, retryable), so nothing git read elsewhere is
 * ever shown.
 *
 * @internal
 */
import { closeSync, existsSync, readSync } from "node:fs"
import { Beneath } from "../../internal/workspace/beneath.ts"
import { ConcurrentChange } from "../../internal/workspace/errors.ts"
import type * as Results from "./results.ts"
import { text } from "./tokens.ts"

const procFd = existsSync("/proc/self/fd")

const chunkSize = 1 << 16

/** The lines of an open file wanted by number (1-based), read in chunks, so memory stays bounded by the lines kept. */
const linesOf = (fd: number, wanted: ReadonlySet<number>): Map<number, string> => {
  const out = new Map<number, string>()
  const last = Math.max(0, ...wanted)
  const buffer = Buffer.allocUnsafe(chunkSize)
  let pending: Array<Buffer> = []
  let line = 1
  while (line <= last) {
    const n = readSync(fd, buffer, 0, chunkSize, null)
    if (n === 0) break
    const chunk = buffer.subarray(0, n)
    let at = 0
    for (let nl = chunk.indexOf(10, at); nl !== -1; nl = chunk.indexOf(10, at)) {
      if (wanted.has(line)) out.set(line, text(Buffer.concat([...pending, chunk.subarray(at, nl)])))
      pending = []
      at = nl + 1
      line++
      if (line > last) return out
    }
    if (wanted.has(line)) pending.push(Buffer.from(chunk.subarray(at)))
  }
  if (line <= last && wanted.has(line) && pending.length > 0) out.set(line, text(Buffer.concat(pending)))
  return out
}

/** The lines of the working-tree entry at `path` wanted, as git shows them; `undefined` if it is not there below the root. */
const entryLines = (beneath: Beneath, path: string, wanted: ReadonlySet<number>): Map<number, string> | undefined => {
  const st = beneath.lstat(path)
  if (st === undefined) return undefined
  if (st.isSymbolicLink()) {
    const target = beneath.readlink(path)
    return target === undefined ? undefined : new Map([[1, text(target)]])
  }
  const opened = beneath.open(path)
  if (opened === undefined) return undefined
  try {
    return linesOf(opened.fd, wanted)
  } finally {
    closeSync(opened.fd)
  }
}

const squeeze = (s: string) => s.replace(/\s+/g, "")

/**
 * The first file of a working-tree diff whose shown lines are not the file's
 * own (read below `workTree` without links), or `undefined` when all are.
 */
export const confirmDiff = (
  workTree: string,
  changes: Results.Changes,
  ignoreWhitespace: boolean
): ConcurrentChange | undefined => {
  const beneath = new Beneath(workTree, procFd)
  try {
    for (const file of changes.files) {
      const shown = file.hunks.flatMap((h) => h.lines).filter((l) => l.type !== "delete" && l.newLine !== undefined)
      if (shown.length === 0) continue
      const actual = entryLines(beneath, file.path, new Set(shown.map((l) => l.newLine!)))
      for (const l of shown) {
        const line = actual?.get(l.newLine!)
        // Context lines may come from the other side under -w: equal but for whitespace.
        const same =
          line !== undefined &&
          (line === l.content || (ignoreWhitespace && l.type === "context" && squeeze(line) === squeeze(l.content)))
        if (!same) return new ConcurrentChange({ path: file.path, retryable: true })
      }
    }
    return undefined
  } finally {
    beneath.close()
  }
}

/** The untracked names still there below `workTree` (reached without links); the others are left out. */
export const confirmUntracked = (workTree: string, untracked: ReadonlyArray<string>): Array<string> => {
  if (untracked.length === 0) return []
  const beneath = new Beneath(workTree, procFd)
  try {
    return untracked.filter((p) => beneath.lstat(p) !== undefined)
  } finally {
    beneath.close()
  }
}
