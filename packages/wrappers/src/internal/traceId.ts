/**
 * Trace ids in the UUID version 7 layout: a millisecond timestamp, then a
 * per-process counter, then random bits. Ids made later in a process sort
 * after earlier ones, so a store that orders calls by start time, then id,
 * keeps calls that started in the same millisecond in the order they started.
 *
 * @internal
 */
import { randomFillSync } from "node:crypto"

let lastMillis = 0
let sequence = 0

const hex = (n: number, digits: number) => n.toString(16).padStart(digits, "0")

// Random bytes are drawn in blocks: one system call per 512 ids instead of one per id.
const pool = Buffer.alloc(8 * 512)
let used = pool.length

const random8 = (): Buffer => {
  if (used === pool.length) {
    randomFillSync(pool)
    used = 0
  }
  used += 8
  return pool.subarray(used - 8, used)
}

/** A new, time-ordered trace id. */
export const traceId = (): string => {
  const now = Date.now()
  if (now > lastMillis) {
    lastMillis = now
    sequence = 0
  } else if (++sequence > 0xfff) {
    // 4,096 ids in one millisecond: borrow the next millisecond rather than break the order.
    lastMillis++
    sequence = 0
  }
  const random = random8()
  random[0] = (random[0]! & 0x3f) | 0x80 // the RFC 4122 variant
  const r = random.toString("hex")
  const ms = hex(lastMillis, 12)
  return `${ms.slice(0, 8)}-${ms.slice(8)}-7${hex(sequence, 3)}-${r.slice(0, 4)}-${r.slice(4)}`
}
