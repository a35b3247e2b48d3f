/**
 * Turns any value into JSON that a store can keep: what the tool's schema
 * encodes when it can, and otherwise a faithful-enough plain copy (a bigint as
 * its digits, a `Date` as ISO text, an error as its tag and message, a
 * function or symbol as a description, a cycle as a marker).
 *
 * @internal
 */
import { Exit, Option, Schema } from "effect"

/**
 * Whether `v` is plain JSON already: null, strings, booleans, finite numbers,
 * arrays and plain objects of those, no deeper than 32 (a cycle is deeper).
 */
const isPlainJson = (v: unknown, depth: number): boolean => {
  if (v === null || typeof v === "string" || typeof v === "boolean") return true
  if (typeof v === "number") return Number.isFinite(v)
  if (typeof v !== "object" || depth > 32) return false
  if (Array.isArray(v)) {
    for (const x of v) if (!isPlainJson(x, depth + 1)) return false
    return true
  }
  const proto = Object.getPrototypeOf(v)
  if (proto !== Object.prototype && proto !== null) return false
  for (const key in v) if (!isPlainJson((v as Record<string, unknown>)[key], depth + 1)) return false
  return true
}

/**
 * `value` as plain JSON: itself when it is plain JSON already (values are
 * never mutated here, and copying a large result on every call costs
 * milliseconds), else a plain copy.
 */
export const jsonOf = (value: unknown): Schema.Json => {
  if (isPlainJson(value, 0)) return value as Schema.Json
  const seen = new Set<object>()
  const visit = (v: unknown, depth: number): Schema.Json => {
    if (v === null || typeof v === "string" || typeof v === "boolean") return v
    if (typeof v === "number") return Number.isFinite(v) ? v : String(v)
    if (typeof v === "bigint") return v.toString()
    if (typeof v === "undefined") return null
    if (typeof v === "function" || typeof v === "symbol") return `[${typeof v}]`
    if (depth > 32) return "[too deep]"
    if (seen.has(v)) return "[cycle]"
    if (v instanceof Date) return Number.isNaN(v.getTime()) ? "Invalid Date" : v.toISOString()
    if (v instanceof Uint8Array) return `[${v.length} bytes]`
    seen.add(v)
    try {
      if (Array.isArray(v)) return v.map((x) => visit(x, depth + 1))
      const out: Record<string, Schema.Json> = {}
      if (v instanceof Error) {
        out.message = v.message
        const tag = (v as { readonly _tag?: unknown })._tag
        if (typeof tag === "string") out._tag = tag
      }
      for (const [k, x] of Object.entries(v)) if (x !== undefined && k !== "stack") out[k] = visit(x, depth + 1)
      return out
    } finally {
      seen.delete(v)
    }
  }
  return visit(value, 0)
}

/** Encodes with `encode` (a schema's encoder) when it can, else copies; either way plain JSON. */
export const encodedJson = (encode: (u: unknown) => Option.Option<unknown>, value: unknown): Schema.Json => {
  const encoded = encode(value)
  return jsonOf(Option.isSome(encoded) ? encoded.value : value)
}

/**
 * An encoder that answers with an `Option`, built on the `Exit` encoder: the
 * `Option` one goes through more machinery and costs several times as much,
 * which matters on paths that run on every call.
 */
export const optionEncoder = (schema: Schema.Codec<unknown, unknown, never, never>) => {
  const encode = Schema.encodeUnknownExit(schema)
  return (u: unknown): Option.Option<unknown> => {
    const exit = encode(u)
    return Exit.isSuccess(exit) ? Option.some(exit.value) : Option.none()
  }
}
