/**
 * The ripgrep backend: `rg` spawned through `effect/process` with an
 * argument vector (never a shell), the pattern after `-e` and the path after
 * `--`, so neither can be read as an option. The flags pin the behaviour the
 * TypeScript backend reproduces: no configuration file, no global or parent
 * ignore files, `.gitignore` honoured without a git repository, memory maps
 * (so binary detection does not depend on read buffers), one thread with
 * results sorted by path, and the pattern in the Rust syntax that means what
 * the RE2 pattern means (see `pattern.ts`).
 *
 * Output is read as it arrives (`--null` after each path, `NUM:` for a
 * match, `NUM-` for context, counts for the other modes, then `--stats`).
 * Once the result limit is passed, reading stops, which kills `rg`; the
 * number of files searched up to that point is then counted by walking the
 * same files in the same order without reading them: in process, with the
 * TypeScript backend's walk (which the differential tests hold to
 * ripgrep's), or, should that walk not meet the file where ripgrep stopped,
 * with `rg --files` and the same filters.
 *
 * @internal
 */
import { accessSync, constants } from "node:fs"
import { delimiter, join } from "node:path"
import * as NodeChildProcessSpawner from "@effect/platform-node/NodeChildProcessSpawner"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import { type Context, Effect, Fiber, Layer, Option, Stream } from "effect"
import { ChildProcess, ChildProcessSpawner } from "effect/process"
import { type GrepError, InvalidGlob, InvalidPattern, SearchFailed } from "./errors.ts"
import { escapeGlob } from "./glob.ts"
import type { Backend, Event, Query } from "./query.ts"
import { displayLine, type Line } from "./scan.ts"
import { filesOf } from "./typescript.ts"

/** Whether an executable `rg` is on `PATH`. */
export const available = (path = process.env.PATH ?? ""): boolean =>
  path.split(delimiter).some((dir) => {
    if (dir === "") return false
    try {
      accessSync(join(dir, "rg"), constants.X_OK)
      return true
    } catch {
      return false
    }
  })

/** The flags that decide which files are searched, shared by the search and the `--files` count. */
const walkArgs = (q: Query): ReadonlyArray<string> => {
  const args = [
    "--no-config",
    "--no-messages",
    "--sort",
    "path",
    "--no-ignore-parent",
    "--no-ignore-global",
    "--no-ignore-exclude",
    "--no-require-git"
  ]
  if (q.base.kind === "file") {
    // One file, selected among its siblings by an anchored glob: searched as ripgrep searches any file
    // it walks (binary files skipped), but, being named, past ignore files and hidden-ness.
    args.push("--max-depth", "1", "-g", `/${escapeGlob(q.base.relative)}`)
  } else {
    if (q.typeGlobs !== undefined) {
      for (const glob of q.typeGlobs) args.push("--type-add", `ugent:${glob}`)
      args.push("--type", "ugent")
    }
    if (q.glob !== undefined) args.push("--glob", q.glob)
    for (const glob of q.ignoredGlobs) args.push("--glob", `!${glob}`)
  }
  for (const glob of q.blockedGlobs) args.push("--iglob", `!${glob}`)
  return args
}

const pathArg = (q: Query): string => {
  const dir = q.base.kind === "file" ? q.base.relative.split("/").slice(0, -1).join("/") : q.base.relative
  return dir === "" || dir === "." ? "." : `./${dir}`
}

const searchArgs = (q: Query): ReadonlyArray<string> => {
  const args = [...walkArgs(q), "--mmap", "--color", "never", "--null", "--with-filename", "--stats"]
  args.push(q.pattern.caseSensitive ? "--case-sensitive" : "--ignore-case")
  if (q.mode === "content") {
    args.push("--line-number", "--no-heading", "--after-context", String(q.after), "--before-context", String(q.before))
  } else {
    args.push("--count")
    if (q.mode === "files") args.push("--max-count", "1")
  }
  args.push("--regexp", q.pattern.rust, "--", pathArg(q))
  return args
}

const decoder = new TextDecoder("utf-8")

