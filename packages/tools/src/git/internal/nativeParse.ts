/**
 * Parsers for the machine-readable output of the `git` binary: status
 * `--porcelain=v2 -z`, log records in a `--format` of unit and record
 * separators followed by `--raw`/`--numstat` entries (`-z`) and the patch,
 * and blame `--porcelain`. Paths always come from the NUL-separated
 * sections, never from the quoted patch headers; numstat records are
 * matched to the raw entries by path, patch sections to the files with a
 * numstat record by order, and hunk lines are read by the counts of their
 * `@@` header, so no content can be mistaken for structure.
 *
 * @internal
 */
import { admitHunk, type Budget, type ChangesAcc, type FileAcc, type FileHeader, HunkAcc } from "./changes.ts"
import { isoDate, messageOf, offsetOf, shortHash, subjectOf, ZERO_HASH } from "./format.ts"
import { type Got, LF, NUL, type Parser, PEEK, text, type Want } from "./tokens.ts"
import type * as Results from "./results.ts"

const RS = 0x1e
const US = "\x1f"

const statusOf = (letter: string): Results.FileStatus => {
  switch (letter) {
    case "A":
      return "added"
    case "D":
      return "deleted"
    case "R":
      return "renamed"
    case "T":
      return "typechange"
    default:
      return "modified"
  }
}

// ---------------------------------------------------------------------------
// raw + numstat + patch
// ---------------------------------------------------------------------------

interface Slot {
  readonly file: FileAcc
  sections: number
}

/** A `--raw` entry waiting for its `--numstat` record. */
interface Entry {
  readonly header: FileHeader
  readonly sections: number
  /** A combined entry (`::`, an unmerged path in the working tree), which has no numstat record of its own. */
  readonly combined: boolean
  numstat: { readonly binary: boolean; readonly additions: number; readonly deletions: number } | undefined
}

/** What follows the entries of one diff. */
type After = { readonly kind: "end" } | { readonly kind: "header"; readonly token: Uint8Array }

const startsWith = (bytes: Uint8Array, prefix: string): boolean => {
  if (bytes.length < prefix.length) return false
  for (let i = 0; i < prefix.length; i++) if (bytes[i] !== prefix.charCodeAt(i)) return false
  return true
}

const isDigit = (b: number | undefined) => b !== undefined && b >= 48 && b <= 57

/**
 * The files of one diff, in git's order, with their statistics; and the slots
 * its patch sections fill, in order. A `--numstat` record is matched to its
 * `--raw` entry by path: git lists a file whose stat data is stale but whose
 * content is unchanged in `--raw` (it did not refresh the index, and must not
 * write it), with no numstat record and no patch; such a file did not change
 * and is left out, so no later file's numbers or hunks are given to it.
 */
const settle = (acc: ChangesAcc, entries: ReadonlyArray<Entry>): Array<Slot> => {
  const slots: Array<Slot> = []
  for (const entry of entries) {
    if (entry.numstat === undefined && !entry.combined) continue
    const file = acc.add(entry.header)
    if (entry.numstat === undefined) continue
    if (entry.numstat.binary) file.binary = true
    else {
      file.additions = entry.numstat.additions
      file.deletions = entry.numstat.deletions
    }
    slots.push({ file, sections: entry.sections })
  }
  return slots
}

/**
 * Reads the `--raw` and `--numstat` entries of one diff and, when `-p` was
 * given, its patch, into `acc`. Starts with the first token after a commit
 * header (or at the beginning of a `git diff` output).
 */
