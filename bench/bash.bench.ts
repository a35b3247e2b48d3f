/**
 * The sandbox's per-call overhead: `system.bash` (workspace check, secret
 * walk, bubblewrap with new namespaces, resource limits, output capture)
 * against a bare `bash -c` spawned through the same `effect/process` spawner
 * with both streams read, on the same command, measured alternately so a
 * change in the load of a shared machine hits both alike. Target: at most
 * 30 ms added per call. The workspace cases show what the walk for secrets
 * costs as the tree grows. The checkpoint cases compare `system.bash` in a
 * workspace that keeps checkpoints (what a command changes is captured)
 * with the same tool in one that does not, on an unchanged workspace:
 * target at most 10 ms added per call.
 */
import * as fs from "node:fs"
import { tmpdir } from "node:os"
import * as path from "node:path"
import { NodeServices } from "@effect/platform-node"
import { Trust } from "@ugent/core"
import { SystemBash, Sandbox, Workspace } from "@ugent/tools"
import { Effect, Layer, ManagedRuntime, Stream } from "effect"
import { ChildProcess, ChildProcessSpawner } from "effect/process"
import { type Bench, type Row, row } from "./Bench.ts"

const SAMPLES = 60

const percentile = (xs: ReadonlyArray<number>, p: number) => {
  const sorted = [...xs].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))]!
}

/** A workspace of `files` files over directories of 20, with a few secrets to mask. */
const workspaceOf = (files: number): string => {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(tmpdir(), "bench-bash-")))
  for (let i = 0; i < files; i++) {
    const dir = path.join(root, `d${Math.floor(i / 20)}`)
    if (i % 20 === 0) fs.mkdirSync(dir)
    fs.writeFileSync(path.join(dir, `f${i}.ts`), "export {}\n")
  }
  fs.writeFileSync(path.join(root, ".env"), "KEY=x\n")
  fs.mkdirSync(path.join(root, ".git"))
  // A root server's sandbox runs as the workspace's owner (a root-owned one gets no shell): give it one, as the tests do.
  if (process.geteuid?.() === 0) {
    for (const p of fs.readdirSync(root, { recursive: true, encoding: "utf8" })) {
      fs.lchownSync(path.join(root, p), 65534, 65534)
    }
    fs.chownSync(root, 65534, 65534)
  }
  return root
}

const measure = async (files: number, command: string): Promise<{ bare: Array<number>; sandboxed: Array<number> }> => {
  const root = workspaceOf(files)
  const runtime = ManagedRuntime.make(
    Sandbox.layer().pipe(
      Layer.provideMerge(Workspace.layer({ root })),
      Layer.provideMerge(NodeServices.layer),
      Layer.orDie,
      Layer.merge(Trust.grant(3))
    )
  )
  try {
    const isolation = await runtime.runPromise(Effect.map(Sandbox.Sandbox, (s) => s.isolation))
    if (isolation.kind !== "bubblewrap") throw new Error(`the bash benchmark needs the sandbox: ${isolation.reason}`)
    const tool = SystemBash.make(isolation)
    const bare = Effect.scoped(
      Effect.gen(function* () {
        const spawner = yield* ChildProcessSpawner.ChildProcessSpawner
        const handle = yield* spawner.spawn(
          ChildProcess.make("bash", ["-c", command], { cwd: root, stdin: "ignore", env: { PATH: "/usr/bin:/bin" } })
        )
        const [out, err] = yield* Effect.all(
          [Stream.mkString(Stream.decodeText(handle.stdout)), Stream.mkString(Stream.decodeText(handle.stderr))],
          { concurrency: 2 }
        )
        return [out, err, yield* handle.exitCode] as const
      })
    )
    const ours = tool.run({ command })
    const timed = async (effect: Effect.Effect<unknown, unknown, never>) => {
      const t = performance.now()
      await runtime.runPromise(effect as Effect.Effect<unknown, unknown, never>)
      return performance.now() - t
    }
    // Warm-up: the first spawns load binaries and libraries into the page cache.
    for (let i = 0; i < 3; i++) {
      await timed(bare as Effect.Effect<unknown, unknown, never>)
      await timed(ours as Effect.Effect<unknown, unknown, never>)
    }
    const result = { bare: [] as Array<number>, sandboxed: [] as Array<number> }
    for (let i = 0; i < SAMPLES; i++) {
      result.bare.push(await timed(bare as Effect.Effect<unknown, unknown, never>))
      result.sandboxed.push(await timed(ours as Effect.Effect<unknown, unknown, never>))
    }
    return result
  } finally {
    await runtime.dispose()
    fs.rmSync(root, { recursive: true, force: true })
  }
}

