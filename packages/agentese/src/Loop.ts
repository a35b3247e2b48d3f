/**
 * The loop detector stops a caller that repeats itself without progress: the
 * same normalized call (the decoded input, paths spelled canonically) that
 * gave the same result `count` times within the window, with nothing written
 * in between, is refused. A write anywhere in the workspace, or a different
 * result, is progress: read → edit → read is never a loop, and neither is
 * polling a status that changes. An ignored extra key, another spelling of
 * a path (`./src/a.txt`, `src//a.txt`, a link inside the workspace and the
 * file it leads to) or a default spelled out (`offset: 1`) is the same call.
 *
 * @since 0.2.0
 */
import { createHash } from "node:crypto"
import { realpathSync } from "node:fs"
import { isAbsolute, join, posix, relative, sep } from "node:path"
import { ReadProof, type ToolError } from "@ugent/core"
import { Clock, Context, Effect, Layer, Schema, SchemaAST } from "effect"
import type { LoopSettings } from "./Profile.ts"

/**
 * The same call gave the same result too often, with nothing written in
 * between: a loop.
 *
 * @category errors
 * @since 0.1.0
 */
export class LoopDetected extends Schema.TaggedError<LoopDetected>()("LoopDetected", {
  path: Schema.String,
  count: Schema.Int,
  windowMillis: Schema.Int
}) {
  static readonly kind: ToolError.Kind = "rate_limited"
  override get message(): string {
    return `${this.path} was not called again: the same call returned the same result ${this.count} times within ${this.windowMillis / 1000} s and nothing in the workspace changed, so it would only repeat itself. Use the result you already have, change the input, or make progress first (a write counts).`
  }
}

/**
 * @category models
 * @since 0.2.0
 */
export interface LoopDetectorShape {
  /** Before a call: refuses it when it is a loop. */
  readonly check: (key: string, path: string, settings: LoopSettings) => Effect.Effect<void, LoopDetected>
  /** After a successful call: records its result's fingerprint. */
  readonly record: (key: string, fingerprint: string, settings: LoopSettings) => Effect.Effect<void>
  /** Something was written: every call is progress again. */
  readonly progress: Effect.Effect<void>
}

/**
 * @category services
 * @since 0.2.0
 */
export class LoopDetector extends Context.Service<LoopDetector, LoopDetectorShape>()("ugent/agentese/LoopDetector") {}

interface Seen {
  fingerprint: string
  epoch: number
  /** When the identical results came back (epoch milliseconds), oldest first: at most `count` of them, within the window. */
  times: Array<number>
}

/**
 * A detector in memory, for one process.
 *
 * **Example** (Three identical results, then a refusal; a write is progress)
 * ```ts
 * import { Loop } from "@ugent/agentese"
 * import { Effect } from "effect"
 * const settings = { count: 3, windowMillis: 60_000 }
 * const program = Effect.gen(function* () {
 *   const loops = yield* Loop.LoopDetector
 *   for (let i = 0; i < 3; i++) {
 *     yield* loops.check("k", "world.tools.git.status", settings)
 *     yield* loops.record("k", "same", settings)
 *   }
 *   const refused = yield* Effect.flip(loops.check("k", "world.tools.git.status", settings))
 *   yield* loops.progress
 *   yield* loops.check("k", "world.tools.git.status", settings)
 *   return refused._tag
 * })
 * console.log(Effect.runSync(program.pipe(Effect.provide(Loop.layerMemory))))
 * // => LoopDetected
 * ```
 *
 * @category layers
 * @since 0.2.0
 */
export const layerMemory: Layer.Layer<LoopDetector> = Layer.sync(LoopDetector, () => {
  const seen = new Map<string, Seen>()
  let epoch = 0
  // Stale keys are swept when the map doubles past its last sweep: amortized O(1) per call.
  let sweepAt = 10_000
  const sweep = (now: number, windowMillis: number) => {
    if (seen.size <= sweepAt) return
    for (const [k, s] of seen) {
      if (s.epoch !== epoch || now - (s.times.at(-1) ?? 0) >= windowMillis) seen.delete(k)
    }
    sweepAt = Math.max(10_000, seen.size * 2)
  }
  return LoopDetector.of({
    check: (key, path, settings) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) => {
        const s = seen.get(key)
        if (s === undefined || s.epoch !== epoch) return Effect.void
        // Times are in order: `count` of them within the window means the last `count` are.
        const { times } = s
        const first = times.length - settings.count
        if (first < 0 || now - times[first]! >= settings.windowMillis) return Effect.void
        const recent = times.length - times.findIndex((t) => now - t < settings.windowMillis)
        return Effect.fail(new LoopDetected({ path, count: recent, windowMillis: settings.windowMillis }))
      }),
    record: (key, fingerprint, settings) =>
      Effect.map(Clock.currentTimeMillis, (now) => {
        const s = seen.get(key)
        if (s !== undefined && s.epoch === epoch && s.fingerprint === fingerprint) {
          const { times } = s
          times.push(now)
          // Only the last `count` times within the window can make a loop: keep no more (O(count) per call).
          let drop = Math.max(0, times.length - settings.count)
          while (drop < times.length && now - times[drop]! >= settings.windowMillis) drop++
          if (drop > 0) times.splice(0, drop)
        } else {
          seen.set(key, { fingerprint, epoch, times: [now] })
        }
        sweep(now, settings.windowMillis)
      }),
    progress: Effect.sync(() => {
      epoch++
      // Every entry is now stale; drop them at once rather than on the next sweep.
      seen.clear()
    })
  })
})

