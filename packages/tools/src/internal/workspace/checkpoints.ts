/**
 * The checkpoint store of one workspace, in `<root>/.ugent/checkpoints/`:
 * each content kept once under its SHA-256 (a file named by the hash, mode
 * 0600), and an append-only index (`index.jsonl`), one line per checkpoint:
 * who changed which files, from what to what (hash and size of each side,
 * `null` for absent), in which call, when. The folder is opened through the
 * jail like the rest of `.ugent` (a real directory, owned by the user, never
 * through a link), and the workspace policy blocks `.ugent` for every file
 * tool, as the shell's sandbox hides it.
 *
 * Bounds: one file's content over `maxFileBytes` is not kept (a write of it
 * is refused; a shell command's change is recorded as not kept), and when
 * the contents the index refers to exceed `maxTotalBytes`, the oldest
 * checkpoints are dropped with the contents only they referred to.
 *
 * The index is read incrementally (only what was appended since the last
 * read) and changed under one lock per store in this process; two processes
 * on one workspace append safely, but a drop of old checkpoints by one may
 * lose a line the other appends at that moment.
 *
 * @internal
 */
import { randomBytes } from "node:crypto"
import * as fs from "node:fs"
import { constants } from "node:fs"
import * as path from "node:path"
import { Observer, ReadProof } from "@ugent/core"
import { Clock, Context, Effect, Option, Schema, Semaphore } from "effect"
import { FileSystemError, StateRefused } from "./errors.ts"
import { createExclusive, type StateError, withDirectory } from "./state.ts"
import { attemptSync, callSync, codeOf } from "./system.ts"

/** One side of a change: the content's hash and size, and whether it was kept. */
export const Version = Schema.Struct({
  hash: Schema.String,
  size: Schema.Number,
  kept: Schema.Boolean
})
export type Version = typeof Version.Type

/** One file's change in a checkpoint; `null` for absent (created, or deleted); `dirs`: the directories made for it. */
export const Change = Schema.Struct({
  path: Schema.String,
  before: Schema.NullOr(Version),
  after: Schema.NullOr(Version),
  dirs: Schema.optionalKey(Schema.Array(Schema.String))
})
export type Change = typeof Change.Type

/** One checkpoint, as the index stores it. */
export const Entry = Schema.Struct({
  id: Schema.String,
  /** Epoch milliseconds. */
  at: Schema.Number,
  caller: Schema.String,
  /** The caller's session (an MCP connection, a CLI session), when the call had one. */
  session: Schema.optionalKey(Schema.String),
  callId: Schema.optionalKey(Schema.String),
  tool: Schema.optionalKey(Schema.String),
  files: Schema.Array(Change)
})
export type Entry = typeof Entry.Type

const decodeLine = Schema.decodeUnknownOption(Schema.fromJsonString(Entry))

/** The call a write belongs to: set by the server for each call it runs. */
export interface Call {
  readonly id: string
  readonly tool: string
  /** The caller's session: two MCP connections of one server are one observer but two sessions. */
  readonly session?: string | undefined
}

/** The call in progress, recorded with each checkpoint it makes. */
export const CurrentCall = Context.Reference<Call | undefined>("ugent/tools/Checkpoints/CurrentCall", {
  defaultValue: () => undefined
})

export interface StoreOptions {
  readonly maxFileBytes: number
  readonly maxTotalBytes: number
}

export const defaultOptions: StoreOptions = { maxFileBytes: 8 * 1024 * 1024, maxTotalBytes: 512 * 1024 * 1024 }

