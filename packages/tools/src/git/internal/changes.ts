/**
 * Building the `Changes` of a diff the same way in both backends: files in
 * git's order, at most `maxFiles` listed (all counted), and hunks admitted
 * against one byte budget shared by the whole result. A hunk is admitted
 * whole or not at all; the first hunk that does not fit closes the budget,
 * so every later hunk is left out too and each file that lost hunks is marked
 * `truncated`. A hunk being read is kept only while it can still fit, so a
 * huge diff never sits in memory. Files whose name the workspace blocks
 * keep their statistics but never their lines.
 *
 * @internal
 */
import type * as Results from "./results.ts"
import type { DiffShape } from "./model.ts"

export const utf8Length = (s: string): number => {
  let n = 0
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i)
    if (c < 0x80) n += 1
    else if (c < 0x800) n += 2
    else if (c >= 0xd800 && c <= 0xdbff) {
      n += 4
      i++
    } else n += 3
  }
  return n
}

/** The cost of a line against the budget: its UTF-8 bytes and its line feed. */
export const lineCost = (line: Results.Line): number => utf8Length(line.content) + 1

export class Budget {
  used = 0
  closed = false
  readonly max: number
  constructor(max: number) {
    this.max = max
  }
  get remaining(): number {
    return this.closed ? -1 : this.max - this.used
  }
  /** Spends `cost` if it fits; otherwise closes the budget. */
  take(cost: number): boolean {
    if (this.closed || this.used + cost > this.max) {
      this.closed = true
      return false
    }
    this.used += cost
    return true
  }
}

export interface FileHeader {
  readonly status: Results.FileStatus
  readonly path: string
  readonly oldPath?: string | undefined
  /** Six octal digits; `000000` when the side does not exist. */
  readonly oldMode: string
  readonly newMode: string
}

const NO_MODE = "000000"

/** One file being filled with hunks. */
export class FileAcc {
  readonly header: FileHeader
  readonly listed: boolean
  readonly redacted: boolean
  binary = false
  additions = 0
  deletions = 0
  truncated = false
  readonly hunks: Array<Results.Hunk> = []
  constructor(header: FileHeader, listed: boolean, redacted: boolean) {
    this.header = header
    this.listed = listed
    this.redacted = redacted
  }
  /** Whether hunks of this file are kept at all. */
  get wantsHunks(): boolean {
    return this.listed && !this.redacted && !this.binary
  }
  toJSON(): Results.FileDiff {
    const h = this.header
    const modeChanged = h.oldMode !== h.newMode
    return {
      path: h.path,
      ...(h.oldPath === undefined ? {} : { oldPath: h.oldPath }),
      status: h.status,
      binary: this.binary,
      additions: this.additions,
      deletions: this.deletions,
      ...(modeChanged && h.oldMode !== NO_MODE ? { oldMode: h.oldMode } : {}),
      ...(modeChanged && h.newMode !== NO_MODE ? { newMode: h.newMode } : {}),
      hunks: this.hunks,
      ...(this.truncated ? { truncated: true as const } : {}),
      ...(this.redacted ? { redacted: true as const } : {})
    }
  }
}

/** A hunk being read line by line: lines are kept only while the hunk can still fit the budget. */
export class HunkAcc {
  readonly oldStart: number
  readonly oldLines: number
  readonly newStart: number
  readonly newLines: number
  readonly lines: Array<Results.Line> = []
  cost = 0
  dropped: boolean
  private readonly budget: Budget
  constructor(
    header: { oldStart: number; oldLines: number; newStart: number; newLines: number },
    budget: Budget,
    keep: boolean
  ) {
    this.oldStart = header.oldStart
    this.oldLines = header.oldLines
    this.newStart = header.newStart
    this.newLines = header.newLines
    this.budget = budget
    this.dropped = !keep || budget.closed
  }
  push(line: Results.Line): void {
    this.cost += lineCost(line)
    if (this.dropped) return
    if (this.cost > this.budget.remaining) {
      this.dropped = true
      this.lines.length = 0
      return
    }
    this.lines.push(line)
  }
  /** Marks the last line pushed as having no line feed at the end of its file. */
  markNoNewline(): void {
    const last = this.lines[this.lines.length - 1]
    if (last !== undefined && !this.dropped) this.lines[this.lines.length - 1] = { ...last, noNewlineAtEnd: true }
  }
}

/** Closes a hunk into its file: admitted against the budget or left out. */
export const admitHunk = (file: FileAcc, hunk: HunkAcc, budget: Budget): void => {
  if (!file.wantsHunks) return
  if (!hunk.dropped && budget.take(hunk.cost)) {
    file.hunks.push({
      oldStart: hunk.oldStart,
      oldLines: hunk.oldLines,
      newStart: hunk.newStart,
      newLines: hunk.newLines,
      lines: hunk.lines
    })
  } else {
    budget.closed = true
    file.truncated = true
  }
}

/** Admits hunks computed whole (the isomorphic backend). */
export const admitHunks = (file: FileAcc, hunks: ReadonlyArray<Results.Hunk>, budget: Budget): void => {
  if (!file.wantsHunks) return
  for (const h of hunks) {
    let cost = 0
    for (const l of h.lines) cost += lineCost(l)
    if (budget.take(cost)) file.hunks.push(h)
    else {
      file.truncated = true
    }
  }
}

/** The files of one diff. */
export class ChangesAcc {
  readonly files: Array<FileAcc> = []
  readonly shape: DiffShape
  constructor(shape: DiffShape) {
    this.shape = shape
  }
  add(header: FileHeader): FileAcc {
    const redacted =
      this.shape.redact(header.path) || (header.oldPath !== undefined && this.shape.redact(header.oldPath))
    const file = new FileAcc(header, this.files.length < this.shape.maxFiles, redacted)
    this.files.push(file)
    return file
  }
  toJSON(): Results.Changes {
    let additions = 0
    let deletions = 0
    let truncated = false
    const listed: Array<Results.FileDiff> = []
    for (const f of this.files) {
      additions += f.additions
      deletions += f.deletions
      if (f.listed) {
        listed.push(f.toJSON())
        if (f.truncated) truncated = true
      }
    }
    const omittedFiles = this.files.length - listed.length
    return {
      files: listed,
      stats: { filesChanged: this.files.length, additions, deletions },
      truncated: truncated || omittedFiles > 0,
      omittedFiles
    }
  }
}
