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
import { Deferred, Effect, Exit, Scope, Stream } from "effect"
import { ChildProcess, ChildProcessSpawner } from "effect/process"
import { SandboxFailed, TooManyRuns, UnknownRun } from "../../system/SystemError.ts"
import { Workspace } from "../../Workspace.ts"
import * as cgroup from "./cgroup.ts"
import * as layout from "./layout.ts"
import { Walker } from "./masks.ts"
import { type Launch, makeRegistry, type Run as RunState } from "./runs.ts"
import {
  type Isolation,
  type Options,
  type Request,
  type SandboxShape,
  type StartError,
  unsandboxedConsent
} from "./sandboxModel.ts"

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
const probe = (argv: ReadonlyArray<string>): Promise<{ readonly code: number | null; readonly stderr: string }> =>
  new Promise((resolve) => {
    const child = spawn(argv[0]!, argv.slice(1), { stdio: ["ignore", "ignore", "pipe"], env: {}, timeout: 10_000 })
    let stderr = ""
    child.stderr.on("data", (chunk: Buffer) => {
      if (stderr.length < 2000) stderr += chunk.toString("utf8")
    })
    child.on("error", (e) => resolve({ code: null, stderr: e.message }))
    child.on("close", (code) => resolve({ code, stderr: stderr.trim() }))
  })

/**
 * Who a command runs as on the host. A server running as root would give
 * its sandbox host root (procfs lets uid 0 write `/proc/sys`, whatever the
 * namespace), so root drops first to the operator's user or the workspace's
 * owner, through `setpriv`; `undefined` means no drop is needed.
 */
