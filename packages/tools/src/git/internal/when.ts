/**
 * A date as `git.log` takes it: ISO 8601, or relative as the documents
 * write it (`1 week ago`, `3 days ago`, `yesterday`). The relative form is
 * read here into an instant (calendar arithmetic by Effect's `DateTime`,
 * "now" from the `Clock`), so git only ever receives seconds since the
 * epoch, never the caller's text. Our own: git's approxidate reads far more
 * (and guesses at the rest), which a tool should not accept silently.
 *
 * @internal
 */
import { DateTime, Effect } from "effect"

const units = {
  second: "seconds",
  minute: "minutes",
  hour: "hours",
  day: "days",
  week: "weeks",
  month: "months",
  year: "years"
} as const

/** Short spellings of the units (`3d ago`, `2 hrs ago`, `1 wk ago`). */
const shortUnits: Readonly<Record<string, keyof typeof units>> = {
  s: "second",
  sec: "second",
  secs: "second",
  m: "minute",
  min: "minute",
  mins: "minute",
  h: "hour",
  hr: "hour",
  hrs: "hour",
  d: "day",
  w: "week",
  wk: "week",
  wks: "week",
  mo: "month",
  mos: "month",
  y: "year",
  yr: "year",
  yrs: "year"
}

const unitOf = (word: string): keyof typeof units | undefined => {
  const singular = word.endsWith("s") && word.slice(0, -1) in units ? word.slice(0, -1) : word
  return singular in units ? (singular as keyof typeof units) : shortUnits[word]
}

/**
 * What a relative date says: `n` units before now, or `undefined` when the
 * text is not one.
 */
export const relative = (text: string): { readonly amount: number; readonly unit: keyof typeof units } | undefined => {
  const t = text.trim().toLowerCase().replace(/\s+/g, " ")
  if (t === "now") return { amount: 0, unit: "second" }
  if (t === "yesterday") return { amount: 1, unit: "day" }
  const last = /^last (\w+)$/.exec(t)
  if (last !== null) {
    const unit = unitOf(last[1]!)
    return unit === undefined ? undefined : { amount: 1, unit }
  }
  const ago = /^(\d{1,6}|an?|one) ?([a-z]+) ago$/.exec(t)
  if (ago === null) return undefined
  const unit = unitOf(ago[2]!)
  if (unit === undefined) return undefined
  const amount = /^\d/.test(ago[1]!) ? Number(ago[1]) : 1
  return { amount, unit }
}

/**
 * The instant a date names, in seconds since the epoch: an ISO 8601 date,
 * or a relative one counted back from the clock's now; `undefined` when it
 * is neither.
 */
export const seconds = (text: string): Effect.Effect<number | undefined> =>
  Effect.gen(function* () {
    const back = relative(text)
    if (back !== undefined) {
      const now = yield* DateTime.now
      const then = DateTime.subtract(now, { [units[back.unit]]: back.amount })
      const ms = DateTime.toEpochMillis(then)
      // Before 1970 (or past what a date holds) nothing was committed: the epoch says the same, and git reads it.
      return Number.isFinite(ms) && ms > 0 ? Math.floor(ms / 1000) : 0
    }
    const ms = Date.parse(text.trim())
    return Number.isNaN(ms) ? undefined : Math.floor(ms / 1000)
  })
