/**
 * The ripgrep backend: `rg` spawned through `effect/process` with an
 * argument vector (never a shell), the pattern after `--regexp` and the path
 * after `--`, so neither can be read as an option. The flags pin the
 * behaviour the TypeScript backend reproduces: no configuration file, no
 * global or parent ignore files, `.gitignore` honoured without a git
 * repository, memory maps (so binary detection does not depend on read
 * buffers), results sorted by path, and the pattern in the Rust syntax that
 * means what the RE2 pattern means (see `pattern.ts`).
 *
 * **rg only chooses files (threat 44).** rg opens what it walks by name, so
 * a directory swapped for a link while it runs leads it out of the root,
 * and no path handed to it (`/proc/self/fd/N` included: only the top would
 * be pinned, and root-relative globs would stop matching) can prevent that.
 * So rg is asked only which files hold a match (`--files-with-matches`),
 * and nothing it read is shown: a name counts only if the walk through
 * descriptors of `walk.ts` (run first) found that file, and the results come
 * from the file opened again below the root without following any link
 * (`Beneath`), searched by the TypeScript backend's line search. A directory
 * swapped during the search can then hide a file from the results, never
 * show one from elsewhere. The walk also gives the number of files searched.
 *
 * **Nothing blocks rg (threat 45).** rg opens ignore files with a blocking
 * `open`; a FIFO named `.gitignore` would hold it until the call times out.
 * When the walk meets an ignore file that is not a regular file, the search
 * runs on the TypeScript backend, which skips it. A single file is always
 * searched through its verified descriptor, without rg.
 *
 * Once the result limit is passed, reading stops, which kills `rg`.
 *
 * @internal
 */
import { accessSync, closeSync, constants } from "node:fs"
import { delimiter, join } from "node:path"
import * as NodeChildProcessSpawner from "@effect/platform-node/NodeChildProcessSpawner"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import { type Context, Effect, Fiber, Layer, Option, Stream } from "effect"
import { ChildProcess, ChildProcessSpawner } from "effect/process"
import { type GrepError, InvalidGlob, InvalidPattern, SearchFailed } from "./errors.ts"
import type { Backend, Event, Query } from "./query.ts"
import { makeScratch } from "./scan.ts"
import { fileResults, filesOf, typescript } from "./typescript.ts"
import { Beneath } from "../workspace/beneath.ts"

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

/** The flags that decide which files are searched, as the walk of `walk.ts` decides them. */
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
  if (q.typeGlobs !== undefined) {
    for (const glob of q.typeGlobs) args.push("--type-add", `ugent:${glob}`)
    args.push("--type", "ugent")
  }
  for (const glob of q.globs) args.push("--glob", glob)
  for (const glob of q.ignoredGlobs) args.push("--glob", `!${glob}`)
  for (const glob of q.blockedGlobs) args.push("--iglob", `!${glob}`)
  return args
}

const pathArg = (q: Query): string => (q.base.relative === "." ? "." : `./${q.base.relative}`)

const searchArgs = (q: Query): ReadonlyArray<string> => [
  ...walkArgs(q),
  "--mmap",
  "--color",
  "never",
  "--files-with-matches",
  "--null",
  // Each name as soon as it is found (a pipe is block-buffered): a search cut at its limit stops early.
  "--line-buffered",
  q.pattern.caseSensitive ? "--case-sensitive" : "--ignore-case",
  "--regexp",
  q.pattern.rust,
  "--",
  pathArg(q)
]

const decoder = new TextDecoder("utf-8")

/** A path as ripgrep prints it (`./a/b`), relative to the root. */
const relativePath = (printed: string): string => (printed.startsWith("./") ? printed.slice(2) : printed)

/** Reads `--files-with-matches --null` output: each path, relative to the root, as its NUL arrives. */
export class PathReader {
  private carry: Buffer = Buffer.alloc(0)

  push(chunk: Uint8Array): ReadonlyArray<string> {
    const bytes = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength)
    const data = this.carry.length === 0 ? bytes : Buffer.concat([this.carry, bytes])
    const out: Array<string> = []
    let at = 0
    for (let nul = data.indexOf(0, at); nul !== -1; nul = data.indexOf(0, at)) {
      out.push(relativePath(data.toString("utf8", at, nul)))
      at = nul + 1
    }
    this.carry = Buffer.from(data.subarray(at))
    return out
  }
}

/**
 * Turns the files rg names into results read through the jail. A name is
 * taken only if the walk through descriptors found that file (so no name
 * from outside the root is ever shown), and its results come from the bytes
 * of the file opened again below the root without following any link (so no
 * byte rg read elsewhere is ever shown). Stops at the first result past the
 * limit.
 */
