/**
 * One writer at a time per directory entry. A write checks that the file
 * still hashes to the caller's proof and then renames over it; two writers
 * with the proof of one version could both pass the check before either
 * renames, and one change would be lost. Holding this lock across the check
 * and the rename makes the second writer see the first one's bytes and fail.
 *
 * The key is the entry's identity (the verified parent directory's device and
 * inode, and the name), so every spelling of the path (a link, an absolute
 * path, `a/../b`) and every `Workspace` of the process meets the same lock.
 *
 * @internal
 */
import { Effect, Semaphore } from "effect"

interface Entry {
  readonly semaphore: Semaphore.Semaphore
  users: number
}

// Process-wide, not per workspace: two workspaces over one directory write the same files.
const locks = new Map<string, Entry>()

/** Runs `effect` holding the lock of `key`; the entry is dropped when no one holds or waits for it. */
export const withEntryLock = <A, E, R>(key: string, effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.suspend(() => {
    let entry = locks.get(key)
    if (entry === undefined) {
      entry = { semaphore: Semaphore.makeUnsafe(1), users: 0 }
      locks.set(key, entry)
    }
    const held = entry
    held.users++
    return held.semaphore.withPermit(effect).pipe(
      Effect.ensuring(
        Effect.sync(() => {
          held.users--
          if (held.users === 0) locks.delete(key)
        })
      )
    )
  })

/** The key of the entry `name` in the directory with this device and inode. */
export const entryKey = (dir: { readonly dev: number; readonly ino: number }, name: string): string =>
  `${dir.dev}:${dir.ino}/${name}`

/** How many entries are locked or awaited now (for tests: the map must not grow). */
export const lockedEntries = (): number => locks.size
