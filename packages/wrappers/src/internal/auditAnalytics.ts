// The definitions every AuditStore backend computes its analytics with, kept
// in one place so the SQL stores and the memory store cannot drift apart.
import type {
  AuditAnalytics,
  AuditEntry,
  AuditStats,
  FailureCount,
  ObserverToolStats,
  RefusalCount,
  RefusalKind,
  TimeWindow
} from "./auditModel.ts"

/** The 1-based nearest rank of the `percent`-th percentile among `n` values: ceil(percent · n / 100), in integers. */
export const percentileRank = (percent: number, n: number): number => Math.floor((percent * n + 99) / 100)

/** The 1-based nearest rank of the median among `n` values: ceil(0.5 · n). */
export const p50Rank = (n: number): number => percentileRank(50, n)

/** The 1-based nearest rank of the 95th percentile among `n` values: ceil(0.95 · n). */
export const p95Rank = (n: number): number => percentileRank(95, n)

/** Averages are rounded to the microsecond, so summation order cannot change the result. */
export const roundMillis = (millis: number): number => Math.round(millis * 1000) / 1000

/** The kinds of failure that count as refusals, as the SQL stores spell them in their queries. */
export const refusalKinds: ReadonlyArray<RefusalKind> = ["denied", "rate_limited"]

/** Whether an entry records a call the road refused to run. */
export const isRefusal = (e: AuditEntry): boolean =>
  e.status === "failure" &&
  e.error?.kind !== undefined &&
  (refusalKinds as ReadonlyArray<string>).includes(e.error.kind)

const byCodePoint = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0)

/** The order of `refusals`: most frequent first, then by reason and kind (code point order on every backend). */
export const refusalOrder = (a: RefusalCount, b: RefusalCount): number =>
  b.count - a.count || byCodePoint(a.reason, b.reason) || byCodePoint(a.kind, b.kind)

/** The order of the persona × tool table: by observer, then path (code point order on every backend). */
export const observerToolOrder = (a: ObserverToolStats, b: ObserverToolStats): number =>
  byCodePoint(a.observerId, b.observerId) || byCodePoint(a.path, b.path)

/** The order of `failures`: most frequent first, then by reason and kind. */
export const failureOrder = (a: FailureCount, b: FailureCount): number =>
  b.count - a.count || byCodePoint(a.reason, b.reason) || byCodePoint(a.kind ?? "", b.kind ?? "")

/** The analytics of the completed entries of a window, computed in memory. */
export const analyze = (entries: Iterable<AuditEntry>, window: TimeWindow): AuditAnalytics => {
  const after: Array<AuditEntry> = []
  for (const e of entries) {
    if (e.phase !== "after") continue
    if (window.since !== undefined && e.at < window.since) continue
    if (window.until !== undefined && e.at >= window.until) continue
    if (window.observerId !== undefined && e.observerId !== window.observerId) continue
    after.push(e)
  }
  const group = (keyOf: (e: AuditEntry) => string): ReadonlyArray<AuditStats> => {
    const groups = new Map<string, Array<AuditEntry>>()
    for (const e of after) {
      const key = keyOf(e)
      const list = groups.get(key)
      if (list === undefined) groups.set(key, [e])
      else list.push(e)
    }
    return [...groups.keys()].sort(byCodePoint).map((key) => statsOf(key, groups.get(key) ?? []))
  }
  const refusals = new Map<string, { reason: string; kind: RefusalKind; count: number }>()
  for (const e of after) {
    if (!isRefusal(e) || e.error === undefined) continue
    const kind = e.error.kind as RefusalKind
    const key = `${kind}\u0000${e.error.tag}`
    const found = refusals.get(key)
    if (found === undefined) refusals.set(key, { reason: e.error.tag, kind, count: 1 })
    else found.count++
  }
  const pairs = new Map<string, { -readonly [K in keyof ObserverToolStats]: ObserverToolStats[K] }>()
  const failures = new Map<string, { -readonly [K in keyof FailureCount]: FailureCount[K] }>()
  for (const e of after) {
    const key = `${e.observerId}\u0000${e.path}`
    let pair = pairs.get(key)
    if (pair === undefined) {
      pair = { observerId: e.observerId, path: e.path, calls: 0, successes: 0, failures: 0, refusals: 0 }
      pairs.set(key, pair)
    }
    pair.calls++
    if (e.status === "success") pair.successes++
    else if (e.status === "failure") pair.failures++
    if (isRefusal(e)) pair.refusals++
    if (e.status !== "failure" || e.error === undefined) continue
    const errorKey = `${e.error.kind ?? ""}\u0000${e.error.tag}`
    const found = failures.get(errorKey)
    if (found === undefined) {
      failures.set(errorKey, {
        reason: e.error.tag,
        ...(e.error.kind === undefined ? {} : { kind: e.error.kind }),
        count: 1,
        lastAt: e.at
      })
    } else {
      found.count++
      found.lastAt = Math.max(found.lastAt, e.at)
    }
  }
  const all = statsOf("", after)
  const served = after.some((e) => e.instance !== undefined)
  return {
    byTool: group((e) => e.path),
    byObserver: group((e) => e.observerId),
    ...(served ? { byInstance: group((e) => e.instance ?? "(unnamed)") } : {}),
    refusals: [...refusals.values()].sort(refusalOrder),
    byObserverTool: [...pairs.values()].sort(observerToolOrder),
    failures: [...failures.values()].sort(failureOrder),
    totals: { calls: all.calls, successes: all.successes, failures: all.failures, refusals: all.refusals }
  }
}

const statsOf = (key: string, entries: ReadonlyArray<AuditEntry>): AuditStats => {
  let successes = 0
  let failures = 0
  let refusals = 0
  const durations: Array<number> = []
  for (const e of entries) {
    if (e.status === "success") successes++
    else if (e.status === "failure") failures++
    if (isRefusal(e)) refusals++
    if (e.durationMillis !== undefined) durations.push(e.durationMillis)
  }
  const calls = entries.length
  const stats: AuditStats = {
    key,
    calls,
    successes,
    failures,
    refusals,
    successRate: calls === 0 ? 0 : successes / calls
  }
  if (durations.length === 0) return stats
  durations.sort((a, b) => a - b)
  const sum = durations.reduce((s, d) => s + d, 0)
  return {
    ...stats,
    averageDurationMillis: roundMillis(sum / durations.length),
    p50DurationMillis: durations[p50Rank(durations.length) - 1] ?? 0,
    p95DurationMillis: durations[p95Rank(durations.length) - 1] ?? 0
  }
}
