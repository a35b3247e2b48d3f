/**
 * The benchmark convention of the project. A benchmark is a module
 * `bench/<name>.bench.ts` whose default export is a {@link Bench}; `npm run
 * bench -- <name>` runs one (no name: all), prints a table and writes
 * `bench/results/<name>.json` with the rows, the machine and the Node
 * version, so results can be compared across commits. Every row measures a
 * baseline and ours in the same process and run, and reports their ratio.
 */
import { cpus, totalmem } from "node:os"

export interface Row {
  readonly case: string
  /** The baseline's measure (time per op, wall time, …), in `unit`. */
  readonly baseline: number
  readonly ours: number
  /** ours / baseline: below 1 is faster than the baseline. */
  readonly ratio: number
  readonly unit: string
  /** The target, as text, e.g. "≤ 1.3". */
  readonly target?: string | undefined
  readonly note?: string | undefined
}

export interface Bench {
  readonly name: string
  readonly description: string
  readonly run: () => Promise<ReadonlyArray<Row>>
}

export const row = (
  name: string,
  baseline: number,
  ours: number,
  unit: string,
  extra?: { readonly target?: string | undefined; readonly note?: string }
): Row => ({ case: name, baseline, ours, ratio: ours / baseline, unit, ...extra })

/** Nanoseconds per call of `f`, median of `samples` batches of `iterations` calls, after a warm-up. */
export const nsPerOp = async (
  f: () => unknown | Promise<unknown>,
  options: { readonly iterations: number; readonly samples?: number; readonly async?: boolean }
): Promise<number> => {
  const samples = options.samples ?? 7
  const batch = async () => {
    const start = process.hrtime.bigint()
    if (options.async) for (let i = 0; i < options.iterations; i++) await f()
    else for (let i = 0; i < options.iterations; i++) f()
    return Number(process.hrtime.bigint() - start) / options.iterations
  }
  await batch()
  const times: Array<number> = []
  for (let i = 0; i < samples; i++) times.push(await batch())
  times.sort((a, b) => a - b)
  return times[Math.floor(times.length / 2)]!
}

/** Milliseconds of wall time of one run of `f`, median of `samples` runs after one warm-up. */
export const wallMs = async (f: () => Promise<unknown>, samples = 5): Promise<number> => {
  await f()
  const times: Array<number> = []
  for (let i = 0; i < samples; i++) {
    const start = process.hrtime.bigint()
    await f()
    times.push(Number(process.hrtime.bigint() - start) / 1e6)
  }
  times.sort((a, b) => a - b)
  return times[Math.floor(times.length / 2)]!
}

/**
 * Median milliseconds of the baseline and ours, measured alternately (after
 * one warm-up each), so a change in the load of a shared machine hits both
 * alike.
 */
export const pairedMs = async (
  baseline: () => Promise<unknown>,
  ours: () => Promise<unknown>,
  samples = 7
): Promise<readonly [number, number]> => {
  await baseline()
  await ours()
  const a: Array<number> = []
  const b: Array<number> = []
  for (let i = 0; i < samples; i++) {
    let start = performance.now()
    await baseline()
    a.push(performance.now() - start)
    start = performance.now()
    await ours()
    b.push(performance.now() - start)
  }
  const median = (xs: Array<number>) => xs.sort((x, y) => x - y)[Math.floor(xs.length / 2)]!
  return [median(a), median(b)]
}

export const machine = () => ({
  node: process.version,
  platform: `${process.platform}-${process.arch}`,
  cpus: cpus().length,
  cpu: cpus()[0]?.model ?? "unknown",
  memoryGiB: Math.round(totalmem() / 2 ** 30)
})