export interface Store {
  readonly options: StoreOptions
  /** Keeps `bytes` under their hash (once); over `maxFileBytes` they are not kept. */
  readonly keep: (bytes: Uint8Array) => Effect.Effect<Version, StateError>
  /**
   * Keeps several contents with one opening of the folder; not `durable`:
   * without waiting for the disk (a copy lost in a crash is found missing or
   * damaged by its hash when a restore needs it).
   */
  readonly keepAll: (
    contents: ReadonlyArray<Uint8Array>,
    options: { readonly durable: boolean }
  ) => Effect.Effect<ReadonlyArray<Version>, StateError>
  /** Contents kept for others (the shell's baseline): never removed when old checkpoints are dropped. */
  readonly pinned: Set<string>
  /** Appends a checkpoint of these changes for the call in progress; returns its id. */
  readonly record: (files: ReadonlyArray<Change>) => Effect.Effect<Entry, StateError>
  /** Every checkpoint, oldest first. */
  readonly entries: Effect.Effect<ReadonlyArray<Entry>, StateError>
  /** The kept content of a version; `undefined` when it is missing or no longer hashes to it. */
  readonly content: (version: Version) => Effect.Effect<Uint8Array | undefined, StateError>
  /** One restore at a time per workspace in this process. */
  readonly restoring: Semaphore.Semaphore
  /** The real path of the store's folder, made if missing (checked as every use of it is). */
  readonly folder: Effect.Effect<string, StateError>
}

const folder = "checkpoints"
const indexName = "index.jsonl"
const hashName = /^[0-9a-f]{64}$/
const appendFlags =
  constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW | constants.O_NONBLOCK
const readFlags = constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW

interface Cache {
  ino: number
  offset: number
  entries: Array<Entry>
}

const stores = new Map<string, Store>()

/** The store of the workspace rooted at `root` (its real path), shared by every `Workspace` of the process. */
export const storeOf = (root: string, options: StoreOptions): Store => {
  const key = `${root}\u0000${options.maxFileBytes}\u0000${options.maxTotalBytes}`
  let store = stores.get(key)
  if (store === undefined) {
    store = make(root, options)
    stores.set(key, store)
  }
  return store
}

