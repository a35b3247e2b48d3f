/**
 * What a shell command changed in the workspace, for its checkpoint. A
 * command writes files in place, so their content before it must be kept
 * before it runs: the watch keeps a baseline, a copy of every file's content
 * (in the checkpoint store, each content once by hash), made once when the
 * first command runs, and kept current by the kernel's notices (inotify,
 * through one `fs.watch` per directory): a file changed by anyone between two
 * commands is copied again before the next one runs. A command's own changes
 * are the notices that arrive while it runs; each changed file's content
 * before is the baseline's and its content after is read and kept, so an
 * unchanged workspace costs a command nothing but an empty set to look at.
 *
 * What is left out: names the policy ignores (`node_modules`, `.git`,
 * `dist`, `build`) or blocks (secrets, `.ugent`), symbolic links, and empty
 * directories. A content over the store's per-file cap is recorded by hash
 * only (a restore of it is refused). Commands are captured one at a time
 * (a second waits for the first); background runs are not captured, and a
 * change someone else makes while a command runs is recorded as the
 * command's. The kernel drops notices past its queue (16,384 by default): a
 * command that changes more files than that at once is not fully recorded.
 *
 * @internal
 */
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import { constants } from "node:fs"
import * as path from "node:path"
import { Effect, Semaphore } from "effect"
import type { Change, Entry, Store, Version } from "./checkpoints.ts"
import type { Jail } from "./resolve.ts"
import type { StateError } from "./state.ts"

const readFlags = constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW
const procFd = fs.existsSync("/proc/self/fd")

interface Known {
  readonly version: Version
  /** Inode, size and times when it was read: the same four mean the same content. */
  readonly identity: string
}

/** A regular file as read now: its identity and bytes (or, over the cap, hash and size only). */
interface Seen {
  readonly identity: string
  readonly bytes: Uint8Array | undefined
  readonly hash: string | undefined
  readonly size: number
}

export interface Watch {
  /** Runs a foreground command and records what it changed as one checkpoint of the call in progress. */
  readonly capture: <A, E, R>(
    effect: Effect.Effect<A, E, R>
  ) => Effect.Effect<readonly [A, Entry | undefined], E | StateError, R>
  /** The workspace's own write of a file: its new content is known, not a change of the next command. */
  readonly wrote: (relative: string, version: Version) => void
}

const identityOf = (st: fs.Stats) => `${st.ino}:${st.size}:${st.mtimeMs}:${st.ctimeMs}`

const watches = new WeakMap<Store, Watch>()

/** The watch of a store's workspace (one per store, started by the first capture). */
export const watchOf = (jail: Jail, store: Store): Watch => {
  let found = watches.get(store)
  if (found === undefined) {
    found = make(jail, store)
    watches.set(store, found)
  }
  return found
}