export function* readDiff(acc: ChangesAcc, budget: Budget, first: Got): Generator<Want, After, Got> {
  const entries: Array<Entry> = []
  /** Raw entries not yet given a numstat record, by path (a path can appear once per diff). */
  const waiting = new Map<string, Entry>()
  let tok = first
  for (;;) {
    if (tok === null || typeof tok === "number") {
      settle(acc, entries)
      return { kind: "end" }
    }
    let t = tok
    if (t[0] === LF) t = t.subarray(1)
    if (t.length === 0) break // the empty token between the entries and the patch
    if (t[0] === RS) {
      settle(acc, entries)
      return { kind: "header", token: t }
    }
    if (t[0] === 0x3a) {
      // ":<old mode> <new mode> <old oid> <new oid> <status>"
      const fields = text(t.subarray(1)).split(" ")
      const letter = (fields[4] ?? "M").charAt(0)
      const p1 = yield NUL
      const first = p1 instanceof Uint8Array ? text(p1) : ""
      let path = first
      let oldPath: string | undefined
      if (letter === "R" || letter === "C") {
        const p2 = yield NUL
        oldPath = first
        path = p2 instanceof Uint8Array ? text(p2) : ""
      }
      const entry: Entry = {
        header: {
          status: letter === "C" ? "added" : statusOf(letter),
          path,
          oldPath: letter === "R" ? oldPath : undefined,
          oldMode: fields[0] ?? "000000",
          newMode: fields[1] ?? "000000"
        },
        sections: letter === "T" ? 2 : 1,
        combined: t[1] === 0x3a,
        numstat: undefined
      }
      entries.push(entry)
      if (!waiting.has(path)) waiting.set(path, entry)
    } else if (isDigit(t[0]) || t[0] === 0x2d) {
      // "<added>\t<deleted>\t<path>", or for a rename or copy "<added>\t<deleted>\t" NUL <old> NUL <new>
      const s = text(t)
      const tab1 = s.indexOf("\t")
      const tab2 = s.indexOf("\t", tab1 + 1)
      let path = s.slice(tab2 + 1)
      if (tab2 === s.length - 1) {
        yield NUL
        const p2 = yield NUL
        path = p2 instanceof Uint8Array ? text(p2) : ""
      }
      const entry = waiting.get(path)
      if (entry !== undefined) {
        waiting.delete(path)
        const a = s.slice(0, tab1)
        const d = s.slice(tab1 + 1, tab2)
        entry.numstat =
          a === "-" || d === "-"
            ? { binary: true, additions: 0, deletions: 0 }
            : { binary: false, additions: Number(a), deletions: Number(d) }
      }
    }
    tok = yield NUL
  }
  return yield* readPatch(settle(acc, entries), budget)
}

const HUNK = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/

function* readPatch(slots: ReadonlyArray<Slot>, budget: Budget): Generator<Want, After, Got> {
  let index = -1
  let current: Slot | undefined
  for (;;) {
    const peek = yield PEEK
    if (peek === -1 || peek === null) return { kind: "end" }
    if (peek === RS) {
      const header = yield NUL
      return header instanceof Uint8Array ? { kind: "header", token: header } : { kind: "end" }
    }
    const got = yield LF
    if (!(got instanceof Uint8Array)) return { kind: "end" }
    const line = got
    if (startsWith(line, "diff --git ") || startsWith(line, "diff --cc ") || startsWith(line, "* Unmerged path ")) {
      if (current === undefined || current.sections <= 1) {
        index++
        current = slots[index]
      } else current.sections--
      continue
    }
    if (line[0] !== 0x40 /* @ */ || current === undefined) continue
    const m = HUNK.exec(text(line))
    if (m === null) continue
    const file = current.file
    const oldLines = m[2] === undefined ? 1 : Number(m[2])
    const newLines = m[4] === undefined ? 1 : Number(m[4])
    const hunk = new HunkAcc(
      { oldStart: Number(m[1]), oldLines, newStart: Number(m[3]), newLines },
      budget,
      file.wantsHunks
    )
    let oldNo = Number(m[1])
    let newNo = Number(m[3])
    let oldLeft = oldLines
    let newLeft = newLines
    while (oldLeft > 0 || newLeft > 0) {
      const l = yield LF
      if (!(l instanceof Uint8Array)) break
      const kind = l[0]
      const content = text(l.subarray(1))
      if (kind === 0x20) {
        hunk.push({ type: "context", content, oldLine: oldNo++, newLine: newNo++ })
        oldLeft--
        newLeft--
      } else if (kind === 0x2d) {
        hunk.push({ type: "delete", content, oldLine: oldNo++ })
        oldLeft--
      } else if (kind === 0x2b) {
        hunk.push({ type: "add", content, newLine: newNo++ })
        newLeft--
      } else if (kind === 0x5c) hunk.markNoNewline()
    }
    const after = yield PEEK
    if (after === 0x5c) {
      yield LF
      hunk.markNoNewline()
    }
    admitHunk(file, hunk, budget)
  }
}

