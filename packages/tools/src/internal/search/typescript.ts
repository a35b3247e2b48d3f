/**
 * The TypeScript backend: the walk of `walk.ts` and the line search of
 * `scan.ts`, pulled one result at a time, so a search that has its results
 * stops walking and reading. Files are opened as the walk hands them out
 * (never through a link, see `walk.ts`); a file that is not a regular file
 * any more is skipped, never read.
 *
 * @internal
 */
import { closeSync } from "node:fs"
import { Effect, Stream } from "effect"
import { InvalidGlob } from "./errors.ts"
import { GlobSyntax, overrides, typeFilter } from "./glob.ts"
import type { Backend, Event, Query } from "./query.ts"
import { contentMatches, countMatches, makeScratch, type ScanSettings, type Scratch } from "./scan.ts"
import { type OpenFile, openFile, ripgrepIgnoreFiles, ripgrepKeeps, type WalkedFile, walk } from "./walk.ts"

type Step = Event | { readonly _tag: "Tick" }

/** The results one open file gives a query, in order: its matching lines, or one file or count result. */
export function* fileResults(query: Query, relative: string, opened: OpenFile, scratch: Scratch): Generator<Event> {
  if (query.mode === "content") {
    const settings: ScanSettings = {
      pattern: query.pattern,
      before: query.before,
      after: query.after,
      lineLength: query.lineLength
    }
    for (const match of contentMatches(opened.fd, opened.size, settings, scratch)) {
      yield { _tag: "Match", path: relative, match }
    }
    return
  }
  const count = countMatches(opened.fd, opened.size, query.pattern, query.mode === "files", scratch)
  if (count > 0) {
    yield query.mode === "files" ? { _tag: "File", path: relative } : { _tag: "Count", path: relative, count }
  }
}

function* run(query: Query, files: Iterable<WalkedFile>): Generator<Step> {
  const scratch = makeScratch()
  let searched = 0
  let emitted = 0
  for (const file of files) {
    const opened = file.open()
    if (opened === undefined) continue
    searched++
    try {
      for (const event of fileResults(query, file.relative, opened, scratch)) {
        if (emitted === query.limit) {
          yield { _tag: "End", filesSearched: searched, truncated: true }
          return
        }
        emitted++
        yield event
      }
    } catch {
      // A read error mid-file (the file shrank, an I/O error): the file is skipped, as ripgrep skips it.
    } finally {
      closeSync(opened.fd)
    }
    // A step now and then lets the consumer interrupt a long walk between files.
    if (searched % 16 === 0) yield { _tag: "Tick" }
  }
  yield { _tag: "End", filesSearched: searched, truncated: false }
}

/**
 * The files a query searches, in ripgrep's order, without reading them;
 * `irregular` is told of each ignore file met that is not a regular file.
 */
export const filesOf = (
  query: Query,
  irregular?: (relative: string) => void
): Effect.Effect<Iterable<WalkedFile>, InvalidGlob> =>
  Effect.map(
    Effect.try({
      try: () => overrides(query.globs),
      catch: (e) =>
        new InvalidGlob({ glob: query.globs.join(" "), detail: e instanceof GlobSyntax ? e.message : String(e) })
    }),
    (compiled): Iterable<WalkedFile> =>
      query.base.kind === "file"
        ? [
            {
              relative: query.base.relative,
              kind: "file",
              open: () => openFile(`${query.root}/${query.base.relative}`, query.procFd),
              lstat: () => undefined
            }
          ]
        : walk({
            root: query.root,
            base: query.base.relative,
            excluded: query.excluded,
            ignoreFiles: ripgrepIgnoreFiles,
            keep: ripgrepKeeps(compiled, query.typeGlobs === undefined ? undefined : typeFilter(query.typeGlobs)),
            procFd: query.procFd,
            irregular
          })
  )

/** The TypeScript backend. */
export const typescript: Backend = {
  name: "typescript",
  search: (query) =>
    Stream.unwrap(
      Effect.gen(function* () {
        const files = yield* filesOf(query)
        const steps = run(query, files)
        return Stream.fromIteratorSucceed(steps, 1).pipe(
          Stream.filter((step): step is Event => step._tag !== "Tick"),
          // The generator's `finally` closes an open file when the consumer stops early.
          Stream.ensuring(Effect.sync(() => steps.return(undefined)))
        )
      })
    )
}