const make = (jail: Jail, store: Store): Watch => {
  const root = jail.root
  const cap = store.options.maxFileBytes
  const known = new Map<string, Known>()
  const dirs = new Map<string, { readonly watcher: fs.FSWatcher; readonly ino: number }>()
  const dirty = new Set<string>()
  const lock = Semaphore.makeUnsafe(1)
  let started = false
  let sentinel: string | undefined
  const waiting: Array<() => void> = []
  let pinnedBytes = 0

  const abs = (rel: string) => (rel === "" ? root : path.join(root, rel))
  const under = (rel: string, dir: string) => dir === "" || rel === dir || rel.startsWith(`${dir}/`)
  const skipped = (rel: string) => jail.policy.isIgnored(rel) || jail.policy.blockedBy(rel) !== undefined

  const unwatch = (rel: string) => {
    for (const [dir, w] of dirs) {
      if (under(dir, rel)) {
        w.watcher.close()
        dirs.delete(dir)
      }
    }
  }

  const watchDir = (rel: string, ino: number): boolean => {
    try {
      const watcher = fs.watch(abs(rel), { persistent: false, encoding: "utf8" }, (_event, name) => {
        dirty.add(name === null ? rel : rel === "" ? name : `${rel}/${name}`)
      })
      // A directory removed or moved away: what it held is looked at again.
      watcher.on("error", () => {
        unwatch(rel)
        dirty.add(rel)
      })
      dirs.set(rel, { watcher, ino })
      return true
    } catch {
      return false
    }
  }

  /** Watches `rel` (a directory) and everything below it, calling `file` for each regular file and `dir` for each directory below. */
  const scan = (rel: string, file: (rel: string) => void, dir: (rel: string) => void = () => {}): void => {
    let st: fs.Stats
    try {
      st = fs.lstatSync(abs(rel))
    } catch {
      return
    }
    if (!st.isDirectory()) return
    const current = dirs.get(rel)
    if (current !== undefined && current.ino !== st.ino) unwatch(rel)
    // Watched before it is listed: an entry made after the listing is a notice.
    if (!dirs.has(rel) && !watchDir(rel, st.ino)) return
    let entries: Array<fs.Dirent>
    try {
      entries = fs.readdirSync(abs(rel), { withFileTypes: true })
    } catch {
      return
    }
    for (const entry of entries) {
      const child = rel === "" ? entry.name : `${rel}/${entry.name}`
      if (skipped(child)) continue
      if (entry.isDirectory()) {
        dir(child)
        scan(child, file, dir)
      } else if (entry.isFile()) file(child)
    }
  }

  /** Reads a regular file by its exact path (no link on the way, checked on the descriptor); `undefined` otherwise. */
  const read = (rel: string): Seen | undefined => {
    const at = abs(rel)
    let fd: number
    try {
      fd = fs.openSync(at, readFlags)
    } catch {
      return undefined
    }
    try {
      const st = fs.fstatSync(fd)
      if (!st.isFile()) return undefined
      if (procFd && fs.readlinkSync(`/proc/self/fd/${fd}`) !== at) return undefined
      if (st.size <= cap) {
        const buffer = Buffer.allocUnsafe(st.size + 1)
        let length = 0
        while (length < buffer.length) {
          const n = fs.readSync(fd, buffer, length, buffer.length - length, null)
          if (n === 0) break
          length += n
        }
        if (length <= cap) {
          return {
            identity: identityOf(st),
            bytes: new Uint8Array(buffer.subarray(0, length)),
            hash: undefined,
            size: length
          }
        }
      }
      const hash = createHash("sha256")
      const chunk = Buffer.allocUnsafe(1 << 16)
      let size = 0
      let n = fs.readSync(fd, chunk, 0, chunk.length, 0)
      while (n > 0) {
        hash.update(chunk.subarray(0, n))
        size += n
        n = fs.readSync(fd, chunk, 0, chunk.length, size)
      }
      return { identity: identityOf(st), bytes: undefined, hash: hash.digest("hex"), size }
    } catch {
      return undefined
    } finally {
      fs.closeSync(fd)
    }
  }

  /** The versions of files read now: contents within the cap kept (one opening of the store for all). */
  const keepSeen = (
    seen: ReadonlyArray<readonly [string, Seen]>,
    durable: boolean
  ): Effect.Effect<ReadonlyArray<readonly [string, Known]>, StateError> =>
    Effect.gen(function* () {
      const contents = seen.flatMap(([, s]) => (s.bytes === undefined ? [] : [s.bytes]))
      const versions = yield* store.keepAll(contents, { durable })
      let i = 0
      return seen.map(([rel, s]): readonly [string, Known] => {
        const version = s.bytes === undefined ? { hash: s.hash!, size: s.size, kept: false } : versions[i++]!
        return [rel, { version, identity: s.identity }]
      })
    })

  const remember = (rel: string, k: Known) => {
    const before = known.get(rel)
    if (before !== undefined && before.version.kept) pinnedBytes -= before.version.size
    known.set(rel, k)
    if (k.version.kept) {
      store.pinned.add(k.version.hash)
      pinnedBytes += k.version.size
    }
  }

  /** Sorts out the paths noticed since the last time: `[path, before, after]` for each file whose content changed. */
  const settle = (
    durable: boolean
  ): Effect.Effect<{ readonly changes: ReadonlyArray<Change>; readonly made: ReadonlyArray<string> }, StateError> =>
    Effect.gen(function* () {
      const files = new Set<string>()
      const made: Array<string> = []
      const vanished = new Set<string>()
      while (dirty.size > 0) {
        const batch = [...dirty]
        dirty.clear()
        for (const rel of batch) {
          if (rel !== "" && skipped(rel)) continue
          let st: fs.Stats | undefined
          try {
            st = fs.lstatSync(abs(rel))
          } catch {
            st = undefined
          }
          if (st?.isDirectory()) {
            const watched = dirs.get(rel)
            if (watched === undefined || watched.ino !== st.ino) {
              if (watched === undefined && rel !== "") made.push(rel)
              // A new directory (or another one moved here): everything in it is new here.
              for (const k of known.keys()) if (rel !== "" && under(k, rel)) files.add(k)
              scan(
                rel,
                (f) => files.add(f),
                (d) => {
                  if (watched === undefined) made.push(d)
                }
              )
            }
            continue
          }
          // Gone, a link, or a file: if it was a directory, what was known under it is gone.
          if (rel !== "" && !known.has(rel)) {
            unwatch(rel)
            vanished.add(rel)
          }
          files.add(rel)
        }
      }
      if (vanished.size > 0) {
        for (const k of known.keys()) {
          for (let slash = k.indexOf("/"); slash !== -1; slash = k.indexOf("/", slash + 1)) {
            if (vanished.has(k.slice(0, slash))) {
              files.add(k)
              break
            }
          }
        }
      }
      const seen: Array<readonly [string, Seen]> = []
      const gone: Array<string> = []
      for (const rel of files) {
        const before = known.get(rel)
        const now = read(rel)
        if (now === undefined) {
          if (before !== undefined) gone.push(rel)
          continue
        }
        if (before !== undefined && before.identity === now.identity) continue
        seen.push([rel, now])
      }
      const kept = yield* keepSeen(seen, durable)
      const changes: Array<Change> = []
      for (const [rel, now] of kept) {
        const before = known.get(rel)
        remember(rel, now)
        if (before?.version.hash !== now.version.hash) {
          changes.push({ path: rel, before: before?.version ?? null, after: now.version })
        }
      }
      for (const rel of gone) {
        const before = known.get(rel)!
        if (before.version.kept) pinnedBytes -= before.version.size
        known.delete(rel)
        changes.push({ path: rel, before: before.version, after: null })
      }
      return { changes, made }
    })

  /**
   * Waits until every notice queued so far has been delivered: the kernel
   * queues notices in order on the one inotify descriptor all watches share,
   * so when the notice of a touch of our own sentinel file (in the store's
   * folder) arrives, every earlier one has. Without a sentinel, or if its
   * notice is late, two turns of the event loop (one through its poll).
   */
  const flush: Effect.Effect<void> = Effect.callback<void>((resume) => {
    let done = false
    const finish = () => {
      if (done) return
      done = true
      clearTimeout(timer)
      resume(Effect.void)
    }
    const timer = setTimeout(finish, sentinel === undefined ? 0 : 100)
    if (sentinel === undefined) return
    waiting.push(finish)
    try {
      fs.writeFileSync(sentinel, "", { mode: 0o600 })
    } catch {
      // The notice will not come: the timer ends the wait.
    }
  }).pipe(Effect.andThen(Effect.promise(() => new Promise<void>((resolve) => setImmediate(resolve)))))

  /** Watches the whole workspace and copies every file once (yielding between batches). */
  const start = Effect.gen(function* () {
    const folder = yield* store.folder
    try {
      const watcher = fs.watch(folder, { persistent: false, encoding: "utf8" }, (_event, name) => {
        if (name !== ".sync") return
        for (const finish of waiting.splice(0)) finish()
      })
      watcher.on("error", () => {
        sentinel = undefined
      })
      sentinel = path.join(folder, ".sync")
    } catch {
      sentinel = undefined
    }
    const found: Array<string> = []
    scan("", (f) => found.push(f))
    for (let i = 0; i < found.length; i += 256) {
      const seen: Array<readonly [string, Seen]> = []
      for (const rel of found.slice(i, i + 256)) {
        const s = read(rel)
        if (s === undefined) continue
        // Past the store's total, the baseline keeps hashes only: a restore of such a file is refused.
        seen.push([
          rel,
          pinnedBytes + s.size > store.options.maxTotalBytes
            ? { ...s, bytes: undefined, hash: s.hash ?? hashOf(s.bytes!) }
            : s
        ])
      }
      for (const [rel, k] of yield* keepSeen(seen, false)) remember(rel, k)
      yield* Effect.yieldNow
    }
    started = true
  })

  const capture = <A, E, R>(
    effect: Effect.Effect<A, E, R>
  ): Effect.Effect<readonly [A, Entry | undefined], E | StateError, R> =>
    lock.withPermit(
      Effect.gen(function* () {
        if (!started) yield* start
        // Changes since the last command are someone else's: the baseline takes them in, unrecorded.
        yield* flush
        yield* settle(false)
        const result = yield* effect
        // The command has exited: its notices are queued; the flush delivers them all.
        yield* flush
        const { changes, made } = yield* settle(true)
        if (changes.length === 0) return [result, undefined] as const
        // The directories it made go with the first file recorded under each, so a restore removes them when empty.
        const withDirs = changes.map((c) => {
          const mine = made.filter((d) => c.before === null && under(c.path, d))
          return mine.length > 0 ? { ...c, dirs: mine } : c
        })
        const assigned = new Set<string>()
        const recorded = withDirs.map((c) => {
          if (c.dirs === undefined) return c
          const fresh = c.dirs.filter((d) => !assigned.has(d))
          for (const d of fresh) assigned.add(d)
          const { dirs: _, ...rest } = c
          return fresh.length > 0 ? { ...rest, dirs: fresh } : rest
        })
        return [result, yield* store.record(recorded)] as const
      })
    )

  const wrote = (relative: string, version: Version) => {
    if (!started) return
    try {
      remember(relative, { version, identity: identityOf(fs.lstatSync(abs(relative))) })
    } catch {
      dirty.add(relative)
    }
  }

  return { capture, wrote }
}

const hashOf = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex")