/** Parses the output of `git diff --raw --numstat -p -z`. */
export function* diffParser(acc: ChangesAcc, budget: Budget): Parser<void> {
  const first = yield NUL
  yield* readDiff(acc, budget, first)
}

// ---------------------------------------------------------------------------
// log
// ---------------------------------------------------------------------------

/** The `--format` of a log record: fields separated by US, the message last, ended by US. */
export const LOG_FORMAT = "--format=%x1e%H%x1f%P%x1f%aN%x1f%aE%x1f%aI%x1f%cN%x1f%cI%x1f%B%x1f"

export interface LogRecord {
  readonly commit: Omit<Results.Commit, "filesChanged" | "stats" | "diff">
  readonly changes: ChangesAcc
}

const parseHeader = (token: Uint8Array): LogRecord["commit"] => {
  const s = text(token.subarray(1))
  const fields: Array<string> = []
  let from = 0
  for (let i = 0; i < 7; i++) {
    const at = s.indexOf(US, from)
    fields.push(s.slice(from, at))
    from = at + 1
  }
  const raw = s.slice(from, s.endsWith(US) ? s.length - 1 : s.length)
  const hash = fields[0]!
  return {
    hash,
    shortHash: shortHash(hash),
    parents: fields[1] === "" ? [] : fields[1]!.split(" "),
    author: fields[2]!,
    email: fields[3]!,
    date: fields[4]!,
    committer: fields[5]!,
    committerDate: fields[6]!,
    subject: subjectOf(raw),
    message: messageOf(raw)
  }
}

/** Parses log records with their entries (and patches); `makeAcc` gives each commit its accumulator. */
export function* logParser(makeAcc: () => ChangesAcc, budget: Budget): Parser<Array<LogRecord>> {
  const records: Array<LogRecord> = []
  let tok: Got = yield NUL
  while (tok instanceof Uint8Array) {
    let header = tok
    if (header[0] === LF) header = header.subarray(1)
    if (header[0] !== RS) {
      tok = yield NUL
      continue
    }
    const changes = makeAcc()
    records.push({ commit: parseHeader(header), changes })
    const after = yield* readDiff(changes, budget, yield NUL)
    if (after.kind === "end") break
    tok = after.token
  }
  return records
}

// ---------------------------------------------------------------------------
// status --porcelain=v2
// ---------------------------------------------------------------------------

interface StatusListsNative {
  readonly branch: string | null
  readonly head: string | null
  readonly staged: Array<Results.Change>
  readonly unstaged: Array<Results.Change>
  readonly untracked: Array<string>
  readonly conflicted: Array<string>
}

const xyStatus = (c: string, modes: { readonly from: string; readonly to: string }): Results.FileStatus | undefined => {
  switch (c) {
    case "M":
      return "modified"
    case "A":
      return "added"
    case "D":
      return "deleted"
    case "R":
      return "renamed"
    case "C":
      return "added"
    case "T":
      return "typechange"
    default:
      return modes.from === modes.to ? undefined : "modified"
  }
}

