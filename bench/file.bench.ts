/**
 * The file tools against the raw libraries they are built on, in the same
 * process and run: `file.glob` against fast-glob with the same pattern and
 * options, each path with its size and time (ours adds the jail checks, the
 * policy filter and a deterministic sort), and `file.read` of a 1 MB text
 * file against `fs.readFile` plus a line
 * split (ours adds the jail, the verified descriptor, binary detection, UTF-8
 * validation, line numbering and the SHA-256 of the proof).
 *
 * The stall rows measure how long one call holds the event loop (the longest
 * gap of a 1 ms timer during the call) on a directory of 100,000 entries and
 * a chain 300 directories deep: `file.list` of that directory, and
 * `file.glob **\/leaf.txt` over both. The baseline is what the listing and
 * the walk used to do in one synchronous stretch (read every name, `lstat`
 * every entry, sort; read every name and match it), timed the same way. The
 * machine's load average is in the note: on a shared machine a stall
 * stretches with it.
 */
import { cpSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs"
import { readFile } from "node:fs/promises"
import { loadavg, tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { Changes, Trust } from "@ugent/core"
import { Glob, List, Read, Workspace } from "@ugent/tools"
import { Layer, ManagedRuntime } from "effect"
import fg from "fast-glob"
import picomatch from "picomatch"
import { type Bench, row } from "./Bench.ts"

const here = dirname(fileURLToPath(import.meta.url))
const copies = 4

/**
 * Medians of the baseline and ours, measured in alternating batches (the
 * order flips every sample) so that load from other processes on this shared
 * machine falls on both alike. Milliseconds per call.
 */
const paired = async (
  baseline: () => Promise<unknown>,
  ours: () => Promise<unknown>,
  options: { readonly iterations: number; readonly samples: number }
): Promise<readonly [number, number]> => {
  const batch = async (f: () => Promise<unknown>) => {
    const start = process.hrtime.bigint()
    for (let i = 0; i < options.iterations; i++) await f()
    return Number(process.hrtime.bigint() - start) / 1e6 / options.iterations
  }
  await batch(baseline)
  await batch(ours)
  const a: Array<number> = []
  const b: Array<number> = []
  for (let s = 0; s < options.samples; s++) {
    if (s % 2 === 0) {
      a.push(await batch(baseline))
      b.push(await batch(ours))
    } else {
      b.push(await batch(ours))
      a.push(await batch(baseline))
    }
  }
  const median = (xs: Array<number>) => xs.sort((x, y) => x - y)[Math.floor(xs.length / 2)]!
  return [median(a), median(b)]
}

/** The longest gap of a 1 ms timer while `f` runs, and how long it ran (ms). */
const stall = async (f: () => unknown): Promise<{ readonly pause: number; readonly total: number }> => {
  let last = performance.now()
  let pause = 0
  const timer = setInterval(() => {
    const now = performance.now()
    pause = Math.max(pause, now - last)
    last = now
  }, 1)
  const start = performance.now()
  await f()
  const total = performance.now() - start
  clearInterval(timer)
  pause = Math.max(pause, performance.now() - last)
  return { pause, total }
}

/** Medians of `samples` stalls of each, measured in turns. */
const stalls = async (baseline: () => unknown, ours: () => unknown, samples: number) => {
  const a: Array<number> = []
  const b: Array<number> = []
  const totals: Array<number> = []
  for (let s = 0; s < samples; s++) {
    a.push((await stall(baseline)).pause)
    const o = await stall(ours)
    b.push(o.pause)
    totals.push(o.total)
  }
  const median = (xs: Array<number>) => xs.sort((x, y) => x - y)[Math.floor(xs.length / 2)]!
  return { baseline: median(a), ours: median(b), total: median(totals) }
}

const bench: Bench = {
  name: "file",
  description:
    "file.glob vs raw fast-glob; file.read of 1 MB vs fs.readFile + split; event-loop stalls of file.list and file.glob on 100,000 entries",
  run: async () => {
    const root = mkdtempSync(join(tmpdir(), "ugent-bench-file-"))
    try {
      // effect/src holds 572 files; four copies make the corpus a few thousand, as the task asks.
      for (let i = 0; i < copies; i++) {
        cpSync(join(here, "..", "node_modules", "effect", "src"), join(root, `effect-src-${i}`), { recursive: true })
      }
      const line = (i: number) =>
        `${String(i).padStart(6, "0")} ${"the quick brown fox jumps over the lazy dog ".repeat(2)}\n`
      let text = ""
      for (let i = 0; text.length < 1_000_000; i++) text += line(i)
      writeFileSync(join(root, "big.txt"), text)
      const totalLines = text.split("\n").length - 1

      const runtime = ManagedRuntime.make(Layer.mergeAll(Workspace.layer({ root }), Changes.layer, Trust.grant(0)))
      try {
        const ws = await runtime.runPromise(Workspace.Workspace.useSync((shape) => shape))
        const rows = []

        // --- glob -----------------------------------------------------------
        const pattern = "**/*.ts"
        const ignore = ws.policy.ignored.flatMap((n) => [`**/${n}`, `**/${n}/**`])
        // file.glob returns each path's size and time, so fast-glob is asked for them too (`stats`).
        const raw = () =>
          fg(pattern, { cwd: root, ignore, deep: 11, dot: false, followSymbolicLinks: false, stats: true }).then(
            (entries) => entries.map((e) => e.path)
          )
        const ours = () => runtime.runPromise(Glob.glob.run({ pattern, limit: 1_000_000 }))
        const [a, b] = [await raw(), await ours()]
        // Ours leaves out blocked names (the corpus has a *Secret* file); otherwise the results must be equal.
        const expected = a.filter((f) => ws.blockedBy(f) === undefined).sort()
        if (expected.join("\n") !== b.files.join("\n")) {
          throw new Error(`file.glob and fast-glob disagree: ${expected.length} vs ${b.files.length} files`)
        }
        const [globBase, globOurs] = await paired(raw, ours, { iterations: 3, samples: 11 })
        rows.push(
          row(`glob ${pattern} (${a.length} files)`, globBase, globOurs, "ms/op", {
            target: "≤ 1.2",
            note: `same results (with size and time) but ${a.length - expected.length} blocked; ours sorted`
          })
        )

        // --- read -----------------------------------------------------------
        const split = async () => (await readFile(join(root, "big.txt"), "utf8")).split("\n")
        const readWindow = () => runtime.runPromise(Read.read.run({ path: "big.txt" }))
        const readWhole = () => runtime.runPromise(Read.read.run({ path: "big.txt", limit: totalLines }))
        const [readBase, windowOurs] = await paired(split, readWindow, { iterations: 20, samples: 11 })
        const [readBase2, wholeOurs] = await paired(split, readWhole, { iterations: 20, samples: 11 })
        rows.push(
          row("read 1 MB, default window (2,000 lines)", readBase, windowOurs, "ms/op", {
            target: "≤ 2",
            note: `hash + count of all ${totalLines} lines`
          }),
          row(`read 1 MB, all ${totalLines} lines numbered`, readBase2, wholeOurs, "ms/op", {
            target: "≤ 2",
            note: "whole file shown"
          })
        )
        // --- stalls on a huge directory -----------------------------------------
        const many = join(root, "many")
        mkdirSync(many)
        for (let i = 0; i < 100_000; i++) writeFileSync(join(many, `f${String(i).padStart(6, "0")}.txt`), "")
        const deep = join(root, ...Array.from({ length: 300 }, () => "d"))
        mkdirSync(deep, { recursive: true })
        writeFileSync(join(deep, "leaf.txt"), "leaf\n")
        const load = () => `load average ${loadavg()[0]!.toFixed(1)}`
        // What the listing did before: every name, an lstat each, sorted, in one synchronous stretch.
        const listAll = () =>
          readdirSync(many)
            .map((name) => ({ name, st: lstatSync(join(many, name)) }))
            .sort((x, y) => (x.name.toLowerCase() < y.name.toLowerCase() ? -1 : 1))
        const listed = await stalls(listAll, () => runtime.runPromise(List.list.run({ path: "many" })), 5)
        rows.push(
          row("file.list of 100,000 entries: longest event-loop stall", listed.baseline, listed.ours, "ms", {
            note: `whole call ${listed.total.toFixed(0)} ms (a page of 1,000); ${load()}`
          })
        )
        // What the walk did before over the big directory: every name read and matched in one stretch.
        const leaf = picomatch("**/leaf.txt")
        const walkAll = () => readdirSync(many).filter((name) => leaf(`many/${name}`))
        const globbed = await stalls(walkAll, () => runtime.runPromise(Glob.glob.run({ pattern: "**/leaf.txt" })), 5)
        rows.push(
          row(
            "file.glob **/leaf.txt beside 100,000 entries: longest event-loop stall",
            globbed.baseline,
            globbed.ours,
            "ms",
            {
              note: `whole call ${globbed.total.toFixed(0)} ms; says truncatedBy maxDepth (leaf at depth 301); ${load()}`
            }
          )
        )
        return rows
      } finally {
        await runtime.dispose()
      }
    } finally {
      rmSync(root, { recursive: true, force: true })
    }
  }
}

export default bench