/** A path as ripgrep prints it (`./a/b`), relative to the root. */
const relativePath = (printed: string): string => (printed.startsWith("./") ? printed.slice(2) : printed)

/**
 * Turns ripgrep's output into results. Records are `./path NUL rest \n`;
 * every path starts with `./` (the search path does), which tells records
 * apart from `--` separators and the statistics, even when a file name
 * holds a line break.
 */
export class OutputParser {
  private carry: Buffer = Buffer.alloc(0)
  private emitted = 0
  /** The current file: its path as printed, relative to the root, and whether the policy drops it. */
  private printed: Buffer = Buffer.alloc(0)
  private file: string | undefined
  private dropped = false
  /** Context lines printed since the last match of the current file. */
  private recent: Array<Line> = []
  private lastMatch = 0
  private pending: { line: number; text: string; before: Array<Line>; after: Array<Line> } | undefined
  filesSearched: number | undefined
  /** Set when a result past the limit was seen: the file it was in. */
  stoppedAt: string | undefined
  private readonly q: Query
  constructor(q: Query) {
    this.q = q
  }

  private take(event: Event, out: Array<Event>, path: string): void {
    if (this.emitted === this.q.limit) {
      this.stoppedAt = path
      return
    }
    this.emitted++
    out.push(event)
  }

  private flushPending(out: Array<Event>): void {
    if (this.pending === undefined || this.file === undefined) return
    const m = this.pending
    this.pending = undefined
    this.take({ _tag: "Match", path: this.file, match: m }, out, this.file)
  }

  /** One record: the path in `[at, nul)`, the rest in `(nul, nl)`. */
  private record(data: Buffer, at: number, nul: number, nl: number, out: Array<Event>): void {
    if (this.file === undefined || data.compare(this.printed, 0, this.printed.length, at, nul) !== 0) {
      this.flushPending(out)
      if (this.stoppedAt !== undefined) return
      this.printed = Buffer.from(data.subarray(at, nul))
      this.file = relativePath(data.toString("utf8", at, nul))
      // Defence in depth: the workspace policy was given to rg as globs; whatever slips through is dropped.
      this.dropped = this.q.excluded(this.file)
      this.recent = []
      this.lastMatch = 0
    }
    if (this.dropped) return
    let i = nul + 1
    let number = 0
    while (i < nl && data[i]! >= 48 && data[i]! <= 57) number = number * 10 + data[i++]! - 48
    if (this.q.mode !== "content") {
      if (number === 0) return
      this.take(
        this.q.mode === "files" ? { _tag: "File", path: this.file } : { _tag: "Count", path: this.file, count: number },
        out,
        this.file
      )
      return
    }
    const line = number
    const kind = data[i]
    const text = displayLine(data, i + 1, nl, this.q.lineLength)
    if (kind === 45 /* - */) {
      const p = this.pending
      if (p !== undefined && p.after.length < this.q.after && line === p.line + p.after.length + 1) {
        p.after.push({ line, text })
      }
      this.recent.push({ line, text })
      if (this.recent.length > this.q.before) this.recent.shift()
      return
    }
    this.flushPending(out)
    if (this.stoppedAt !== undefined) return
    const from = Math.max(line - this.q.before, this.lastMatch + 1)
    const before = this.recent.filter((l) => l.line >= from && l.line < line)
    this.pending = { line, text, before, after: [] }
    this.lastMatch = line
    this.recent = []
    if (this.q.after === 0) this.flushPending(out)
  }

  private other(text: string): void {
    const m = /^(\d+) files searched$/.exec(text)
    if (m !== null) this.filesSearched = Number(m[1])
  }