const hostUser = (
  root: string,
  given: Options["user"]
): { readonly drop: ReadonlyArray<string>; readonly uid: number } | { readonly failure: string } | undefined => {
  if (process.geteuid?.() !== 0) return undefined
  let user = given
  if (user === undefined) {
    const st = fs.statSync(root)
    if (st.uid !== 0) user = { uid: st.uid, gid: st.gid }
  }
  if (user === undefined) {
    return {
      failure: `the server runs as root and the workspace ${root} belongs to root, so a sandboxed command would be host root. Give the workspace to a user (chown -R <user> ${root}), name a user that can write it (--sandbox-user <uid>:<gid>), or run ugent as a user`
    }
  }
  if (!Number.isSafeInteger(user.uid) || !Number.isSafeInteger(user.gid) || user.uid <= 0 || user.gid < 0) {
    return { failure: `the sandbox's user must be an unprivileged uid (not root), got ${user.uid}:${user.gid}` }
  }
  const setpriv = findOnPath("setpriv")
  if (setpriv === undefined) {
    return {
      failure: "the server runs as root and setpriv (util-linux) is not installed to drop to an unprivileged user"
    }
  }
  return {
    uid: user.uid,
    drop: [setpriv, `--reuid=${user.uid}`, `--regid=${user.gid}`, "--clear-groups", "--"]
  }
}

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
 * that reads no startup file. The command comes in the environment variable
 * `UGENT_COMMAND`, which the script takes and unsets: it is an argument of
 * the inner bash, never spliced into the script. (In the environment rather
 * than on the command line, so that a process started ahead of its run can
 * receive it with bubblewrap's other arguments.)
 */
const program = (limits: { readonly processes: number; readonly fileBytes: number }) =>
  [
    "/bin/bash",
    "--noprofile",
    "--norc",
    "-c",
    `ulimit -u ${limits.processes} -f ${Math.ceil(limits.fileBytes / 1024)} || { echo "ugent: the sandbox's resource limits could not be set" >&2; exit 126; }; c=$UGENT_COMMAND; unset UGENT_COMMAND; exec /bin/bash --noprofile --norc -c "$c"`,
    "ugent-sandbox"
  ] as const

/** Joins the pids group named by `$1`, then runs the rest of the arguments. */
const cgroupJoin = 'echo $$ > "$1" || exit 125; shift; exec "$@"'

/** Bubblewrap's arguments as `--args` reads them: each ends with a NUL. */
const nulSeparated = (args: ReadonlyArray<string>): Uint8Array =>
  Buffer.from(args.map((a) => `${a}\0`).join(""), "utf8")

/**
 * A process started ahead of the next run where runs join a pids group:
 * joining one costs 10 to 20 ms (cgroup v1 waits for an RCU grace period),
 * which a warm process pays before it is needed. It has joined its group and
 * waits in bubblewrap for the run's options on descriptor 3; nothing of the
 * run (workspace masks, directory, command) is decided before it is taken.
 */
interface Warm {
  readonly handle: ChildProcessSpawner.ChildProcessHandle
  readonly scope: Scope.Closeable
  readonly options: Deferred.Deferred<Uint8Array>
  readonly group: string
}

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
    const user = hostUser(ws.root, options?.user)
    const drop = user !== undefined && "drop" in user ? user.drop : []
    const dropped = (argv: Launch["argv"]): Launch["argv"] =>
      drop.length === 0 ? argv : [drop[0]!, ...drop.slice(1), ...argv]
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
    if (user !== undefined && "failure" in user) failure = user.failure
    else if (bwrap === undefined) failure = "bubblewrap (bwrap) is not installed"
    else if (
      user !== undefined &&
      (yield* Effect.promise(() => probe([...user.drop, "/bin/sh", "-c", 'test -w "$1"', "ugent-probe", ws.root])))
        .code !== 0
    ) {
      failure = `the sandbox's user (host uid ${user.uid}) cannot write the workspace ${ws.root}: give it write access (chown -R ${user.uid} ${ws.root}) or name another user with --sandbox-user`
    } else {
      const attempt = () =>
        Effect.promise(() =>
          probe([
            ...drop,
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
      if (result.code !== 0) {
        // bubblewrap before 0.8 has no --disable-userns: try once without it.
        disableUserns = false
        const second = yield* attempt()
        if (second.code === 0) result = second
        else disableUserns = true
      }
      if (result.code !== 0) failure = `bubblewrap could not create its namespaces (${result.stderr || "no message"})`
    }

    let pids: cgroup.PidsCgroup | undefined
    let processLimit: Isolation["processLimit"] = "rlimit"
    if (process.getuid?.() === 0 && drop.length > 0) {
      // A second limit beside RLIMIT_NPROC, where root can make one: it also counts the sandbox's own setup.
      pids = cgroup.open(`ugent-${process.pid}-${Math.random().toString(16).slice(2, 8)}`)
      processLimit = pids === undefined ? "rlimit" : "cgroup"
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

    const hostUid = user !== undefined && "uid" in user ? user.uid : process.getuid?.()
    if (failure === undefined) {
      isolation = {
        kind: "bubblewrap",
        reason: `bubblewrap (${bwrap}): new user, PID, IPC, UTS, cgroup and network namespaces; only the workspace writable${network ? "; the host's network shared" : "; no network"}`,
        network,
        processLimit,
        nestedUserNamespaces: disableUserns ? "disabled" : "allowed",
        hostUid
      }
    } else if (options?.unsandboxed === unsandboxedConsent && !(user !== undefined && "failure" in user)) {
      isolation = {
        kind: "unsandboxed",
        reason: `UNSANDBOXED by the operator's choice: ${failure}; commands run as host uid ${hostUid}, with resource limits and an allow-listed environment only`,
        network: true,
        processLimit,
        nestedUserNamespaces: "allowed",
        hostUid
      }
    } else {
      isolation = {
        kind: "none",
        reason:
          user !== undefined && "failure" in user
            ? `no sandbox: ${failure}; the shell is not offered`
            : `no sandbox: ${failure}. The shell is not offered; install bubblewrap and allow unprivileged user namespaces, or (at your own risk) pass unsandboxed: "${unsandboxedConsent}"`,
        network,
        processLimit,
        nestedUserNamespaces: "allowed",
        hostUid
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
    const inner = program(limits)
    let groups = 0

    /** A new pids group for one run, with its limit, and the file a process writes its pid to, to join it. */
    const groupFor = (cgroups: cgroup.PidsCgroup) => {
      const group = `g${++groups}`
      const procs = cgroups.forRun(group, limits.processes)
      return procs === undefined ? undefined : { group, procs }
    }

    // --- warm processes (only where runs join a pids group) ---
    let warm: Warm | undefined
    let warming = false
    const closeWarm = (w: Warm): Effect.Effect<void> =>
      Effect.andThen(
        Scope.close(w.scope, Exit.void),
        Effect.sync(() => pids?.release(w.group))
      )
    /** Starts the next warm process, unless one is waiting or starting. */
    const prepare = (cgroups: cgroup.PidsCgroup, bwrapPath: string): Effect.Effect<void> =>
      Effect.gen(function* () {
        if (warm !== undefined || warming) return
        warming = true
        const joined = groupFor(cgroups)
        if (joined === undefined) {
          warming = false
          return
        }
        const { group, procs } = joined
        const ownScope = yield* Scope.make()
        const options = yield* Deferred.make<Uint8Array>()
        const spawned = yield* spawner
          .spawn(
            ChildProcess.make(
              "/bin/sh",
              ["-c", cgroupJoin, "ugent-cgroup", procs, ...drop, bwrapPath, "--args", "3", "--", ...inner],
              {
                cwd: "/",
                env: { ...env },
                extendEnv: false,
                stdin: "ignore",
                killSignal: "SIGKILL",
                additionalFds: { fd3: { type: "input", stream: Stream.fromEffect(Deferred.await(options)) } }
              }
            )
          )
          .pipe(Scope.provide(ownScope), Effect.exit)
        warming = false
        if (Exit.isFailure(spawned)) {
          yield* Scope.close(ownScope, spawned)
          cgroups.release(group)
          return
        }
        warm = { handle: spawned.value, scope: ownScope, options, group }
      }).pipe(Effect.uninterruptible)
    yield* Effect.addFinalizer(() =>
      Effect.suspend(() => {
        const w = warm
        warm = undefined
        return w === undefined ? Effect.void : closeWarm(w)
      })
    )
    /** The warm process, if one is waiting and still alive (one whose join failed has exited). */
    const takeWarm: Effect.Effect<Warm | undefined> = Effect.gen(function* () {
      const w = warm
      warm = undefined
      if (w === undefined) return undefined
      if (yield* Effect.orElseSucceed(w.handle.isRunning, () => false)) return w
      yield* closeWarm(w)
      return undefined
    })

    const launch = (request: Request): Effect.Effect<Launch, SandboxFailed> =>
      Effect.gen(function* () {
        if (request.command.includes("\0")) {
          return yield* new SandboxFailed({ reason: "a command line cannot contain a NUL character" })
        }
        if (isolation.kind === "unsandboxed") {
          return {
            argv: dropped(inner),
            cwd: request.cwd,
            env: { ...env, UGENT_COMMAND: request.command },
            namespace: false
          } satisfies Launch
        }
        if (isolation.kind === "none" || bwrap === undefined) {
          return yield* new SandboxFailed({ reason: isolation.reason })
        }
        const masks = walker.find(ws.root)
        const options = [
          ...layout.bwrapArgs(host, runLayout(request.cwd, masks)),
          "--setenv",
          "UGENT_COMMAND",
          request.command
        ]
        if (pids === undefined) {
          return { argv: dropped([bwrap, ...options, "--", ...inner]), cwd: "/", env, namespace: true } satisfies Launch
        }
        const cgroups = pids
        const taken = yield* takeWarm
        // The next run's process starts now, while this one runs.
        yield* Effect.forkIn(prepare(cgroups, bwrap), scope, { startImmediately: true })
        if (taken !== undefined) {
          return {
            argv: [bwrap, ...options, "--", ...inner],
            cwd: "/",
            env,
            namespace: true,
            release: () => cgroups.release(taken.group),
            warm: {
              handle: taken.handle,
              begin: Deferred.succeed(taken.options, nulSeparated(options)),
              close: Scope.close(taken.scope, Exit.void)
            }
          } satisfies Launch
        }
        const joined = groupFor(cgroups)
        if (joined === undefined) {
          return yield* new SandboxFailed({ reason: "the process-limit control group could not be created" })
        }
        return {
          argv: ["/bin/sh", "-c", cgroupJoin, "ugent-cgroup", joined.procs, ...drop, bwrap, ...options, "--", ...inner],
          cwd: "/",
          env,
          namespace: true,
          release: () => cgroups.release(joined.group)
        } satisfies Launch
      })

    const begin = (request: Request, background: boolean): Effect.Effect<RunState, StartError> =>
      Effect.gen(function* () {
        const verdict = options?.textPolicy?.(request.command, {
          root: ws.root,
          cwd: request.cwd,
          sandboxed: isolation.kind === "bubblewrap"
        })
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
        // Not interrupted between the two: a warm process taken by `launch` is ended by its run.
        return yield* Effect.uninterruptible(
          Effect.flatMap(launch(request), (how) =>
            registry.start(request.command, how, { timeoutMillis: request.timeoutMillis, background })
          )
        )
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