const make = (root: string, options: StoreOptions): Store => {
  const state = path.join(root, ".ugent")
  const dir = path.join(state, folder)
  const shown = (name: string) => path.join(dir, name)
  const failure = (at: string, operation: string) => (u: unknown) =>
    new FileSystemError({ path: at, operation, code: codeOf(u), retryable: false })
  let prepared = false
  /** Runs `use` with a path naming the opened, verified checkpoint folder (made on first use, with `.ugent`'s `.gitignore`). */
  const inFolder = <A, E>(use: (at: string) => Effect.Effect<A, E>): Effect.Effect<A, E | StateError> =>
    withDirectory(state, state, state, (at) =>
      Effect.gen(function* () {
        if (!prepared) {
          yield* createExclusive(
            at,
            ".gitignore",
            path.join(state, ".gitignore"),
            new TextEncoder().encode("*\n"),
            0o644
          )
          prepared = true
        }
        return yield* withDirectory(path.join(at, folder), dir, dir, use)
      })
    )
  const lock = Semaphore.makeUnsafe(1)
  const cache: Cache = { ino: -1, offset: 0, entries: [] }

  /** Reads what was appended to the index since the last read (all of it if it was replaced). */
  const refresh = (at: string): Effect.Effect<Array<Entry>, StateError> =>
    Effect.gen(function* () {
      const fd = yield* attemptSync(() => fs.openSync(path.join(at, indexName), readFlags)).pipe(
        Effect.map((fd): number | undefined => fd),
        Effect.catch((e): Effect.Effect<number | undefined, StateError> => {
          if (e.code === "ENOENT") return Effect.succeed(undefined)
          if (e.code === "ELOOP") return Effect.fail(new StateRefused({ path: shown(indexName), reason: "link" }))
          return Effect.fail(failure(shown(indexName), "open")(e.cause))
        })
      )
      if (fd === undefined) {
        cache.ino = -1
        cache.offset = 0
        cache.entries = []
        return cache.entries
      }
      return yield* Effect.ensuring(
        Effect.gen(function* () {
          const st = yield* callSync(() => fs.fstatSync(fd), failure(shown(indexName), "inspect"))
          if (!st.isFile()) return yield* new StateRefused({ path: shown(indexName), reason: "not-a-file" })
          if (st.ino !== cache.ino || st.size < cache.offset) {
            cache.ino = st.ino
            cache.offset = 0
            cache.entries = []
          }
          if (st.size === cache.offset) return cache.entries
          const buffer = Buffer.allocUnsafe(st.size - cache.offset)
          let length = 0
          while (length < buffer.length) {
            const n = yield* callSync(
              () => fs.readSync(fd, buffer, length, buffer.length - length, cache.offset + length),
              failure(shown(indexName), "read")
            )
            if (n === 0) break
            length += n
          }
          // Only whole lines: a line being appended right now is read next time.
          const end = buffer.lastIndexOf(0x0a, length - 1)
          if (end < 0) return cache.entries
          for (const line of buffer.subarray(0, end).toString("utf8").split("\n")) {
            const entry = decodeLine(line)
            if (Option.isSome(entry)) cache.entries.push(entry.value)
          }
          cache.offset += end + 1
          return cache.entries
        }),
        Effect.sync(() => fs.closeSync(fd))
      )
    })

  const append = (at: string, line: string): Effect.Effect<void, StateError> =>
    Effect.gen(function* () {
      const fd = yield* attemptSync(() => fs.openSync(path.join(at, indexName), appendFlags, 0o600)).pipe(
        Effect.catch((e) =>
          Effect.fail(
            e.code === "ELOOP"
              ? new StateRefused({ path: shown(indexName), reason: "link" })
              : failure(shown(indexName), "open")(e.cause)
          )
        )
      )
      yield* Effect.ensuring(
        Effect.gen(function* () {
          const st = yield* callSync(() => fs.fstatSync(fd), failure(shown(indexName), "inspect"))
          if (!st.isFile()) return yield* new StateRefused({ path: shown(indexName), reason: "not-a-file" })
          yield* callSync(() => fs.writeSync(fd, line), failure(shown(indexName), "write"))
          yield* callSync(() => fs.fdatasyncSync(fd), failure(shown(indexName), "write"))
        }),
        Effect.sync(() => fs.closeSync(fd))
      )
    })

  /** Drops the oldest checkpoints while the contents referred to exceed the cap (never the newest). */
  const trim = (at: string, entries: Array<Entry>): Effect.Effect<void, StateError> =>
    Effect.gen(function* () {
      const sizes = new Map<string, { size: number; count: number }>()
      let total = 0
      const versions = (e: Entry) =>
        e.files.flatMap((f) => [f.before, f.after]).filter((v): v is Version => v !== null && v.kept)
      for (const e of entries) {
        for (const v of versions(e)) {
          const seen = sizes.get(v.hash)
          if (seen === undefined) {
            sizes.set(v.hash, { size: v.size, count: 1 })
            total += v.size
          } else seen.count++
        }
      }
      if (total <= options.maxTotalBytes) return
      let drop = 0
      const orphans: Array<string> = []
      while (total > options.maxTotalBytes && drop < entries.length - 1) {
        for (const v of versions(entries[drop]!)) {
          const seen = sizes.get(v.hash)!
          if (--seen.count === 0) {
            total -= seen.size
            if (!pinned.has(v.hash)) orphans.push(v.hash)
          }
        }
        drop++
      }
      const kept = entries.slice(drop)
      const text = kept.map((e) => `${JSON.stringify(e)}\n`).join("")
      const aside = `.${indexName}.${randomBytes(6).toString("hex")}.ugent-tmp`
      yield* callSync(
        () => fs.writeFileSync(path.join(at, aside), text, { mode: 0o600, flag: "wx" }),
        failure(shown(indexName), "write")
      )
      yield* callSync(
        () => fs.renameSync(path.join(at, aside), path.join(at, indexName)),
        failure(shown(indexName), "write")
      )
      for (const hash of orphans) yield* attemptSync(() => fs.unlinkSync(path.join(at, hash))).pipe(Effect.ignore)
      cache.ino = -1
    })

  const pinned = new Set<string>()
  /** Keeps `bytes` in the opened folder `at`. */
  const keepIn = (at: string, bytes: Uint8Array, durable = true): Effect.Effect<Version, StateError> => {
    const hash = ReadProof.hash(bytes)
    if (bytes.length > options.maxFileBytes) return Effect.succeed({ hash, size: bytes.length, kept: false })
    return Effect.gen(function* () {
      const there = yield* attemptSync(() => fs.lstatSync(path.join(at, hash))).pipe(Effect.option)
      // Kept already (the same content, by any file): nothing to write.
      if (there._tag === "Some" && there.value.isFile() && there.value.size === bytes.length) {
        return { hash, size: bytes.length, kept: true }
      }
      if (there._tag === "Some") yield* attemptSync(() => fs.unlinkSync(path.join(at, hash))).pipe(Effect.ignore)
      if (durable) yield* createExclusive(at, hash, shown(hash), bytes, 0o600)
      else {
        // Written aside and linked into place: a reader never sees a part, and a name taken meanwhile is the same content.
        const aside = path.join(at, `.${hash}.${randomBytes(6).toString("hex")}.ugent-tmp`)
        yield* callSync(
          () => fs.writeFileSync(aside, bytes, { mode: 0o600, flag: "wx" }),
          failure(shown(hash), "write")
        )
        yield* attemptSync(() => fs.linkSync(aside, path.join(at, hash))).pipe(
          Effect.catch((e) =>
            e.code === "EEXIST" ? Effect.void : Effect.fail(failure(shown(hash), "write")(e.cause))
          ),
          Effect.ensuring(Effect.sync(() => fs.rmSync(aside, { force: true })))
        )
      }
      return { hash, size: bytes.length, kept: true }
    })
  }
  const keep = (bytes: Uint8Array): Effect.Effect<Version, StateError> =>
    bytes.length > options.maxFileBytes
      ? Effect.succeed({ hash: ReadProof.hash(bytes), size: bytes.length, kept: false })
      : inFolder((at) => keepIn(at, bytes))
  const keepAll = (
    contents: ReadonlyArray<Uint8Array>,
    o: { readonly durable: boolean }
  ): Effect.Effect<ReadonlyArray<Version>, StateError> =>
    contents.length === 0
      ? Effect.succeed([])
      : inFolder((at) => Effect.forEach(contents, (bytes) => keepIn(at, bytes, o.durable)))

  const record = (files: ReadonlyArray<Change>): Effect.Effect<Entry, StateError> =>
    Effect.gen(function* () {
      const observer = yield* Effect.serviceOption(Observer.Observer)
      const call = yield* CurrentCall
      const at = yield* Clock.currentTimeMillis
      const entry: Entry = {
        id: `${at.toString(36)}-${randomBytes(4).toString("hex")}`,
        at,
        caller: Option.isSome(observer) ? observer.value.id : "anonymous",
        ...(call?.session === undefined ? {} : { session: call.session }),
        ...(call === undefined ? {} : { callId: call.id, tool: call.tool }),
        files: [...files]
      }
      yield* lock.withPermit(
        inFolder((dir) =>
          Effect.gen(function* () {
            yield* append(dir, `${JSON.stringify(entry)}\n`)
            const entries = yield* refresh(dir)
            yield* trim(dir, entries)
          })
        )
      )
      return entry
    })

  const content = (version: Version): Effect.Effect<Uint8Array | undefined, StateError> =>
    !version.kept || !hashName.test(version.hash)
      ? Effect.succeed(undefined)
      : inFolder((at) =>
          attemptSync(() => fs.readFileSync(path.join(at, version.hash), { flag: readFlags })).pipe(
            Effect.map((bytes) => (ReadProof.hash(bytes) === version.hash ? new Uint8Array(bytes) : undefined)),
            Effect.catch((e) =>
              e.code === "ENOENT" || e.code === "ELOOP"
                ? Effect.succeed(undefined)
                : Effect.fail(failure(shown(version.hash), "read")(e.cause))
            )
          )
        )

  return {
    options,
    keep,
    keepAll,
    pinned,
    record,
    entries: lock.withPermit(inFolder((at) => Effect.map(refresh(at), (entries) => [...entries]))),
    content,
    restoring: Semaphore.makeUnsafe(1),
    folder: inFolder(() => Effect.succeed(dir))
  }
}
