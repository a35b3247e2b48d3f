/**
 * The contract between `search.grep` and its two backends: a checked query
 * in, a stream of results out. A backend emits at most `limit` results, in
 * ripgrep's order (files by path, matches by line), then one `End` that says
 * how many files it searched and whether more results existed. Everything a
 * backend needs is decided before it runs (pattern compiled, paths resolved
 * by the workspace), so both see exactly the same question.
 *
 * @internal
 */
import type { Stream } from "effect"
import type { GrepError } from "./errors.ts"
import type { CompiledPattern } from "./pattern.ts"
import type { FileMatch } from "./scan.ts"

export type Mode = "files" | "content" | "count"

export interface Query {
  readonly pattern: CompiledPattern
  readonly mode: Mode
  readonly before: number
  readonly after: number
  /** Most results: matching lines (content), files (files) or file counts (count). */
  readonly limit: number
  readonly lineLength: number
  /** Canonical root of the workspace; paths in results are relative to it. */
  readonly root: string
  /** What to search: a directory or one file, relative to the root (`.` for the root). */
  readonly base: { readonly relative: string; readonly kind: "file" | "directory" }
  /** Globs selecting (or, with a leading `!`, excluding) paths relative to the root; a later one wins, as in ripgrep. */
  readonly globs: ReadonlyArray<string>
  /** The globs of the selected file type, tested on file names. */
  readonly typeGlobs: ReadonlyArray<string> | undefined
  /** Workspace globs to exclude, for ripgrep: case-insensitive (blocked) and case-sensitive (default ignores). */
  readonly blockedGlobs: ReadonlyArray<string>
  readonly ignoredGlobs: ReadonlyArray<string>
  /** The workspace's own verdict on a relative path: blocked, or under a default-ignored name. */
  readonly excluded: (relative: string) => boolean
  /** Whether `/proc/self/fd` can name open descriptors (Linux). */
  readonly procFd: boolean
}

export type Event =
  | { readonly _tag: "Match"; readonly path: string; readonly match: FileMatch }
  | { readonly _tag: "File"; readonly path: string }
  | { readonly _tag: "Count"; readonly path: string; readonly count: number }
  | { readonly _tag: "End"; readonly filesSearched: number; readonly truncated: boolean }

export interface Backend {
  readonly name: "ripgrep" | "typescript"
  readonly search: (query: Query) => Stream.Stream<Event, GrepError>
}