/** `system.bash` with checkpoints against without, on the same workspace, alternately. */
const measureCheckpoints = async (
  files: number,
  command: string
): Promise<{ bare: Array<number>; sandboxed: Array<number> }> => {
  const root = workspaceOf(files)
  const runtimeOf = (checkpoints: boolean) =>
    ManagedRuntime.make(
      Sandbox.layer().pipe(
        Layer.provideMerge(Workspace.layer({ root, ...(checkpoints ? { checkpoints: {} } : {}) })),
        Layer.provideMerge(NodeServices.layer),
        Layer.orDie,
        Layer.merge(Trust.grant(3))
      )
    )
  const off = runtimeOf(false)
  const on = runtimeOf(true)
  try {
    const tool = SystemBash.make()
    const ours = tool.run({ command }) as Effect.Effect<unknown, unknown, never>
    const timed = async (runtime: typeof off) => {
      const t = performance.now()
      await runtime.runPromise(ours)
      return performance.now() - t
    }
    // Warm-up; the first call with checkpoints copies the workspace once (its baseline).
    const first = performance.now()
    await timed(on)
    const baselineMillis = performance.now() - first
    for (let i = 0; i < 3; i++) {
      await timed(off)
      await timed(on)
    }
    const result = { bare: [] as Array<number>, sandboxed: [] as Array<number>, baselineMillis }
    for (let i = 0; i < SAMPLES; i++) {
      result.bare.push(await timed(off))
      result.sandboxed.push(await timed(on))
    }
    return result
  } finally {
    await off.dispose()
    await on.dispose()
    fs.rmSync(root, { recursive: true, force: true })
  }
}

const bench: Bench = {
  name: "bash",
  description: `system.bash in its bubblewrap sandbox vs a bare \`bash -c\` through the same spawner (${SAMPLES} paired calls each)`,
  run: async () => {
    const rows: Array<Row> = []
    const cases: ReadonlyArray<readonly [string, number, string]> = [
      ["`true`, empty workspace", 0, "true"],
      ["`seq 1 2000`, empty workspace", 0, "seq 1 2000"],
      ["`true`, 2,000 files", 2000, "true"],
      ["`true`, 20,000 files", 20000, "true"]
    ]
    for (const [name, files, command] of cases) {
      const { bare, sandboxed } = await measure(files, command)
      for (const p of [50, 95]) {
        const b = percentile(bare, p)
        const o = percentile(sandboxed, p)
        rows.push(
          row(`${name} p${p}`, b, o, "ms", {
            target: p === 50 ? "≤ +30 ms" : "",
            note: `+${(o - b).toFixed(1)} ms per call`
          })
        )
      }
    }
    for (const files of [2000, 20000]) {
      const measured = await measureCheckpoints(files, "true")
      const { bare, sandboxed } = measured
      for (const p of [50, 95]) {
        const b = percentile(bare, p)
        const o = percentile(sandboxed, p)
        rows.push(
          row(`checkpoints on vs off, \`true\`, ${files.toLocaleString("en-US")} files p${p}`, b, o, "ms", {
            target: p === 50 ? "≤ +10 ms" : "",
            note: `+${(o - b).toFixed(1)} ms per call${p === 50 ? `; the first call copied the workspace in ${Math.round((measured as { baselineMillis?: number }).baselineMillis ?? 0)} ms` : ""}`
          })
        )
      }
    }
    return rows
  }
}

export default bench
