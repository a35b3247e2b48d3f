/**
 * An MCP client's view of speed: the official SDK client over stdio against
 * `ugent mcp` (the local profile, the default of a desktop client; proofs,
 * audit and tracing on, SQLite stores under `.ugent/`) and against the
 * reference filesystem server (`@modelcontextprotocol/server-filesystem`),
 * in the same run, on the same files: p50 and p95 per call of reading a
 * one-line file, reading a 2,000-line file, and listing a directory of 200
 * entries (against the reference's names-only `list_directory`, and against
 * its `list_directory_with_sizes`, which reads each entry's size and time as
 * `file.list` does), and (on Linux) the CPU each server spends per call. A
 * last case, without a target, is the road's floor: `self.memory.list` of an
 * empty memory (a tool that does almost nothing, through every stage of the
 * road) against the reference's one-line read.
 * Each server gets a fresh workspace copy and a warm-up; then blocks of 30
 * calls alternate between the two servers, so drift in the machine's load
 * hits both alike while neither's work lands in the other's calls.
 */
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { type Bench, type Row, row } from "./Bench.ts"

const ugentBin = fileURLToPath(new URL("../packages/agentese/bin/ugent.js", import.meta.url))
const reference = createRequire(import.meta.url).resolve("@modelcontextprotocol/server-filesystem/dist/index.js")

const makeWorkspace = () => {
  const root = mkdtempSync(join(tmpdir(), "ugent-bench-mcp-"))
  writeFileSync(join(root, "one.txt"), "hello\n")
  writeFileSync(
    join(root, "long.txt"),
    Array.from({ length: 2000 }, (_, i) => `line ${i + 1}: the quick brown fox jumps over the lazy dog`).join("\n")
  )
  mkdirSync(join(root, "dir"))
  for (let i = 0; i < 200; i++) writeFileSync(join(root, "dir", `file-${String(i).padStart(3, "0")}.txt`), `${i}\n`)
  return root
}

const connect = async (command: string, args: ReadonlyArray<string>) => {
  const client = new Client({ name: "ugent-bench", version: "0.0.0" })
  const transport = new StdioClientTransport({ command, args: [...args], stderr: "ignore" })
  await client.connect(transport)
  return { client, pid: transport.pid }
}

/**
 * The CPU a server's process has used so far, in milliseconds: its main
 * thread from the scheduler's own count (nanoseconds), and the whole process
 * (every thread) from its clock ticks. Linux only; undefined elsewhere.
 */
const cpuOf = (pid: number | null): { readonly main: number; readonly all: number } | undefined => {
  if (pid === null) return undefined
  try {
    const main = Number(readFileSync(`/proc/${pid}/task/${pid}/schedstat`, "utf8").split(" ")[0]) / 1e6
    // Fields 14 and 15 of /proc/<pid>/stat (utime, stime), after the parenthesized command name.
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")
    const ticks = Number(fields[11]) + Number(fields[12])
    return { main, all: (ticks * 1000) / 100 }
  } catch {
    return undefined
  }
}

/** The two CPU rows of each case: which count, and how it is named and read. */
const cpuRows = [
  [
    "main",
    {
      name: "main thread",
      note: "the scheduler's count for the server's main thread (/proc/<pid>/task/<pid>/schedstat)"
    }
  ],
  [
    "all",
    {
      name: "every thread",
      note: "the process's clock ticks (10 ms each) over the measured calls: the writer thread and the GC's helpers too"
    }
  ]
] as const

interface Case {
  readonly name: string
  readonly target?: string
  readonly ours: { readonly name: string; readonly arguments: Record<string, unknown> }
  readonly theirs: { readonly name: string; readonly arguments: (root: string) => Record<string, unknown> }
}

const cases: ReadonlyArray<Case> = [
  {
    name: "read a one-line file",
    target: "≤ 1.2",
    ours: { name: "world_tools_file_read", arguments: { path: "one.txt" } },
    theirs: { name: "read_text_file", arguments: (root) => ({ path: join(root, "one.txt") }) }
  },
  {
    name: "read a 2,000-line file",
    target: "≤ 1.2",
    ours: { name: "world_tools_file_read", arguments: { path: "long.txt" } },
    theirs: { name: "read_text_file", arguments: (root) => ({ path: join(root, "long.txt") }) }
  },
  {
    name: "list 200 entries (reference: names only)",
    target: "≤ 1.5",
    ours: { name: "world_tools_file_list", arguments: { path: "dir" } },
    theirs: { name: "list_directory", arguments: (root) => ({ path: join(root, "dir") }) }
  },
  {
    name: "list 200 entries (reference: with sizes)",
    target: "≤ 1.5",
    ours: { name: "world_tools_file_list", arguments: { path: "dir" } },
    theirs: { name: "list_directory_with_sizes", arguments: (root) => ({ path: join(root, "dir") }) }
  },
  {
    // No target: how far the road's fixed cost alone is from the reference's smallest call.
    name: "the road's floor: an empty self.memory.list (reference: one-line read)",
    ours: { name: "self_memory_list", arguments: {} },
    theirs: { name: "read_text_file", arguments: (root) => ({ path: join(root, "one.txt") }) }
  }
]

