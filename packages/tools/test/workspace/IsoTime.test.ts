/**
 * The listing's time printer: the same text as `Date#toISOString` for every
 * time, inside its fast range and outside it.
 */
import { describe, expect, it } from "@effect/vitest"
import { Schema } from "effect"
import { isoTime } from "../../src/internal/workspace/isoTime.ts"

const reference = (ms: number) => {
  try {
    return new Date(ms).toISOString()
  } catch (e) {
    return (e as Error).name
  }
}
const ours = (ms: number) => {
  try {
    return isoTime(ms)
  } catch (e) {
    return (e as Error).name
  }
}

describe("isoTime", () => {
  it.prop(
    "prints any time of 1970–9999, whole or fractional, as Date#toISOString does",
    { ms: Schema.Number.check(Schema.isBetween({ minimum: 0, maximum: 253_402_300_800_000 })) },
    ({ ms }) => {
      expect(ours(ms)).toBe(reference(ms))
    },
    { arbitrary: { runs: 2000 } }
  )

  it.prop(
    "prints any other number (before 1970, after 9999, out of range) as Date#toISOString does, or fails as it does",
    { ms: Schema.Number },
    ({ ms }) => {
      expect(ours(ms)).toBe(reference(ms))
    },
    { arbitrary: { runs: 500 } }
  )

  it("edges: the epoch, the end of a day, a fraction, the last safe millisecond, NaN and infinities", () => {
    for (const ms of [
      0,
      0.999,
      86_399_999.5,
      86_400_000,
      1_732_440_000_123.25,
      253_402_300_799_999,
      253_402_300_799_999.9,
      253_402_300_800_000,
      -0.5,
      -1,
      Number.NaN,
      Number.POSITIVE_INFINITY,
      Number.NEGATIVE_INFINITY
    ]) {
      expect([ms, ours(ms)]).toEqual([ms, reference(ms)])
    }
  })
})