const pathKeys = new Set(["path", "paths", "cwd", "dir", "directory", "file", "files"])

/**
 * A path spelled canonically: relative to the root when inside it,
 * normalized (`./a`, `a//b`, `a/./b`, `a/x/../b` and a trailing `/` are
 * spelled `a`, `a/b`, `a/b`, `a/b`, `a`).
 *
 * @category keys
 * @since 0.2.0
 */
export const canonicalPath = (p: string, root: string | undefined): string => {
  let s = p
  if (root !== undefined && isAbsolute(s)) {
    const r = relative(root, s)
    if (!r.startsWith("..") && !isAbsolute(r)) s = r === "" ? "." : r.split(sep).join("/")
  }
  const n = posix.normalize(s.replaceAll("\\", "/"))
  return n.length > 1 && n.endsWith("/") ? n.slice(0, -1) : n
}

const realRoots = new Map<string, string | undefined>()

/** The root's own real path, found once. */
const realRoot = (root: string): string | undefined => {
  if (!realRoots.has(root)) {
    let real: string | undefined
    try {
      real = realpathSync.native(root)
    } catch {
      real = undefined
    }
    realRoots.set(root, real)
  }
  return realRoots.get(root)
}

/**
 * A path named by what it leads to: {@link canonicalPath}, then, when it
 * exists and its real path lies inside the root, that real path (so a link
 * inside the workspace and its target are one path). A missing path, or one
 * that leads outside (the tool refuses it anyway), keeps its spelling.
 */
const realPathKey = (p: string, root: string | undefined): string => {
  const spelled = canonicalPath(p, root)
  const base = root === undefined ? undefined : realRoot(root)
  if (base === undefined) return spelled
  try {
    // Lookups only (lstat, readlink): nothing is opened, so a FIFO or a device cannot block here.
    const r = relative(base, realpathSync.native(isAbsolute(spelled) ? spelled : join(base, spelled)))
    if (r === "") return "."
    if (r !== ".." && !r.startsWith(`..${sep}`) && !isAbsolute(r)) return r.split(sep).join("/")
  } catch {
    // Missing, or not reachable: the spelling is the key.
  }
  return spelled
}

const normalize = (value: unknown, root: string | undefined, inPathKey: boolean): unknown => {
  if (typeof value === "string") return inPathKey ? realPathKey(value, root) : value
  if (Array.isArray(value)) return value.map((v) => normalize(v, root, inPathKey))
  if (ReadProof.isProofLike(value)) return { proof: value.hash, coverage: value.coverage, path: value.path }
  if (typeof value === "object" && value !== null) {
    const out: Record<string, unknown> = {}
    for (const k of Object.keys(value).sort()) {
      out[k] = normalize((value as Record<string, unknown>)[k], root, pathKeys.has(k))
    }
    return out
  }
  return value
}

const defaultsBySchema = new WeakMap<SchemaAST.AST, ReadonlyArray<readonly [string, unknown]>>()

/** The `default` annotations of a struct schema's fields, read once per schema. */
const defaultsOf = (ast: SchemaAST.AST): ReadonlyArray<readonly [string, unknown]> => {
  let found = defaultsBySchema.get(ast)
  if (found === undefined) {
    found = SchemaAST.isObjects(ast)
      ? ast.propertySignatures.flatMap((field) => {
          const value = SchemaAST.resolveAt<unknown>("default")(field.type)
          return typeof field.name === "string" && value !== undefined ? [[field.name, value] as const] : []
        })
      : []
    defaultsBySchema.set(ast, found)
  }
  return found
}

/** The input with each field its schema declares a default for filled in when absent. */
const withDefaults = (input: unknown, schema: { readonly ast: SchemaAST.AST } | undefined): unknown => {
  if (schema === undefined || typeof input !== "object" || input === null || Array.isArray(input)) return input
  const defaults = defaultsOf(schema.ast)
  if (defaults.length === 0) return input
  const filled: Record<string, unknown> = { ...input }
  for (const [k, v] of defaults) if (filled[k] === undefined) filled[k] = v
  return filled
}

/**
 * The key of a call: its caller, its path and its decoded input with the
 * defaults its schema declares (`default` annotations) filled in, paths
 * named by what they lead to, and keys sorted (a decoded input has no
 * ignored keys).
 *
 * @category keys
 * @since 0.2.0
 */
export const keyOf = (
  observerId: string,
  path: string,
  decodedInput: unknown,
  root?: string,
  schema?: { readonly ast: SchemaAST.AST }
): string =>
  `${observerId}\u0000${path}\u0000${JSON.stringify(normalize(withDefaults(decodedInput, schema), root, false))}`

/**
 * The fingerprint of a result: a hash of its decoded value, with each read
 * proof counted by what it proves (its file, hash and coverage), not by its
 * token, which differs on every read.
 *
 * @category keys
 * @since 0.2.0
 */
export const fingerprint = (output: unknown): string =>
  createHash("sha1")
    // One tool gives one result in one key order, so keys need no sorting (sorting a large result cost milliseconds).
    .update(JSON.stringify(output, byWhatItProves) ?? "undefined")
    .digest("base64")

/** A replacer that counts a proof by what it proves (it sees the holder's own value, before `toJSON`). */
function byWhatItProves(this: unknown, key: string, value: unknown): unknown {
  const own = (this as Record<string, unknown>)[key]
  return ReadProof.isProofLike(own) ? { proof: own.hash, coverage: own.coverage, path: own.path } : value
}