export const parseStatus = (bytes: Uint8Array): StatusListsNative => {
  const tokens = text(bytes).split("\0")
  const out: StatusListsNative = { branch: null, head: null, staged: [], unstaged: [], untracked: [], conflicted: [] }
  let branch: string | null = null
  let head: string | null = null
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]!
    if (t === "") continue
    if (t.startsWith("# branch.oid ")) {
      const v = t.slice("# branch.oid ".length)
      head = v === "(initial)" ? null : v
    } else if (t.startsWith("# branch.head ")) {
      const v = t.slice("# branch.head ".length)
      branch = v === "(detached)" ? null : v
    } else if (t.startsWith("1 ") || t.startsWith("2 ")) {
      const ordinary = t.startsWith("1 ")
      const parts = t.split(" ")
      const count = ordinary ? 8 : 9
      const path = parts.slice(count).join(" ")
      const xy = parts[1]!
      const [mH, mI, mW] = [parts[3]!, parts[4]!, parts[5]!]
      const x = xy[0]!
      const y = xy[1]!
      if (x !== ".") {
        const oldPath = ordinary ? undefined : tokens[++i]
        out.staged.push({
          path,
          status: xyStatus(x, { from: mH, to: mI }) ?? "modified",
          ...(x === "R" && oldPath !== undefined ? { oldPath } : {})
        })
      } else if (!ordinary) i++
      if (y !== ".") out.unstaged.push({ path, status: xyStatus(y, { from: mI, to: mW }) ?? "modified" })
    } else if (t.startsWith("u ")) {
      out.conflicted.push(t.split(" ").slice(10).join(" "))
    } else if (t.startsWith("? ")) {
      out.untracked.push(t.slice(2))
    }
  }
  return { ...out, branch, head }
}

// ---------------------------------------------------------------------------
// blame --porcelain
// ---------------------------------------------------------------------------

interface BlameInfo {
  author: string
  email: string
  time: number
  tz: string
  summary: string
}

const ESCAPES: Record<string, number> = { a: 7, b: 8, t: 9, n: 10, v: 11, f: 12, r: 13, '"': 34, "\\": 92 }

/** Undoes git's C-style quoting of a path (`"a\tb"`, octal escapes for bytes). */
export const unquote = (s: string): string => {
  if (!(s.length >= 2 && s.startsWith('"') && s.endsWith('"'))) return s
  const bytes: Array<number> = []
  const body = s.slice(1, -1)
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!
    if (c !== "\\") {
      for (const b of new TextEncoder().encode(c)) bytes.push(b)
      continue
    }
    const next = body[i + 1] ?? ""
    if (/[0-7]/.test(next)) {
      bytes.push(Number.parseInt(body.slice(i + 1, i + 4), 8))
      i += 3
    } else {
      bytes.push(ESCAPES[next] ?? next.charCodeAt(0))
      i += 1
    }
  }
  return text(Uint8Array.from(bytes))
}

export const parseBlame = (bytes: Uint8Array): Array<Results.BlameLine> => {
  const lines = text(bytes).split("\n")
  const infos = new Map<string, BlameInfo>()
  const filenames = new Map<string, string>()
  const out: Array<Results.BlameLine> = []
  let i = 0
  while (i < lines.length) {
    const head = lines[i]!
    i++
    if (head === "") continue
    const [hash = "", orig = "0", final = "0"] = head.split(" ")
    const info = infos.get(hash) ?? { author: "", email: "", time: 0, tz: "+0000", summary: "" }
    infos.set(hash, info)
    let filename = filenames.get(hash) ?? ""
    while (i < lines.length && !lines[i]!.startsWith("\t")) {
      const l = lines[i]!
      i++
      const sp = l.indexOf(" ")
      const key = sp === -1 ? l : l.slice(0, sp)
      const value = sp === -1 ? "" : l.slice(sp + 1)
      if (key === "author") info.author = value
      else if (key === "author-mail") info.email = value.replace(/^<|>$/g, "")
      else if (key === "author-time") info.time = Number(value)
      else if (key === "author-tz") info.tz = value
      else if (key === "summary") info.summary = value
      else if (key === "filename") {
        filename = unquote(value)
        filenames.set(hash, filename)
      }
    }
    const content = (lines[i] ?? "\t").slice(1)
    i++
    out.push({
      line: Number(final),
      originalLine: Number(orig),
      originalPath: filename,
      text: content,
      commit:
        hash === ZERO_HASH
          ? null
          : {
              hash,
              shortHash: shortHash(hash),
              author: info.author,
              email: info.email,
              date: isoDate(info.time, offsetOf(info.tz)),
              message: info.summary
            }
    })
  }
  return out
}
