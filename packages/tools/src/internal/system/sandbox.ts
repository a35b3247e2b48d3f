/**
 * How a sandbox is built: find bubblewrap and run it once, read the host's
 * layout and write the synthetic files, find what limits the process count,
 * then start runs over the registry. See `system/Sandbox.ts` for what the
 * sandbox isolates.
 *
 * @internal
 */
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { ToolError } from "@ugent/core"
import { Effect, type Scope } from "effect"
import { ChildProcessSpawner } from "effect/process"
import type { Isolation, Options, Request, SandboxShape, StartError } from "../../system/Sandbox.ts"
import { SandboxFailed, TooManyRuns, UnknownRun } from "../../system/SystemError.ts"
import { Workspace } from "../../Workspace.ts"
import * as cgroup from "./cgroup.ts"
import * as layout from "./layout.ts"
import { Walker } from "./masks.ts"
import { type Launch, makeRegistry, type Run as RunState } from "./runs.ts"

/** The words that enable the opt-out (exported as `Sandbox.unsandboxedConsent`). */
export const unsandboxedConsent = "I-understand-this-runs-unsandboxed" as const

const defaults = {
  processes: 1024,
  fileBytes: 1024 ** 3,
  tmpBytes: 512 * 1024 ** 2,
  outputChars: 30_000,
  outputBytes: 16 * 1024 ** 2,
  backgroundRuns: 8
}

const findOnPath = (name: string): string | undefined => {
  const dirs = (process.env.PATH ?? "").split(path.delimiter).filter((d) => d !== "")
  for (const dir of [...dirs, "/usr/bin", "/bin", "/usr/local/bin"]) {
    const candidate = path.join(dir, name)
    try {
      fs.accessSync(candidate, fs.constants.X_OK)
      return candidate
    } catch {
      // Not here.
    }
  }
  return undefined
}

/** Runs a probe to its end (10 s at most), with node's own spawn: it happens once, when the sandbox is built. */
const probe = (argv: ReadonlyArray<string>): Promise<{ readonly ok: boolean; readonly stderr: string }> =>
  new Promise((resolve) => {
    const child = spawn(argv[0]!, argv.slice(1), { stdio: ["ignore", "ignore", "pipe"], env: {}, timeout: 10_000 })
    let stderr = ""
    child.stderr.on("data", (chunk: Buffer) => {
      if (stderr.length < 2000) stderr += chunk.toString("utf8")
    })
    child.on("error", (e) => resolve({ ok: false, stderr: e.message }))
    child.on("close", (code) => resolve({ ok: code === 0, stderr: stderr.trim() }))
  })

/** The environment of every command: an allow-list, plus the operator's variables. */
const environment = (home: string, extra: Readonly<Record<string, string>> | undefined): Record<string, string> => ({
  PATH: "/usr/local/bin:/usr/bin:/bin",
  HOME: home,
  TMPDIR: "/tmp",
  LANG: "C.UTF-8",
  TERM: "dumb",
  USER: layout.sandboxUser,
  LOGNAME: layout.sandboxUser,
  SHELL: "/bin/bash",
  PAGER: "cat",
  GIT_PAGER: "cat",
  NO_COLOR: "1",
  ...extra
})

/**
 * The program every run starts: a fixed script sets the resource limits
 * (failing closed), then the command line runs as `bash -c` in a fresh bash
 * that reads no startup file. The command is an argument, never spliced into
 * the script.
 */
const program = (command: string, limits: { readonly processes: number; readonly fileBytes: number }) => [
  "/bin/bash",
  "--noprofile",
  "--norc",
  "-c",
  `ulimit -u ${limits.processes} -f ${Math.ceil(limits.fileBytes / 1024)} || { echo "ugent: the sandbox's resource limits could not be set" >&2; exit 126; }; exec /bin/bash --noprofile --norc -c "$1"`,
  "ugent-sandbox",
  command
]

const cgroupJoin = 'echo $$ > "$1" || exit 125; shift; exec "$@"'