const percentile = (sorted: ReadonlyArray<number>, p: number) =>
  sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)]!

const time = async (f: () => Promise<unknown>) => {
  const start = process.hrtime.bigint()
  const result = (await f()) as { isError?: boolean }
  if (result.isError === true) throw new Error(`a benchmarked call failed: ${JSON.stringify(result)}`)
  return Number(process.hrtime.bigint() - start) / 1e6
}

export default {
  name: "mcp",
  description:
    "The official MCP SDK client over stdio: ugent mcp (local profile, proofs, audit, tracing, SQLite) vs @modelcontextprotocol/server-filesystem, same files, p50/p95 per call",
  run: async () => {
    const base = makeWorkspace()
    const oursRoot = mkdtempSync(join(tmpdir(), "ugent-bench-mcp-ours-"))
    const theirsRoot = mkdtempSync(join(tmpdir(), "ugent-bench-mcp-ref-"))
    cpSync(base, oursRoot, { recursive: true })
    cpSync(base, theirsRoot, { recursive: true })
    // Loops are not what this measures: repeated identical reads would be refused as a loop.
    const { client: ours, pid: oursPid } = await connect(process.execPath, [
      ugentBin,
      "mcp",
      "--root",
      oursRoot,
      "--loop",
      "off"
    ])
    const { client: theirs, pid: theirsPid } = await connect(process.execPath, [reference, theirsRoot])
    const rows: Array<Row> = []
    try {
      const n = 300
      const blockSize = 30
      for (const c of cases) {
        const a = () => ours.callTool({ name: c.ours.name, arguments: c.ours.arguments })
        const b = () => theirs.callTool({ name: c.theirs.name, arguments: c.theirs.arguments(theirsRoot) })
        for (let i = 0; i < 30; i++) {
          await time(a)
          await time(b)
        }
        const ta: Array<number> = []
        const tb: Array<number> = []
        const oursRun = [a, ta] as const
        const theirsRun = [b, tb] as const
        const cpuBefore = [cpuOf(oursPid), cpuOf(theirsPid)] as const
        // Blocks, not alternate calls: the reference's calls made right after ours cost it several times
        // what they cost in a block of its own, which made our ratios on small calls look about half.
        for (let block = 0; block < n / blockSize; block++) {
          const order = block % 2 === 0 ? [oursRun, theirsRun] : [theirsRun, oursRun]
          for (const [call, times] of order) for (let i = 0; i < blockSize; i++) times.push(await time(call))
        }
        const cpuAfter = [cpuOf(oursPid), cpuOf(theirsPid)] as const
        ta.sort((x, y) => x - y)
        tb.sort((x, y) => x - y)
        rows.push(row(`${c.name}: p50`, percentile(tb, 0.5), percentile(ta, 0.5), "ms/call", { target: c.target }))
        rows.push(row(`${c.name}: p95`, percentile(tb, 0.95), percentile(ta, 0.95), "ms/call"))
        const [oursBefore, theirsBefore] = cpuBefore
        const [oursAfter, theirsAfter] = cpuAfter
        if (oursBefore && theirsBefore && oursAfter && theirsAfter) {
          // What each server spends per call, whatever the machine's load does to the wait: a steadier guide than latency.
          for (const [kind, label] of cpuRows) {
            const oursMs = (oursAfter[kind] - oursBefore[kind]) / n
            const theirsMs = (theirsAfter[kind] - theirsBefore[kind]) / n
            rows.push(row(`${c.name}: server CPU, ${label.name}`, theirsMs, oursMs, "ms/call", { note: label.note }))
          }
        }
      }
    } finally {
      await ours.close()
      await theirs.close()
      for (const dir of [base, oursRoot, theirsRoot]) rmSync(dir, { recursive: true, force: true })
    }
    return rows
  }
} satisfies Bench
