/**
 * A time as ISO 8601 text, exactly as `new Date(ms).toISOString()` prints it.
 *
 * Why not that: it makes a `Date` and formats the whole text on each call
 * (over a microsecond), and a listing prints one per entry. Here each day's
 * prefix is printed once and kept, and the time of day is arithmetic. Times
 * outside 1970–9999 (and invalid ones) go to `Date`, which prints them.
 *
 * @internal
 */
const dayMillis = 86_400_000
const lastSafe = 253_402_300_800_000 // 10000-01-01T00:00:00.000Z
const days = new Map<number, string>()

const two = (n: number) => (n < 10 ? `0${n}` : `${n}`)
const three = (n: number) => (n < 10 ? `00${n}` : n < 100 ? `0${n}` : `${n}`)

export const isoTime = (ms: number): string => {
  if (!(ms >= 0 && ms < lastSafe)) return new Date(ms).toISOString()
  // A Date keeps whole milliseconds, dropping the fraction (mtimeMs has one).
  const whole = Math.trunc(ms)
  const day = Math.floor(whole / dayMillis)
  let prefix = days.get(day)
  if (prefix === undefined) {
    prefix = new Date(day * dayMillis).toISOString().slice(0, 11)
    if (days.size >= 1024) days.clear()
    days.set(day, prefix)
  }
  let rest = whole - day * dayMillis
  const hours = Math.floor(rest / 3_600_000)
  rest -= hours * 3_600_000
  const minutes = Math.floor(rest / 60_000)
  rest -= minutes * 60_000
  const seconds = Math.floor(rest / 1000)
  return `${prefix}${two(hours)}:${two(minutes)}:${two(seconds)}.${three(rest - seconds * 1000)}Z`
}
