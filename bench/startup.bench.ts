/**
 * What every call of the installed `ugent` pays before it does anything: the
 * packages are packed and installed into a project outside the repository
 * (as a user gets them, `scripts/packed.ts`), and each command is spawned
 * through the installed `node_modules/.bin/ugent`, alternately with its
 * baseline. The baselines: `node -e 0` (Node's own start), and the reference
 * MCP server `@modelcontextprotocol/server-filesystem` doing the same work
 * where it has an equivalent: an MCP connect (spawn → initialize →
 * tools/list), a one-shot read of a file (spawn → initialize → one tool call
 * → exit), and its memory once initialized and idle.
 *
 * Targets: `ugent --version` ≤ 250 ms; MCP connect ≤ 1.3× the reference
 * (an agent that does not wait for its servers sees no tools from a slow
 * one); idle RSS ≤ 1.5× the reference. On a shared machine wall times
 * move with the other load, so the MCP connect is also given as the CPU time
 * the server process used (Linux `/proc`), which moves much less.
 */
import { execFile } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { installPacked, repository, userEnv } from "../scripts/packed.ts"
import { type Bench, pairedMs, row } from "./Bench.ts"

/** The reference server's binary, run by the same Node as ours. */
const reference = join(repository, "node_modules", ".bin", "mcp-server-filesystem")

const run = (command: string, args: ReadonlyArray<string>, cwd: string): Promise<string> =>
  new Promise((resolve, reject) =>
    execFile(command, args, { cwd, env: userEnv() }, (error, stdout, stderr) =>
      error === null ? resolve(stdout) : reject(new Error(`${command} ${args.join(" ")}: ${stderr}`))
    )
  )

/** Spawns a stdio MCP server and connects the official SDK client (initialize). */
const connect = async (command: string, args: ReadonlyArray<string>, cwd: string) => {
  const transport = new StdioClientTransport({
    command,
    args: [...args],
    cwd,
    env: userEnv() as Record<string, string>,
    stderr: "ignore"
  })
  const client = new Client({ name: "ugent-bench", version: "0.0.0" })
  await client.connect(transport)
  return { client, pid: transport.pid }
}

/** Resident set size of a process, in MB (Linux). */
const rssMb = (pid: number): number => {
  const line = readFileSync(`/proc/${pid}/status`, "utf8")
    .split("\n")
    .find((l) => l.startsWith("VmRSS:"))
  if (line === undefined) throw new Error(`no VmRSS for ${pid}`)
  return Number.parseInt(line.replace(/\D+/g, ""), 10) / 1024
}

/** CPU time (user + system) a process has used, in ms (Linux): unlike wall time, little moved by other load. */
const cpuMs = (pid: number): number => {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100 // utime, stime in USER_HZ (100)
}

const median = (xs: Array<number>) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

const bench: Bench = {
  name: "startup",
  description:
    "the installed ugent (packed, installed outside the repository) against node -e 0 and @modelcontextprotocol/server-filesystem: start-up per command, MCP connect, idle MCP server memory",
  run: async () => {
    const installed = await installPacked()
    const work = mkdtempSync(join(tmpdir(), "ugent-startup-"))
    writeFileSync(join(work, "a.txt"), "hello\nworld\n")
    const ugent = installed.bin
    try {
      const node = () => run(process.execPath, ["-e", "0"], work)
      const version = (await run(ugent, ["--version"], work)).trim()
      const [nodeMs, versionMs] = await pairedMs(node, () => run(ugent, ["--version"], work), 9)
      const [, listMs] = await pairedMs(node, () => run(ugent, ["list", "--json", "--root", work], work), 7)

      // A one-shot read: ugent invoke, against the reference spawned, initialized, asked once and closed.
      const [refReadMs, invokeMs] = await pairedMs(
        async () => {
          const { client } = await connect(reference, [work], work)
          await client.callTool({ name: "read_text_file", arguments: { path: join(work, "a.txt") } })
          await client.close()
        },
        () => run(ugent, ["invoke", "world.tools.file.read", "--input", '{"path":"a.txt"}', "--root", work], work),
        7
      )

      // MCP connect: spawn → initialize → tools/list (the close after it is not counted).
      let refTools = 0
      let ourTools = 0
      const connectMs = async (command: string, args: ReadonlyArray<string>, count: (n: number) => void) => {
        const start = performance.now()
        const { client, pid } = await connect(command, args, work)
        count((await client.listTools()).tools.length)
        const elapsed = performance.now() - start
        const cpu = cpuMs(pid!)
        await client.close()
        return [elapsed, cpu] as const
      }
      const refConnect: Array<number> = []
      const ourConnect: Array<number> = []
      const refCpu: Array<number> = []
      const ourCpu: Array<number> = []
      for (let i = 0; i < 8; i++) {
        // The first round warms both up (and fills ugent's compile cache); it is not counted.
        const ref = await connectMs(reference, [work], (n) => {
          refTools = n
        })
        const ours = await connectMs(ugent, ["mcp", "--root", work, "--trust", "L1"], (n) => {
          ourTools = n
        })
        if (i > 0) {
          refConnect.push(ref[0])
          ourConnect.push(ours[0])
          refCpu.push(ref[1])
          ourCpu.push(ours[1])
        }
      }
      const [refConnectMs, ourConnectMs] = [median(refConnect), median(ourConnect)]

      // Idle memory: initialized, tools listed, then left alone for a second.
      const refRss: Array<number> = []
      const ourRss: Array<number> = []
      for (let i = 0; i < 3; i++) {
        for (const [command, args, into] of [
          [reference, [work], refRss],
          [ugent, ["mcp", "--root", work, "--trust", "L1"], ourRss]
        ] as const) {
          const { client, pid } = await connect(command, args, work)
          await client.listTools()
          await new Promise((resolve) => setTimeout(resolve, 1000))
          into.push(rssMb(pid!))
          await client.close()
        }
      }

      return [
        row("`ugent --version` (baseline: node -e 0)", nodeMs, versionMs, "ms", {
          target: "≤ 250 ms",
          note: `prints ${version}; ${versionMs <= 250 ? "meets" : "misses"} the target`
        }),
        row("`ugent list --json` (baseline: node -e 0)", nodeMs, listMs, "ms"),
        row(
          "one-shot read: `ugent invoke world.tools.file.read` vs the reference's read_text_file",
          refReadMs,
          invokeMs,
          "ms",
          {
            note: "reference: spawn → initialize → tools/call → close"
          }
        ),
        row("MCP connect: spawn → initialize → tools/list", refConnectMs, ourConnectMs, "ms", {
          target: "≤ 1.3",
          note: `${ourTools} tools vs the reference's ${refTools}`
        }),
        row("MCP connect: the server's CPU time, spawn → tools/list answered", median(refCpu), median(ourCpu), "ms", {
          note: "user + system time of the server process: what a busy machine's wall time hides"
        }),
        row("idle MCP server RSS after initialize", median(refRss), median(ourRss), "MB", { target: "≤ 1.5" })
      ]
    } finally {
      rmSync(work, { recursive: true, force: true })
      installed.remove()
    }
  }
}

export default bench
