/**
 * Fixtures of the system tests: the gate that skips (visibly, never in CI)
 * where bubblewrap cannot run, workspaces with secrets and a repository in
 * them, a place outside the workspace that must stay untouched, a loopback
 * server that must receive nothing, and a runner for the family's tools.
 */
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as net from "node:net"
import { tmpdir } from "node:os"
import * as path from "node:path"
import { NodeServices } from "@effect/platform-node"
import { Trust } from "@ugent/core"
import { SystemBash, SystemKill, SystemOutput, Sandbox, Workspace } from "@ugent/tools"
import { Effect, Layer } from "effect"

const probe = (): string | undefined => {
  const r = spawnSync(
    "bwrap",
    [
      "--unshare-all",
      "--unshare-user",
      "--die-with-parent",
      "--ro-bind",
      "/",
      "/",
      "--proc",
      "/proc",
      "--dev",
      "/dev",
      "--",
      "/bin/true"
    ],
    { encoding: "utf8", timeout: 10_000 }
  )
  if (r.error !== undefined) return `bwrap cannot run (${r.error.message})`
  if (r.status !== 0) return `bwrap cannot create namespaces here (${(r.stderr ?? "").trim()})`
  return undefined
}

/** Whether the real sandbox can run here: skip with the reason locally, fail in CI. */
export const sandboxGate = (): { readonly skip: boolean; readonly note: string } => {
  const why = probe()
  if (why === undefined) return { skip: false, note: "" }
  if (process.env.CI !== undefined) throw new Error(`the sandbox tests need bubblewrap in CI: ${why}`)
  console.warn(`system tests skipped: ${why}`)
  return { skip: true, note: ` (skipped: ${why})` }
}

const made: Array<string> = []

/** A fresh real directory, removed by {@link cleanup}. */
export const scratch = (prefix: string): string => {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(tmpdir(), prefix)))
  made.push(dir)
  return dir
}

/** Removes every directory {@link scratch} made (for `afterAll`). */
export const cleanup = (): void => {
  for (const dir of made.splice(0)) fs.rmSync(dir, { recursive: true, force: true })
}

/** A token nobody could guess, to look for in what leaks. */
export const token = (label: string): string => `${label}-${Math.random().toString(36).slice(2)}${Date.now()}`

/** Every file under a directory with its size, mode and modification time. */
export const snapshot = (dir: string): Record<string, string> => {
  const out: Record<string, string> = {}
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name)
      const st = fs.lstatSync(p)
      out[path.relative(dir, p)] = `${st.size}:${st.mode}:${st.mtimeMs}`
      if (e.isDirectory()) walk(p)
    }
  }
  walk(dir)
  return out
}

/**
 * The unprivileged owner given to test workspaces when the tests run as root
 * (as CI does): a root server's sandbox runs as the workspace's owner, and a
 * root-owned workspace gets no shell at all.
 */
export const testOwner = process.geteuid?.() === 0 ? { uid: 65534, gid: 65534 } : undefined

/** Gives a directory tree to {@link testOwner} (when the tests run as root). */
export const own = (dir: string): void => {
  if (testOwner === undefined) return
  const walk = (p: string) => {
    fs.lchownSync(p, testOwner.uid, testOwner.gid)
    if (fs.lstatSync(p).isDirectory()) for (const e of fs.readdirSync(p)) walk(path.join(p, e))
  }
  walk(dir)
}

/** A workspace with a secret `.env`, a secret key, a git repository and server state in `.ugent`. */
export const workspace = (): { readonly root: string; readonly secrets: ReadonlyArray<string> } => {
  const root = scratch("ugent-system-ws-")
  const envSecret = token("envfile")
  const keySecret = token("keyfile")
  const stateSecret = token("state")
  fs.writeFileSync(path.join(root, "README.md"), "# project\n")
  fs.writeFileSync(path.join(root, ".env"), `API_KEY=${envSecret}\n`)
  fs.mkdirSync(path.join(root, "config"))
  fs.writeFileSync(path.join(root, "config", "server.key"), `${keySecret}\n`)
  fs.mkdirSync(path.join(root, ".ugent"))
  fs.writeFileSync(path.join(root, ".ugent", "proof.key"), `${stateSecret}\n`)
  const git = (...args: Array<string>) =>
    spawnSync("git", args, {
      cwd: root,
      encoding: "utf8",
      env: { PATH: process.env.PATH, HOME: root, GIT_CONFIG_NOSYSTEM: "1" }
    })
  git("init", "-q", "-b", "main")
  git("-c", "user.name=t", "-c", "user.email=t@t", "add", "README.md")
  git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "init")
  own(root)
  return { root, secrets: [envSecret, keySecret, stateSecret] }
}

/** A directory outside the workspace holding a secret, and a bare repository a push must not reach (owned like a workspace). */
export const outside = (): { readonly dir: string; readonly secret: string; readonly remote: string } => {
  const dir = scratch("ugent-system-outside-")
  const secret = token("outside")
  fs.writeFileSync(path.join(dir, "secret.txt"), `${secret}\n`)
  fs.chmodSync(path.join(dir, "secret.txt"), 0o600)
  const remote = path.join(dir, "remote.git")
  spawnSync("git", ["init", "-q", "--bare", remote], { encoding: "utf8" })
  // The user a root server's commands run as owns this too: what the sandbox hides is the user's own files.
  own(dir)
  return { dir, secret, remote }
}

/** A TCP server on the host's loopback that counts the connections it accepts. */
export const loopbackServer = async (): Promise<{
  readonly port: number
  readonly connections: () => number
  readonly close: () => Promise<void>
}> => {
  let count = 0
  const server = net.createServer((socket) => {
    count++
    socket.destroy()
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const address = server.address()
  const port = typeof address === "object" && address !== null ? address.port : 0
  return {
    port,
    connections: () => count,
    close: () => new Promise<void>((resolve) => server.close(() => resolve()))
  }
}

/** The services the family's tools need, over a workspace (given to {@link testOwner} first). */
export const layerFor = (root: string, options?: Sandbox.Options, policy?: Workspace.PolicyOptions) => {
  own(root)
  return Sandbox.layer(options).pipe(
    Layer.provideMerge(Workspace.layer({ root, policy })),
    Layer.provideMerge(NodeServices.layer),
    Layer.orDie,
    Layer.merge(Trust.grant(3))
  )
}

export const bash = SystemBash.make()
export const output = SystemOutput.output
export const kill = SystemKill.kill

/** Runs a program with the family's services over `root`; the sandbox (and its runs) end with it. */
export const withSandbox = <A, E>(
  root: string,
  program: Effect.Effect<A, E, Sandbox.Sandbox | Workspace.Workspace | Trust.Capability>,
  options?: Sandbox.Options,
  policy?: Workspace.PolicyOptions
): Promise<A> => Effect.runPromise(Effect.scoped(Effect.provide(program, layerFor(root, options, policy))))

/** Whether a host process is running (a zombie is not). */
export const running = (pid: number): boolean => {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8")
    return stat.slice(stat.lastIndexOf(")") + 2).charAt(0) !== "Z"
  } catch {
    return false
  }
}

/** Host processes whose command line contains `marker`. */
export const processesWith = (marker: string): Array<number> => {
  const out: Array<number> = []
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const cmdline = fs.readFileSync(`/proc/${entry}/cmdline`, "utf8").replace(/\0/g, " ")
      if (cmdline.includes(marker) && running(Number(entry))) out.push(Number(entry))
    } catch {
      // Gone.
    }
  }
  return out
}
