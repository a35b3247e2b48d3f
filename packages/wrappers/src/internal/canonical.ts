/**
 * Canonical JSON: the same value always prints to the same string, whatever
 * the order its object keys were inserted in. `Cached` keys entries by it.
 *
 * @internal
 */

/**
 * The canonical JSON text of a JSON-like value (object keys sorted, no
 * whitespace), or `undefined` when the value holds something JSON cannot
 * carry faithfully (a function, a symbol, a bigint, a non-finite number, a
 * class instance other than `Date`), so the caller can refuse to key by it.
 */
export const canonicalJson = (value: unknown): string | undefined => {
  const parts: Array<string> = []
  // Iterative over an explicit stack would be faster for deep values, but
  // encoded tool inputs are shallow; the depth guard keeps a cycle from looping.
  const visit = (v: unknown, depth: number): boolean => {
    if (depth > 64) return false
    switch (typeof v) {
      case "string":
        parts.push(JSON.stringify(v))
        return true
      case "number":
        if (!Number.isFinite(v)) return false
        parts.push(JSON.stringify(v))
        return true
      case "boolean":
        parts.push(v ? "true" : "false")
        return true
      case "object": {
        if (v === null) {
          parts.push("null")
          return true
        }
        if (Array.isArray(v)) {
          parts.push("[")
          for (let i = 0; i < v.length; i++) {
            if (i > 0) parts.push(",")
            if (!visit(v[i], depth + 1)) return false
          }
          parts.push("]")
          return true
        }
        if (v instanceof Date) {
          parts.push(JSON.stringify(v.toISOString()))
          return true
        }
        const proto = Object.getPrototypeOf(v)
        if (proto !== Object.prototype && proto !== null) return false
        const record = v as Record<string, unknown>
        const keys = Object.keys(record).sort()
        parts.push("{")
        let first = true
        for (const key of keys) {
          const field = record[key]
          // JSON drops undefined fields; so do we, so `{a: undefined}` keys like `{}`.
          if (field === undefined) continue
          if (!first) parts.push(",")
          first = false
          parts.push(JSON.stringify(key), ":")
          if (!visit(field, depth + 1)) return false
        }
        parts.push("}")
        return true
      }
      default:
        return false
    }
  }
  return visit(value, 0) ? parts.join("") : undefined
}
