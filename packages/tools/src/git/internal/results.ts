/**
 * The result schemas of the git tools, in one module that both the tools and
 * the backends import (so neither imports the other). Each tool module
 * re-exports its own under its public name (`GitDiff.Changes`,
 * `GitLog.Commit`, `GitBlame.Output`, …), with the documentation.
 *
 * @internal
 */
import { Schema } from "effect"

/** Diff.FileStatus */
export const FileStatus = Schema.Literals(["added", "modified", "deleted", "renamed", "typechange"])

export type FileStatus = typeof FileStatus.Type

/** Diff.Line */
export const Line = Schema.Struct({
  type: Schema.Literals(["context", "add", "delete"]),
  content: Schema.String,
  oldLine: Schema.optionalKey(Schema.Int),
  newLine: Schema.optionalKey(Schema.Int),
  noNewlineAtEnd: Schema.optionalKey(Schema.Literal(true))
})

export type Line = typeof Line.Type

/** Diff.Hunk */
export const Hunk = Schema.Struct({
  oldStart: Schema.Int,
  oldLines: Schema.Int,
  newStart: Schema.Int,
  newLines: Schema.Int,
  lines: Schema.Array(Line)
})

export type Hunk = typeof Hunk.Type

/** Diff.FileDiff */
export const FileDiff = Schema.Struct({
  path: Schema.String,
  oldPath: Schema.optionalKey(Schema.String),
  status: FileStatus,
  binary: Schema.Boolean,
  additions: Schema.Int,
  deletions: Schema.Int,
  oldMode: Schema.optionalKey(Schema.String),
  newMode: Schema.optionalKey(Schema.String),
  hunks: Schema.Array(Hunk),
  truncated: Schema.optionalKey(Schema.Literal(true)),
  redacted: Schema.optionalKey(Schema.Literal(true))
})

export type FileDiff = typeof FileDiff.Type

/** Diff.Stats */
export const Stats = Schema.Struct({
  filesChanged: Schema.Int,
  additions: Schema.Int,
  deletions: Schema.Int
})

export type Stats = typeof Stats.Type

/** Diff.Changes */
export const Changes = Schema.Struct({
  files: Schema.Array(FileDiff),
  stats: Stats,
  /** Some hunks or files were left out (see `maxDiffSize` and `maxFiles`). */
  truncated: Schema.Boolean,
  /** Files counted in `stats` but not listed, because of `maxFiles`. */
  omittedFiles: Schema.Int
})

export type Changes = typeof Changes.Type

/** Diff.Output */
export const DiffOutput = Schema.Struct({
  /** The revision compared from, as given (`"HEAD"` by default), or `null` for the empty tree of a repository without commits. */
  base: Schema.NullOr(Schema.String),
  /** The revision compared to, as given, or `"working tree"` / `"index"`. */
  compare: Schema.String,
  ...Changes.fields
})

export type DiffOutput = typeof DiffOutput.Type

/** Log.Commit */
export const Commit = Schema.Struct({
  hash: Schema.String,
  shortHash: Schema.String,
  parents: Schema.Array(Schema.String),
  author: Schema.String,
  email: Schema.String,
  date: Schema.String,
  committer: Schema.String,
  committerDate: Schema.String,
  subject: Schema.String,
  message: Schema.String,
  filesChanged: Schema.Int,
  stats: Schema.optionalKey(Schema.Struct({ additions: Schema.Int, deletions: Schema.Int })),
  diff: Schema.optionalKey(Changes)
})

export type Commit = typeof Commit.Type

/** Log.Output */
export const LogOutput = Schema.Struct({
  commits: Schema.Array(Commit),
  /** More commits matched than `limit`. */
  truncated: Schema.Boolean
})

export type LogOutput = typeof LogOutput.Type

/** Show.Output */
export const ShowOutput = Schema.Struct({
  commit: Commit,
  diff: Schema.optionalKey(Changes)
})

export type ShowOutput = typeof ShowOutput.Type

/** Status.Change */
export const Change = Schema.Struct({
  path: Schema.String,
  status: FileStatus,
  oldPath: Schema.optionalKey(Schema.String)
})

export type Change = typeof Change.Type

/** Status.Output */
export const StatusOutput = Schema.Struct({
  /** The current branch, or `null` when HEAD is detached. */
  branch: Schema.NullOr(Schema.String),
  detached: Schema.Boolean,
  /** The commit HEAD points to, or `null` when there is no commit yet. */
  head: Schema.NullOr(Schema.String),
  /** The repository has no commits yet (an unborn branch). */
  noCommits: Schema.Boolean,
  /** Nothing staged, unstaged, untracked or conflicted. */
  clean: Schema.Boolean,
  staged: Schema.Array(Change),
  unstaged: Schema.Array(Change),
  untracked: Schema.Array(Schema.String),
  conflicted: Schema.Array(Schema.String),
  totals: Schema.Struct({
    staged: Schema.Int,
    unstaged: Schema.Int,
    untracked: Schema.Int,
    conflicted: Schema.Int
  }),
  /** Some files were left out of the lists because of `limit`. */
  truncated: Schema.Boolean
})

export type StatusOutput = typeof StatusOutput.Type

/** Blame.BlameCommit */
export const BlameCommit = Schema.Struct({
  hash: Schema.String,
  shortHash: Schema.String,
  author: Schema.String,
  email: Schema.String,
  date: Schema.String,
  message: Schema.String
})

export type BlameCommit = typeof BlameCommit.Type

/** Blame.BlameLine */
export const BlameLine = Schema.Struct({
  line: Schema.Int,
  originalLine: Schema.Int,
  originalPath: Schema.String,
  text: Schema.String,
  commit: Schema.NullOr(BlameCommit)
})

export type BlameLine = typeof BlameLine.Type

/** Blame.Output */
export const BlameOutput = Schema.Struct({
  /** The file, relative to the repository. */
  path: Schema.String,
  /** The revision blamed, as given, or `"working tree"`; each line names its own commit by hash. */
  rev: Schema.String,
  lines: Schema.Array(BlameLine),
  /** More lines were in the range than `maxLines`. */
  truncated: Schema.Boolean,
  /** When truncated: the line to start the next call from. */
  nextLine: Schema.optionalKey(Schema.Int)
})

export type BlameOutput = typeof BlameOutput.Type
