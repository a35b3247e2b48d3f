/**
 * Sweeps the temporary files of atomic writes that no writer will finish. A
 * writer killed between making its temporary file and renaming it (kill -9,
 * a crash, a lost machine) leaves `.name.<hex>.ugent-tmp` behind. The next
 * write in that directory removes such files once they are older than
 * {@link staleAfterMillis} and no write of this process is still using them;
 * a directory is swept at most once per {@link sweepEveryMillis}.
 *
 * @internal
 */
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import { Effect, type Scope } from "effect"
import { attempt } from "./system.ts"

/** A temporary file untouched this long has no live writer: a write holds one for milliseconds. */
export const staleAfterMillis = 10 * 60_000

/** How often one directory is looked at again. */
export const sweepEveryMillis = 60_000

/** The name of a temporary file for `name`, with 12 hex digits of randomness. */
export const tempName = (name: string, hex: string): string => `.${name}.${hex}.ugent-tmp`

const pattern = /^\..+\.[0-9a-f]{12}\.ugent-tmp$/

// The temporary files this process is writing (by directory identity and name), and when each directory was last swept.
const live = new Set<string>()
const swept = new Map<string, number>()

/** Marks a temporary file as being written for the scope. */
export const writing = (key: string): Effect.Effect<void, never, Scope.Scope> =>
  Effect.acquireRelease(
    Effect.sync(() => live.add(key)),
    () => Effect.sync(() => live.delete(key))
  ).pipe(Effect.asVoid)

/**
 * Removes stale temporary files from the directory that `base` names (a
 * verified descriptor's path), keyed for liveness by `identity`; `shown` keys
 * the once-per-interval throttle. Best effort: a failure leaves files for the
 * next sweep and never fails the write.
 */
export const sweepOnce = (base: string, shown: string, identity: (name: string) => string): Effect.Effect<void> =>
  Effect.gen(function* () {
    const now = Date.now()
    const last = swept.get(shown)
    if (last !== undefined && now - last < sweepEveryMillis) return
    swept.set(shown, now)
    if (swept.size > 10_000) {
      for (const [dir, at] of swept) if (now - at >= sweepEveryMillis) swept.delete(dir)
    }
    const names = yield* attempt(() => fsp.readdir(base))
    for (const name of names) {
      if (!pattern.test(name) || live.has(identity(name))) continue
      const at = path.join(base, name)
      const st = yield* attempt(() => fsp.lstat(at)).pipe(Effect.option)
      if (st._tag === "None" || !st.value.isFile() || now - st.value.mtimeMs < staleAfterMillis) continue
      yield* attempt(() => fsp.unlink(at)).pipe(Effect.ignore)
    }
  }).pipe(Effect.ignore)

/** Forgets when directories were swept (for tests that sweep one directory twice). */
export const forgetSweeps = (): void => swept.clear()
