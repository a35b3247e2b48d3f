/**
 * Runs benchmarks: `npm run bench` runs all, `npm run bench -- <name> …` the
 * named ones. See `Bench.ts` for the convention.
 */
import { mkdir, readdir, writeFile } from "node:fs/promises"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { type Bench, machine, type Row } from "./Bench.ts"

const here = dirname(fileURLToPath(import.meta.url))
const available = (await readdir(here)).filter((f) => f.endsWith(".bench.ts")).map((f) => f.replace(/\.bench\.ts$/, ""))
const wanted = process.argv.slice(2).filter((a) => !a.startsWith("-"))
const unknown = wanted.filter((w) => !available.includes(w))
if (unknown.length > 0) {
  console.error(`Unknown benchmark(s): ${unknown.join(", ")}. Available: ${available.join(", ")}`)
  process.exit(2)
}

const fmt = (n: number) => (Math.abs(n) >= 100 ? n.toFixed(0) : Math.abs(n) >= 1 ? n.toFixed(2) : n.toPrecision(3))

const print = (bench: Bench, rows: ReadonlyArray<Row>) => {
  console.log(`\n## ${bench.name}: ${bench.description}\n`)
  const table = [
    ["case", "baseline", "ours", "ratio", "unit", "target", "note"],
    ...rows.map((r) => [r.case, fmt(r.baseline), fmt(r.ours), `${fmt(r.ratio)}×`, r.unit, r.target ?? "", r.note ?? ""])
  ]
  const widths = table[0]!.map((_, i) => Math.max(...table.map((line) => line[i]!.length)))
  for (const [i, line] of table.entries()) {
    console.log(
      line
        .map((cell, j) => cell.padEnd(widths[j]!))
        .join("  ")
        .trimEnd()
    )
    if (i === 0) console.log(widths.map((w) => "-".repeat(w)).join("  "))
  }
}

await mkdir(join(here, "results"), { recursive: true })
for (const name of wanted.length > 0 ? wanted : available) {
  const bench = (await import(join(here, `${name}.bench.ts`))).default as Bench
  const rows = await bench.run()
  print(bench, rows)
  const out = join(here, "results", `${name}.json`)
  await writeFile(
    out,
    `${JSON.stringify({ name, description: bench.description, at: new Date().toISOString(), machine: machine(), rows }, null, 2)}\n`
  )
  console.log(`\n(written to ${out})`)
}