class Confirmed {
  private emitted = 0
  /** Set when a result past the limit was found: the position, in the walk, of the file it was in. */
  stoppedAt: number | undefined
  private readonly q: Query
  private readonly order: ReadonlyMap<string, number>
  private readonly beneath: Beneath
  private readonly scratch = makeScratch()
  constructor(q: Query, order: ReadonlyMap<string, number>, beneath: Beneath) {
    this.q = q
    this.order = order
    this.beneath = beneath
  }

  take(paths: ReadonlyArray<string>): ReadonlyArray<Event> {
    const out: Array<Event> = []
    for (const relative of paths) {
      if (this.stoppedAt !== undefined) break
      const position = this.order.get(relative)
      if (position === undefined) continue
      const opened = this.beneath.open(relative)
      if (opened === undefined) continue
      try {
        for (const event of fileResults(this.q, relative, opened, this.scratch)) {
          if (this.emitted === this.q.limit) {
            this.stoppedAt = position
            break
          }
          this.emitted++
          out.push(event)
        }
      } catch {
        // A read error mid-file (the file shrank, an I/O error): the file is skipped, as ripgrep skips it.
      } finally {
        closeSync(opened.fd)
      }
    }
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
  if (/glob/i.test(stderr)) return new InvalidGlob({ glob: q.globs.join(" "), detail: stderr.trim() })
  return failed(stderr.trim() === "" ? "rg exited with status 2" : stderr.trim())
}

/** The ripgrep backend. */
export const ripgrep: Backend = {
  name: "ripgrep",
  search: (q) =>
    // One file needs no walk and no prefilter: it is read through its verified descriptor.
    q.base.kind === "file"
      ? typescript.search(q)
      : withSpawner(
          Stream.unwrap(
            Effect.gen(function* () {
              // rg starts first, so that its start-up overlaps the walk; its output waits in the pipe.
              const handle = yield* command(q, searchArgs(q)).pipe(Effect.mapError((e) => failed(e.message)))
              const stderr = yield* Effect.forkScoped(collectStderr(handle.stderr))
              // The walk through descriptors: the files rg may name, and whether an ignore file could block rg.
              let irregular: string | undefined
              const walked = yield* filesOf(q, (relative) => {
                irregular ??= relative
              })
              const order = new Map<string, number>()
              for (const file of walked) {
                order.set(file.relative, order.size)
                // A walk of a large tree lets the event loop run (and an interruption land) now and then.
                if (order.size % 512 === 0) yield* Effect.yieldNow
              }
              if (irregular !== undefined) {
                // rg may be waiting on it (a FIFO) for ever: it goes, and the TypeScript engine, which skips it, searches.
                yield* Effect.forkDetach(handle.kill())
                return typescript.search(q)
              }
              const beneath = yield* Effect.acquireRelease(
                Effect.sync(() => new Beneath(q.root, q.procFd)),
                (b) => Effect.sync(() => b.close())
              )
              const reader = new PathReader()
              const confirmed = new Confirmed(q, order, beneath)
              const finish = Effect.gen(function* () {
                const code = yield* handle.exitCode.pipe(Effect.mapError((e) => failed(e.message)))
                const message = yield* Fiber.join(stderr)
                // With --no-messages, rg says nothing of files it could not read; what it says is about the search.
                if (code === 2 && message.trim() !== "") return yield* errorFromStderr(q, message)
                if (code !== 0 && code !== 1 && code !== 2) return yield* failed(`rg exited with status ${code}`)
                return [{ _tag: "End", filesSearched: order.size, truncated: false }] as ReadonlyArray<Event>
              })
              const events = handle.stdout.pipe(
                Stream.mapError((e) => failed(e.message)),
                Stream.map((chunk) => confirmed.take(reader.push(chunk))),
                // At the limit rg is killed in the background (the kill waits for it to exit) and released
                // from the scope, so the answer does not wait for the process to go; reading stops next.
                Stream.tap(() =>
                  confirmed.stoppedAt === undefined
                    ? Effect.void
                    : Effect.andThen(
                        Effect.forkDetach(handle.kill()),
                        Effect.orElseSucceed(handle.unref, () => Effect.void)
                      )
                ),
                Stream.takeUntil(() => confirmed.stoppedAt !== undefined)
              )
              const end = Stream.suspend(() =>
                confirmed.stoppedAt === undefined
                  ? Stream.fromEffect(finish)
                  : Stream.succeed([
                      { _tag: "End", filesSearched: confirmed.stoppedAt + 1, truncated: true }
                    ] as ReadonlyArray<Event>)
              )
              return Stream.concat(events, end).pipe(Stream.flatMap((batch) => Stream.fromIterable(batch)))
            })
          )
        )
}