/** Builds a sandbox over the current workspace; closing the scope kills its runs and removes what it made. */
export const make = (
  options: Options | undefined
): Effect.Effect<SandboxShape, never, Workspace | ChildProcessSpawner.ChildProcessSpawner | Scope.Scope> =>
  Effect.gen(function* () {
    const ws = yield* Workspace
    const spawner = yield* ChildProcessSpawner.ChildProcessSpawner
    const scope = yield* Effect.scope
    const network = options?.network ?? false
    const given = options?.limits
    const limits = {
      processes: given?.processes ?? defaults.processes,
      fileBytes: given?.fileBytes ?? defaults.fileBytes,
      tmpBytes: given?.tmpBytes ?? defaults.tmpBytes,
      outputChars: given?.outputChars ?? defaults.outputChars,
      outputBytes: given?.outputBytes ?? defaults.outputBytes,
      backgroundRuns: given?.backgroundRuns ?? defaults.backgroundRuns
    }
    const readOnly = (options?.readOnly ?? []).map((p) => path.resolve(p))
    const env = environment("/tmp", options?.env)

    const host = layout.host({ home: "/tmp", network })
    yield* Effect.addFinalizer(() => Effect.sync(() => fs.rmSync(host.synthetic, { recursive: true, force: true })))

    // --- can a sandbox be made here? ---
    const bwrap = options?.bwrap ?? findOnPath("bwrap")
    let isolation: Isolation
    let disableUserns = true
    const runLayout = (cwd: string, masks: layout.Run["masks"]): layout.Run => ({
      root: ws.root,
      cwd,
      masks,
      network,
      readOnly,
      tmpBytes: limits.tmpBytes,
      disableUserns
    })
    const noMasks = { readOnly: [], files: [], dirs: [] }
    let failure: string | undefined
    if (bwrap === undefined) failure = "bubblewrap (bwrap) is not installed"
    else {
      const attempt = () =>
        Effect.promise(() =>
          probe([
            bwrap,
            ...layout.bwrapArgs(host, runLayout(ws.root, noMasks)),
            "--",
            "/bin/bash",
            "--noprofile",
            "--norc",
            "-c",
            "exit 0"
          ])
        )
      let result = yield* attempt()
      if (!result.ok) {
        // bubblewrap before 0.8 has no --disable-userns: try once without it.
        disableUserns = false
        const second = yield* attempt()
        if (second.ok) result = second
        else disableUserns = true
      }
      if (!result.ok) failure = `bubblewrap could not create its namespaces (${result.stderr || "no message"})`
    }

    let pids: cgroup.PidsCgroup | undefined
    let processLimit: Isolation["processLimit"] = "rlimit"
    if (process.getuid?.() === 0) {
      // RLIMIT_NPROC is not enforced for a process whose real user is root on the host.
      pids = cgroup.open(`ugent-${process.pid}-${Math.random().toString(16).slice(2, 8)}`)
      processLimit = pids === undefined ? "none" : "cgroup"
      if (pids !== undefined) {
        const group = pids
        yield* Effect.addFinalizer(() =>
          Effect.gen(function* () {
            // A task just reaped may stay charged to its group for a moment; give it a second.
            for (let i = 0; i < 100 && !group.close(); i++) yield* Effect.sleep("10 millis")
          })
        )
      }
    }

    if (failure === undefined) {
      isolation = {
        kind: "bubblewrap",
        reason: `bubblewrap (${bwrap}): new user, PID, IPC, UTS, cgroup and network namespaces; only the workspace writable${network ? "; the host's network shared" : "; no network"}`,
        network,
        processLimit,
        nestedUserNamespaces: disableUserns ? "disabled" : "allowed"
      }
    } else if (options?.unsandboxed === unsandboxedConsent) {
      isolation = {
        kind: "unsandboxed",
        reason: `UNSANDBOXED by the operator's choice: ${failure}; commands run as the server's user, with resource limits and an allow-listed environment only`,
        network: true,
        processLimit,
        nestedUserNamespaces: "allowed"
      }
    } else {
      isolation = {
        kind: "none",
        reason: `no sandbox: ${failure}. The shell is not offered; install bubblewrap and allow unprivileged user namespaces, or (at your own risk) pass unsandboxed: "${unsandboxedConsent}"`,
        network,
        processLimit,
        nestedUserNamespaces: "allowed"
      }
    }

    const registry = makeRegistry({
      spawner,
      scope,
      limits: {
        outputChars: limits.outputChars,
        outputBytes: limits.outputBytes,
        background: limits.backgroundRuns,
        remembered: 32
      },
      sandbox: isolation.kind === "unsandboxed" ? "unsandboxed" : "bubblewrap"
    })

    const walker = new Walker({ blockedBy: ws.blockedBy, skip: new Set(["node_modules"]) })
    let groups = 0
    const launch = (request: Request): Effect.Effect<Launch, SandboxFailed> =>
      Effect.suspend((): Effect.Effect<Launch, SandboxFailed> => {
        const inner = program(request.command, limits)
        if (isolation.kind === "unsandboxed") {
          return Effect.succeed({
            argv: inner as [string, ...Array<string>],
            cwd: request.cwd,
            env,
            namespace: false
          })
        }
        if (isolation.kind === "none" || bwrap === undefined) {
          return Effect.fail(new SandboxFailed({ reason: isolation.reason }))
        }
        const masks = walker.find(ws.root)
        const argv = [bwrap, ...layout.bwrapArgs(host, runLayout(request.cwd, masks)), "--", ...inner]
        if (pids === undefined) {
          return Effect.succeed({ argv: argv as [string, ...Array<string>], cwd: "/", env, namespace: true })
        }
        const group = `g${++groups}`
        const procs = pids.forRun(group, limits.processes)
        if (procs === undefined) {
          return Effect.fail(new SandboxFailed({ reason: "the process-limit control group could not be created" }))
        }
        const cgroups = pids
        return Effect.succeed({
          argv: ["/bin/sh", "-c", cgroupJoin, "ugent-cgroup", procs, ...argv],
          cwd: "/",
          env,
          namespace: true,
          release: () => cgroups.release(group)
        })
      })

    const begin = (request: Request, background: boolean): Effect.Effect<RunState, StartError> =>
      Effect.gen(function* () {
        const verdict = options?.textPolicy?.(request.command, { root: ws.root, cwd: request.cwd })
        if (verdict !== undefined && !verdict.ok) {
          return yield* new ToolError.CommandDenied({
            tool: "system.bash",
            command: request.command,
            subcommand: verdict.subcommand,
            rule: verdict.rule,
            detail: `${verdict.detail} (an advisory first refusal: the command would run in a sandbox anyway)`
          })
        }
        if (background) {
          const running = registry.runningInBackground()
          if (running.length >= limits.backgroundRuns) {
            return yield* new TooManyRuns({ running: [...running], limit: limits.backgroundRuns })
          }
        }
        const how = yield* launch(request)
        return yield* registry.start(request.command, how, { timeoutMillis: request.timeoutMillis, background })
      })

    const lookup = (id: string) =>
      Effect.suspend(() => {
        const run = registry.runs.get(id)
        return run === undefined ? Effect.fail(new UnknownRun({ id })) : Effect.succeed(run)
      })

    return {
      isolation,
      run: (request) =>
        Effect.gen(function* () {
          const run = yield* begin(request, false)
          yield* registry.await(run).pipe(Effect.onInterrupt(() => registry.kill(run)))
          return yield* registry.view(run)
        }),
      start: (request) => Effect.flatMap(begin(request, true), registry.view),
      output: (id) => Effect.flatMap(lookup(id), registry.view),
      kill: (id) =>
        Effect.gen(function* () {
          const run = yield* lookup(id)
          yield* registry.kill(run)
          return yield* registry.view(run)
        })
    } satisfies SandboxShape
  })