  /** Parses a chunk of output; returns the results completed by it. */
  push(chunk: Uint8Array): ReadonlyArray<Event> {
    const out: Array<Event> = []
    const bytes = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength)
    const data = this.carry.length === 0 ? bytes : Buffer.concat([this.carry, bytes])
    let at = 0
    while (at < data.length && this.stoppedAt === undefined) {
      if (data[at] === 46 && data[at + 1] === 47) {
        const nul = data.indexOf(0, at)
        const lineEnd = data.indexOf(10, at)
        if (lineEnd !== -1 && (nul === -1 || lineEnd < nul)) {
          // rg prints `./path: WARNING: stopped searching binary file after match …` when a file it
          // reported turns out binary; that line has no NUL (a file name with a line break does, further on).
          if (/: WARNING: stopped searching binary file/.test(data.toString("utf8", at, lineEnd))) {
            at = lineEnd + 1
            continue
          }
        }
        if (nul === -1) break
        const nl = data.indexOf(10, nul)
        if (nl === -1) break
        this.record(data, at, nul, nl, out)
        at = nl + 1
      } else {
        const nl = data.indexOf(10, at)
        if (nl === -1) break
        this.other(data.toString("utf8", at, nl))
        at = nl + 1
      }
    }
    this.carry = Buffer.from(data.subarray(at))
    return out
  }

  /** The results still held when the output ends. */
  end(): ReadonlyArray<Event> {
    const out: Array<Event> = []
    this.flushPending(out)
    return out
  }
}

// Node's spawner, built once: it holds no resources, and building it per search costs more than the search.
let nodeSpawner: Context.Context<ChildProcessSpawner.ChildProcessSpawner> | undefined
const spawnerContext = (): Context.Context<ChildProcessSpawner.ChildProcessSpawner> => {
  if (nodeSpawner === undefined) {
    const layer = NodeChildProcessSpawner.layer.pipe(Layer.provide([NodeFileSystem.layer, NodePath.layer]))
    nodeSpawner = Effect.runSync(Effect.scoped(Layer.build(layer)))
  }
  return nodeSpawner
}

/** Runs with the caller's `ChildProcessSpawner` if there is one, Node's otherwise. */
const withSpawner = <A, E, R>(
  stream: Stream.Stream<A, E, R>
): Stream.Stream<A, E, Exclude<R, ChildProcessSpawner.ChildProcessSpawner>> =>
  Stream.unwrap(
    Effect.map(Effect.serviceOption(ChildProcessSpawner.ChildProcessSpawner), (spawner) =>
      Option.isSome(spawner)
        ? Stream.provideService(stream, ChildProcessSpawner.ChildProcessSpawner, spawner.value)
        : Stream.provideContext(stream, spawnerContext())
    )
  )

const command = (q: Query, args: ReadonlyArray<string>) =>
  ChildProcess.make("rg", args, {
    cwd: q.root,
    // rg needs nothing from the environment; secrets in it stay out of the child.
    env: { PATH: process.env.PATH ?? "" },
    extendEnv: false,
    stdin: "ignore",
    // rg starts no children of its own: killing it alone is enough, and skips the wait for a process group.
    detached: false
  })

const failed = (detail: string) => new SearchFailed({ engine: "ripgrep", detail, retryable: false })

/** Reads what rg wrote on stderr (bounded), for its error messages. */
const collectStderr = (stderr: Stream.Stream<Uint8Array, unknown>) =>
  stderr.pipe(
    Stream.runFold(
      () => "",
      (acc, chunk: Uint8Array) => (acc.length > 65536 ? acc : acc + decoder.decode(chunk))
    ),
    Effect.orElseSucceed(() => "")
  )

/** The typed error for what rg said on stderr when it exited with status 2. */
const errorFromStderr = (q: Query, stderr: string): GrepError => {
  if (/size limit/i.test(stderr)) {
    return new InvalidPattern({
      pattern: q.pattern.source,
      reason: "too-large",
      engine: "ripgrep",
      detail: stderr.trim()
    })
  }
  if (/regex parse error|the literal .* is not allowed|error parsing regex|regex.*too (big|large)/i.test(stderr)) {
    return new InvalidPattern({ pattern: q.pattern.source, reason: "syntax", engine: "ripgrep", detail: stderr.trim() })
  }
  if (/glob/i.test(stderr)) return new InvalidGlob({ glob: q.glob ?? "", detail: stderr.trim() })
  return failed(stderr.trim() === "" ? "rg exited with status 2" : stderr.trim())
}

