/**
 * `search.grep` against raw ripgrep. The corpus is a copy of
 * `node_modules/effect/src` in a temporary directory. For each pattern (a
 * literal, a word regex, a case-insensitive one, a rare one) and output mode,
 * the baseline is `rg` spawned directly with `child_process` for the same
 * search (`--sort path`, since the order is part of the result; output read
 * to the end, or to the match after the limit when the result is cut), and
 * the results are checked equal before anything is timed. Targets: the
 * ripgrep engine within 1.3× of raw rg, the TypeScript engine within 3×.
 *
 * Memory: a file of 1,000,000 matching lines is added to the corpus and
 * searched with maxMatches 100; each engine runs in a fresh Node process,
 * whose peak RSS is compared with its RSS before the search.
 */
import { spawn, spawnSync } from "node:child_process"
import { cpSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { Trust } from "@ugent/core"
import { Grep, Workspace } from "@ugent/tools"
import { Effect, Layer } from "effect"
import { type Bench, type Row, row } from "./Bench.ts"

type Mode = "files" | "content" | "count"

const context = (root: string, engine: "ripgrep" | "typescript") =>
  Effect.runPromise(
    Layer.build(Layer.mergeAll(Workspace.layer({ root }), Trust.grant(0), Grep.layerEngine(engine))).pipe(Effect.scoped)
  )

/** Raw rg for the same search; resolves with its output, stopping it after `limit` matches when given. */
const rawRg = (root: string, args: ReadonlyArray<string>, stopAfter?: number): Promise<Buffer> =>
  new Promise((resolve, reject) => {
    const child = spawn("rg", args, { cwd: root, stdio: ["ignore", "pipe", "ignore"] })
    const chunks: Array<Buffer> = []
    let matches = 0
    child.stdout.on("data", (chunk: Buffer) => {
      chunks.push(chunk)
      if (stopAfter === undefined) return
      // A match record is `path NUL digits ':'`; count them as they arrive.
      for (let i = chunk.indexOf(0); i !== -1; i = chunk.indexOf(0, i + 1)) {
        let j = i + 1
        while (chunk[j]! >= 48 && chunk[j]! <= 57) j++
        if (chunk[j] === 58) matches++
      }
      if (matches > stopAfter) {
        child.kill()
        resolve(Buffer.concat(chunks))
      }
    })
    child.on("error", reject)
    child.on("close", () => resolve(Buffer.concat(chunks)))
  })

const rgArgs = (pattern: string, mode: Mode, caseSensitive: boolean): ReadonlyArray<string> => {
  const common = ["--no-config", "--sort", "path", caseSensitive ? "-s" : "-i", "--null"]
  const byMode = mode === "files" ? ["-l"] : mode === "count" ? ["-c"] : ["-n", "-C2", "--no-heading"]
  return [...common, ...byMode, "-e", pattern, "--", "."]
}

/** What raw rg found, in the shape compared with the tool's result. */
const rawResult = (mode: Mode, out: Buffer, limit: number): ReadonlyArray<string> => {
  const text = out.toString("utf8")
  if (mode === "files")
    return text
      .split("\0")
      .filter((p) => p !== "")
      .map((p) => p.replace(/^\.\//, ""))
  if (mode === "count")
    return text
      .split("\n")
      .filter((l) => l !== "")
      .map((l) => l.replace(/^\.\//, "").replace("\0", ":"))
  const lines: Array<string> = []
  for (const line of text.split("\n")) {
    const m = /^\.\/(.*)\0(\d+):/.exec(line)
    if (m !== null && lines.length < limit) lines.push(`${m[1]}:${m[2]}`)
  }
  return lines
}

const toolResult = (out: Grep.Output): ReadonlyArray<string> => {
  if (out.mode === "files") return out.files
  if (out.mode === "count") return out.counts.map((c) => `${c.path}:${c.count}`).sort()
  return out.matches.flatMap((g) => g.matches.map((m) => `${g.path}:${m.line}`)).sort()
}

const cases: ReadonlyArray<{ readonly label: string; readonly pattern: string; readonly caseSensitive: boolean }> = [
  { label: "literal Effect.gen", pattern: "Effect\\.gen", caseSensitive: true },
  { label: "word regex \\bpipe\\b", pattern: "\\bpipe\\b", caseSensitive: true },
  { label: "case-insensitive schedule", pattern: "schedule", caseSensitive: false },
  { label: "rare TestClock.adjust", pattern: "TestClock\\.adjust", caseSensitive: true }
]

const rssProbe = async (root: string, engine: "ripgrep" | "typescript") => {
  const ctx = await context(root, engine)
  const run = () =>
    Effect.runPromise(
      Effect.provideContext(Grep.grep.run({ pattern: "needle", outputMode: "content", maxMatches: 100 }), ctx)
    )
  const before = process.memoryUsage().rss
  const out = await run()
  const peakKb = process.resourceUsage().maxRSS
  console.log(JSON.stringify({ before, peak: peakKb * 1024, total: out.totalMatches, truncated: out.truncated }))
}

const self = fileURLToPath(import.meta.url)

if (process.env.UGENT_GREP_RSS_ROOT !== undefined) {
  const engine = process.env.UGENT_GREP_RSS_ENGINE === "ripgrep" ? "ripgrep" : "typescript"
  await rssProbe(process.env.UGENT_GREP_RSS_ROOT, engine)
  process.exit(0)
}

const mb = (bytes: number) => bytes / 2 ** 20

/**
 * Median wall times (ms) of several functions, measured in turns (one run of
 * each per round) after a warm-up, so load from elsewhere on the machine
 * falls on all of them alike.
 */
const interleaved = async (
  fs: ReadonlyArray<() => Promise<unknown>>,
  rounds: number
): Promise<ReadonlyArray<number>> => {
  for (const f of fs) await f()
  const times = fs.map(() => [] as Array<number>)
  for (let r = 0; r < rounds; r++) {
    for (const [i, f] of fs.entries()) {
      const start = process.hrtime.bigint()
      await f()
      times[i]!.push(Number(process.hrtime.bigint() - start) / 1e6)
    }
  }
  return times.map((ts) => ts.sort((a, b) => a - b)[Math.floor(ts.length / 2)]!)
}

const bench: Bench = {
  name: "grep",
  description: "search.grep (ripgrep and TypeScript engines) vs raw rg on node_modules/effect/src",
  run: async () => {
    if (spawnSync("rg", ["--version"]).status !== 0) throw new Error("the grep benchmark needs rg on PATH")
    const root = mkdtempSync(join(tmpdir(), "ugent-grep-bench-"))
    const rows: Array<Row> = []
    try {
      cpSync(join(process.cwd(), "node_modules/effect/src"), join(root, "effect"), { recursive: true })
      // Files the workspace policy refuses (a name with "secret" in it) leave the corpus, so raw rg sees what we see.
      const ws = await Effect.runPromise(Workspace.make({ root }))
      for (const file of readdirSync(root, { recursive: true, encoding: "utf8" })) {
        if (ws.blockedBy(file) !== undefined || ws.isIgnored(file))
          rmSync(join(root, file), { recursive: true, force: true })
      }
      const rgCtx = await context(root, "ripgrep")
      const tsCtx = await context(root, "typescript")
      for (const c of cases) {
        for (const mode of ["files", "content", "count"] as const) {
          const limit = mode === "content" ? 100 : 10_000
          const input: Grep.Input = {
            pattern: c.pattern,
            caseSensitive: c.caseSensitive,
            outputMode: mode,
            maxMatches: limit
          }
          const args = rgArgs(c.pattern, mode, c.caseSensitive)
          const raw = () => rawRg(root, args, mode === "content" ? limit : undefined)
          const viaRg = () => Effect.runPromise(Effect.provideContext(Grep.grep.run(input), rgCtx))
          const viaTs = () => Effect.runPromise(Effect.provideContext(Grep.grep.run(input), tsCtx))
          // Same results before timing anything.
          const expected = JSON.stringify([...rawResult(mode, await raw(), limit)].sort())
          const fromRg = await viaRg()
          const fromTs = await viaTs()
          for (const [engine, out] of [
            ["ripgrep", fromRg],
            ["typescript", fromTs]
          ] as const) {
            const got = JSON.stringify([...toolResult(out)].sort())
            if (got !== expected) throw new Error(`${c.label} (${mode}, ${engine}): results differ from raw rg`)
          }
          const found = `${fromRg.totalMatches}${fromRg.truncated ? "+" : ""} ${mode === "files" ? "files" : "lines"}`
          const [base = 0, rg = 0, ts = 0] = await interleaved([raw, viaRg, viaTs], 25)
          rows.push(row(`${c.label}, ${mode}: ripgrep engine`, base, rg, "ms", { target: "≤ 1.3", note: found }))
          rows.push(row(`${c.label}, ${mode}: TypeScript engine`, base, ts, "ms", { target: "≤ 3", note: found }))
        }
      }
      // Memory: a million matching lines, 100 wanted.
      writeFileSync(join(root, "million.txt"), "a needle in a line of hay\n".repeat(1_000_000))
      for (const engine of ["ripgrep", "typescript"] as const) {
        const probe = spawnSync(process.execPath, [...process.execArgv, self], {
          env: { ...process.env, UGENT_GREP_RSS_ROOT: root, UGENT_GREP_RSS_ENGINE: engine },
          encoding: "utf8"
        })
        const line = probe.stdout.trim().split("\n").pop() ?? ""
        const m = JSON.parse(line) as { before: number; peak: number; total: number; truncated: boolean }
        if (m.total !== 100 || !m.truncated) throw new Error(`memory probe (${engine}) returned ${line}`)
        rows.push(
          row(`peak RSS, 1,000,000 matching lines (25 MB), maxMatches 100: ${engine}`, mb(m.before), mb(m.peak), "MB", {
            note: "baseline: the same process before the search"
          })
        )
      }
    } finally {
      rmSync(root, { recursive: true, force: true })
    }
    return rows
  }
}

export default bench
