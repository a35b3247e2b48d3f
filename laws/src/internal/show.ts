/**
 * Printing generated values for a person reading a falsified law, and a
 * stable hash of any value. Effect's `Formatter` prints a tagged error as its
 * bare class name and a tool as its whole metadata; a report needs the fields
 * of one and only the name of the other.
 *
 * @internal
 */
import { Cause, Exit, Predicate } from "effect"

const ToolTypeId = "~ugent/Tool"

/** A pure function with a name, so that a report can say which one was generated. */
export class NamedFunction<in A, out B> {
  readonly name: string
  readonly apply: (a: A) => B
  constructor(name: string, apply: (a: A) => B) {
    this.name = name
    this.apply = apply
  }
  toString(): string {
    return `fn(${this.name})`
  }
}

const maxDepth = 6
const maxItems = 12
const maxString = 200

const clip = (s: string): string => (s.length > maxString ? `${s.slice(0, maxString)}… (${s.length} chars)` : s)

/** A one-line, bounded rendering of any value. */
export const show = (value: unknown): string => render(value, 0, new Set())

const render = (value: unknown, depth: number, seen: Set<unknown>): string => {
  switch (typeof value) {
    case "string":
      return clip(JSON.stringify(value))
    case "number":
      return Object.is(value, -0) ? "-0" : String(value)
    case "bigint":
      return `${value}n`
    case "boolean":
    case "undefined":
      return String(value)
    case "symbol":
      return value.toString()
    case "function":
      return `<function ${value.name || "anonymous"}>`
  }
  if (value === null) return "null"
  if (seen.has(value)) return "<circular>"
  if (value instanceof NamedFunction) return value.toString()
  if (Predicate.hasProperty(value, ToolTypeId) && Predicate.hasProperty(value, "name")) {
    return `Tool(${String(value.name)})`
  }
  if (depth >= maxDepth) return "…"
  seen.add(value)
  try {
    if (Exit.isExit(value)) return renderExit(value, depth, seen)
    if (Array.isArray(value)) {
      const items = value.slice(0, maxItems).map((v) => render(v, depth + 1, seen))
      if (value.length > maxItems) items.push(`… ${value.length - maxItems} more`)
      return `[${items.join(", ")}]`
    }
    if (value instanceof Date) return `Date(${Number.isNaN(value.getTime()) ? "invalid" : value.toISOString()})`
    if (value instanceof Uint8Array) return `Uint8Array(${value.length})`
    if (value instanceof Map) {
      const pairs: Array<string> = []
      for (const [k, v] of value as Map<unknown, unknown>)
        pairs.push(`${render(k, depth + 1, seen)} => ${render(v, depth + 1, seen)}`)
      return `Map(${pairs.join(", ")})`
    }
    if (value instanceof Set) return `Set(${[...value].map((v) => render(v, depth + 1, seen)).join(", ")})`
    const entries = Object.entries(value as object).filter(([k]) => k !== "stack")
    const body = entries
      .slice(0, maxItems)
      .map(([k, v]) => `${/^[A-Za-z_$][\w$]*$/.test(k) ? k : JSON.stringify(k)}: ${render(v, depth + 1, seen)}`)
    if (entries.length > maxItems) body.push(`… ${entries.length - maxItems} more`)
    const tag = Predicate.hasProperty(value, "_tag") && typeof value._tag === "string" ? value._tag : undefined
    if (value instanceof Error) {
      const fields = entries.filter(([k]) => k !== "_tag").length
      const head = tag ?? value.name
      return fields === 0
        ? `${head}(${JSON.stringify(clip(value.message))})`
        : `${head}({ ${body.filter((b) => !b.startsWith("_tag:")).join(", ")} })`
    }
    const proto = Object.getPrototypeOf(value)
    const className =
      proto !== null &&
      proto !== Object.prototype &&
      typeof proto.constructor === "function" &&
      proto.constructor.name !== "Object"
        ? proto.constructor.name
        : undefined
    const prefix = className !== undefined && tag === undefined ? `${className} ` : ""
    return body.length === 0 ? `${prefix}{}` : `${prefix}{ ${body.join(", ")} }`
  } finally {
    seen.delete(value)
  }
}

const renderExit = (exit: Exit.Exit<unknown, unknown>, depth: number, seen: Set<unknown>): string => {
  if (Exit.isSuccess(exit)) return `Success(${render(exit.value, depth + 1, seen)})`
  const reasons = exit.cause.reasons.map((r) => {
    if (Cause.isFailReason(r)) return `Fail(${render(r.error, depth + 1, seen)})`
    if (Cause.isDieReason(r)) return `Die(${defectMessage(r.defect)})`
    return "Interrupt"
  })
  return `Failure(${reasons.join(", ") || "empty cause"})`
}

/** The message of a defect: the `message` of an `Error`, otherwise its rendering. */
export const defectMessage = (defect: unknown): string =>
  defect instanceof Error ? `${defect.name}: ${defect.message}` : show(defect)

/** FNV-1a over the rendering: stable across runs and processes, unlike reference hashes. */
export const stableHash = (value: unknown): number => {
  const s = show(value)
  let h = 0x811c9dc5
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i)
    h = Math.imul(h, 0x01000193)
  }
  return h >>> 0
}