/** How many files `rg --files` lists up to and including `stop`. */
const filesUpTo = (
  q: Query,
  stop: string
): Effect.Effect<number, SearchFailed, ChildProcessSpawner.ChildProcessSpawner> =>
  Effect.scoped(
    Effect.gen(function* () {
      const handle = yield* command(q, [...walkArgs(q), "--null", "--files", "--", pathArg(q)])
      let count = 0
      let found = false
      let carry = ""
      yield* handle.stdout.pipe(
        Stream.runForEachWhile((chunk) =>
          Effect.sync(() => {
            const parts = (carry + decoder.decode(chunk, { stream: true })).split("\0")
            carry = parts.pop() ?? ""
            for (const part of parts) {
              count++
              if (relativePath(part) === stop) {
                found = true
                return false
              }
            }
            return true
          })
        )
      )
      if (!found) return yield* failed(`the file where the search stopped (${stop}) is not in rg --files`)
      return count
    })
  ).pipe(Effect.mapError((e) => (e._tag === "SearchFailed" ? e : failed(e.message))))

/** The ripgrep backend. */
export const ripgrep: Backend = {
  name: "ripgrep",
  search: (q) =>
    Stream.suspend(() => {
      const parser = new OutputParser(q)
      const main = Stream.unwrap(
        Effect.gen(function* () {
          const handle = yield* command(q, searchArgs(q)).pipe(Effect.mapError((e) => failed(e.message)))
          const stderr = yield* Effect.forkScoped(collectStderr(handle.stderr))
          const finish = Effect.gen(function* () {
            const code = yield* handle.exitCode.pipe(Effect.mapError((e) => failed(e.message)))
            const message = yield* Fiber.join(stderr)
            const rest = parser.end()
            if (code === 2 && parser.filesSearched === undefined) return yield* errorFromStderr(q, message)
            if (code !== 0 && code !== 1 && code !== 2) return yield* failed(`rg exited with status ${code}`)
            if (parser.filesSearched === undefined) return yield* failed("rg printed no statistics")
            return [
              ...rest,
              { _tag: "End", filesSearched: parser.filesSearched, truncated: false } satisfies Event
            ] as ReadonlyArray<Event>
          })
          const events = handle.stdout.pipe(
            Stream.mapError((e) => failed(e.message)),
            Stream.map((chunk) => parser.push(chunk)),
            // At the limit rg is killed in the background (the kill waits for it to exit) and released
            // from the scope, so the answer does not wait for the process to go; reading stops next.
            Stream.tap(() =>
              parser.stoppedAt === undefined
                ? Effect.void
                : Effect.andThen(
                    Effect.forkDetach(handle.kill()),
                    Effect.orElseSucceed(handle.unref, () => Effect.void)
                  )
            ),
            Stream.takeUntil(() => parser.stoppedAt !== undefined)
          )
          return Stream.concat(
            events,
            Stream.suspend(() => (parser.stoppedAt === undefined ? Stream.fromEffect(finish) : Stream.empty))
          ).pipe(Stream.flatMap((batch) => Stream.fromIterable(batch)))
        })
      )
      // Reading stops at the limit and the scope of `main` closes, killing rg; then count the files searched.
      const truncatedEnd = Stream.suspend(() => {
        const stop = parser.stoppedAt
        if (stop === undefined) return Stream.empty
        const walked = Effect.map(filesOf(q), (files) => {
          let n = 0
          for (const file of files) {
            n++
            if (file.relative === stop) return n
          }
          return undefined
        }).pipe(Effect.orElseSucceed(() => undefined))
        const files: Effect.Effect<Event, SearchFailed, ChildProcessSpawner.ChildProcessSpawner> = Effect.flatMap(
          walked,
          (n) => (n === undefined ? filesUpTo(q, stop) : Effect.succeed(n))
        ).pipe(Effect.map((n) => ({ _tag: "End", filesSearched: n, truncated: true })))
        return Stream.fromEffect(files)
      })
      return withSpawner(Stream.concat(main, truncatedEnd))
    })
}
