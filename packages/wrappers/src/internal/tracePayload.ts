// What a trace store keeps of a record's payloads (input, output, error): by
// default a payload whose JSON text is longer than the head is kept as its
// first characters, with its full size and SHA-256, so a read of a large file
// costs a trace row of a few KB, not a copy of the file. Shared by every
// backend, so each keeps the same thing.
import { createHash } from "node:crypto"
import { Boundary } from "@ugent/core"
import { Duration } from "effect"
import type { TraceOptions, TraceRecord } from "./traceModel.ts"

export type Field = "input" | "output" | "error"
const fields: ReadonlyArray<Field> = ["input", "output", "error"]

export interface Policy {
  /** `"head"`: a payload longer than `headChars` keeps its head, size and hash; `"full"`: kept whole. */
  readonly payloads: "head" | "full"
  readonly headChars: number
}

export const defaults = {
  payloads: "head",
  // 1.5 KB: a row of a clipped read stays under half a 4 KB SQLite page, so two fit in one.
  headChars: 1536,
  retention: { maxAge: Duration.days(7), maxBytes: 200 * 1024 * 1024 }
} as const

/** The options in force, worked out once: no retention is an infinite age and size. */
export interface Resolved {
  readonly policy: Policy
  readonly maxAgeMillis: number
  readonly maxBytes: number
}

export const resolve = (options?: TraceOptions): Resolved => {
  const retention = options?.retention === false ? undefined : (options?.retention ?? {})
  return {
    policy: {
      payloads: options?.payloads ?? defaults.payloads,
      headChars: Math.max(0, Math.floor(options?.headChars ?? defaults.headChars))
    },
    maxAgeMillis:
      retention === undefined
        ? Number.POSITIVE_INFINITY
        : Duration.toMillis(Duration.fromInputUnsafe(retention.maxAge ?? defaults.retention.maxAge)),
    maxBytes: retention === undefined ? Number.POSITIVE_INFINITY : (retention.maxBytes ?? defaults.retention.maxBytes)
  }
}

/** A record as stored: the JSON text of each payload present (or its head), and the record's size in characters. */
export interface Stored {
  readonly record: TraceRecord
  readonly texts: { readonly [K in Field]?: string }
  readonly bytes: number
}

/** The first `n` characters of `text`, not splitting a surrogate pair. */
const head = (text: string, n: number): string => {
  const cut = text.slice(0, n)
  const last = cut.charCodeAt(cut.length - 1)
  return last >= 0xd800 && last <= 0xdbff ? cut.slice(0, -1) : cut
}

const textOf = (value: unknown): string =>
  // The road has usually printed this value already (the same object): its text is reused.
  typeof value === "object" && value !== null ? Boundary.jsonText(value) : (JSON.stringify(value) ?? "null")

/**
 * The rest of a row, counted as one size: ids, path, status, times,
 * alternatives, caller, and what the four indexes repeat of them (parent,
 * root, start, path), so the sum of rows' sizes is close to what the table
 * takes on disk.
 */
const overhead = (r: TraceRecord): number =>
  120 +
  3 * r.id.length +
  2 * r.rootId.length +
  2 * (r.parentId?.length ?? 0) +
  2 * r.path.length +
  (r.observerId?.length ?? 0) +
  (r.sessionId?.length ?? 0) +
  (r.clientCallId?.length ?? 0) +
  (r.instance?.length ?? 0) +
  r.alternatives.reduce((n, a) => n + a.length + 3, 2)

/**
 * The record as a store keeps it. A payload already clipped (the record says
 * so) is kept as it is: its field holds its head as a string.
 */
export const store = (record: TraceRecord, policy: Policy): Stored => {
  const texts: { [K in Field]?: string } = {}
  let clipped: { [K in Field]?: { readonly size: number; readonly sha256: string } } | undefined = record.clipped
    ? { ...record.clipped }
    : undefined
  let out: TraceRecord = record
  let bytes = overhead(record)
  for (const field of fields) {
    if (!(field in record)) continue
    const value = record[field]
    if (record.clipped?.[field] !== undefined) {
      const kept = typeof value === "string" ? value : textOf(value)
      texts[field] = kept
      bytes += kept.length
      continue
    }
    const text = textOf(value)
    if (policy.payloads === "full" || text.length <= policy.headChars) {
      texts[field] = text
      bytes += text.length
      continue
    }
    const kept = head(text, policy.headChars)
    clipped = {
      ...clipped,
      [field]: { size: Buffer.byteLength(text, "utf8"), sha256: createHash("sha256").update(text).digest("hex") }
    }
    out = { ...out, [field]: kept }
    texts[field] = kept
    bytes += kept.length
  }
  if (clipped !== undefined && out.clipped !== clipped) out = { ...out, clipped }
  if (clipped !== undefined) bytes += 96
  return { record: out, texts, bytes }
}
