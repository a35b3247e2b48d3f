// The definitions every AuditStore backend computes its analytics with, kept
// in one place so the SQL stores and the memory store cannot drift apart.

/** The 1-based nearest rank of the 95th percentile among `n` values: ceil(0.95 · n), in integers. */
export const p95Rank = (n: number): number => Math.floor((95 * n + 99) / 100)

/** Averages are rounded to the microsecond, so summation order cannot change the result. */
export const roundMillis = (millis: number): number => Math.round(millis * 1000) / 1000
