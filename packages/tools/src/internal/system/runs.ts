/**
 * The runs of a sandbox: each command is one process tree, supervised by a
 * fiber forked into the sandbox's own scope, so a run outlives the call that
 * started it only when asked to (background) and never the server. The fiber
 * spawns the command through `effect/process` (its own process group), drains
 * both streams into bounded captures, and ends the run on the first of: the
 * process exits, the time limit passes, the output ceiling is crossed, or the
 * fiber is interrupted (`system.kill`, a caller that gave up, shutdown).
 * Ending a run closes the scope of its process, which sends SIGKILL to its
 * process group; under bubblewrap that kills the sandbox's monitor, whose
 * death kills the namespace's init (`--die-with-parent`), and the kernel then
 * kills every process of the PID namespace, those that left the group too.
 *
 * @internal
 */
import { randomBytes } from "node:crypto"
import * as fs from "node:fs"
import { Cause, Clock, Deferred, Effect, Exit, Fiber, Option, type Scope, Stream } from "effect"
import { ChildProcess, ChildProcessSpawner } from "effect/process"
import { Capture, renderBoth } from "./capture.ts"

export type Status = "running" | "exited" | "timed-out" | "killed" | "output-limit" | "failed"

/** What a run looks like from outside, at one moment. */
export interface View {
  readonly id: string
  readonly command: string
  readonly background: boolean
  readonly status: Status
  readonly exitCode: number | null
  readonly stdout: string
  readonly stderr: string
  readonly durationMillis: number
  readonly timedOut: boolean
  readonly truncated: boolean
  readonly sandbox: "bubblewrap" | "unsandboxed"
}

/** How to start one process tree. */
export interface Launch {
  readonly argv: readonly [string, ...Array<string>]
  readonly cwd: string
  readonly env: Readonly<Record<string, string>>
  /** Runs when the run has ended and its processes are gone (a control group to remove). */
  readonly release?: (() => void) | undefined
  /** The leader is bubblewrap: its child is the init of the run's PID namespace. */
  readonly namespace: boolean
  /**
   * A process started ahead for this run: it is used instead of spawning
   * `argv` (which it will become once `begin` hands it the run's options),
   * and `close` ends it like the scope of a spawn would.
   */
  readonly warm?:
    | {
        readonly handle: ChildProcessSpawner.ChildProcessHandle
        readonly begin: Effect.Effect<unknown>
        readonly close: Effect.Effect<void>
      }
    | undefined
}

export interface Run {
  readonly id: string
  readonly command: string
  readonly background: boolean
  readonly startedAt: number
  readonly stdout: Capture
  readonly stderr: Capture
  status: Status
  exitCode: number | null
  endedAt: number | undefined
  fiber: Fiber.Fiber<void> | undefined
  readonly done: Deferred.Deferred<void>
}

export interface Limits {
  /** Characters of output in a view (stdout and stderr together). */
  readonly outputChars: number
  /** Bytes of output after which a run is stopped. */
  readonly outputBytes: number
  /** Background runs running at once. */
  readonly background: number
  /** Finished runs remembered for `system.output`. */
  readonly remembered: number
}

class OutputCeiling {
  readonly _tag = "OutputCeiling"
}

const newId = (taken: ReadonlyMap<string, Run>): string => {
  for (;;) {
    const id = `run-${randomBytes(4).toString("hex")}`
    if (!taken.has(id)) return id
  }
}

/** The children of a process: from `/proc/<pid>/task/<pid>/children`, or by scanning `/proc`. */
const childrenOf = (pid: number): Array<number> => {
  try {
    return fs
      .readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8")
      .split(" ")
      .filter((s) => s !== "")
      .map(Number)
  } catch {
    const out: Array<number> = []
    for (const entry of fs.readdirSync("/proc")) {
      if (!/^\d+$/.test(entry)) continue
      try {
        const stat = fs.readFileSync(`/proc/${entry}/stat`, "utf8")
        if (Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]) === pid) out.push(Number(entry))
      } catch {
        // Gone.
      }
    }
    return out
  }
}

/** Whether a process still runs (a zombie has finished). */
const alive = (pid: number): boolean => {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8")
    return stat.slice(stat.lastIndexOf(")") + 2).charAt(0) !== "Z"
  } catch {
    return false
  }
}

/**
 * Kills a PID namespace through its init, the child of bubblewrap, and waits
 * until the init has finished. The kernel finishes an init only after every
 * process of its namespace is gone, so when this returns, nothing of the run
 * is left (killing bubblewrap alone returns before the namespace is empty).
 */
const killNamespace = (leader: number): Effect.Effect<void> =>
  Effect.gen(function* () {
    // A leader that has finished waited for its init, which waited for the whole namespace.
    if (!alive(leader)) return
    const inits = childrenOf(leader)
    for (const pid of inits) {
      try {
        process.kill(pid, "SIGKILL")
      } catch {
        // Already gone.
      }
    }
    for (let i = 0; i < 400 && inits.some(alive); i++) yield* Effect.sleep("5 millis")
  })

export interface Registry {
  readonly runs: ReadonlyMap<string, Run>
  /** Background runs still running. */
  readonly runningInBackground: () => ReadonlyArray<string>
  /** Starts a run in the sandbox's scope; it ends by itself after `timeoutMillis`. */
  readonly start: (
    command: string,
    launch: Launch,
    options: { readonly timeoutMillis: number; readonly background: boolean }
  ) => Effect.Effect<Run>
  readonly view: (run: Run) => Effect.Effect<View>
  /** Waits until a run has ended. */
  readonly await: (run: Run) => Effect.Effect<void>
  /** Ends a run (its whole process tree) and waits until it has ended. */
  readonly kill: (run: Run) => Effect.Effect<void>
}

export const makeRegistry = (options: {
  readonly spawner: ChildProcessSpawner.ChildProcessSpawner["Service"]
  readonly scope: Scope.Scope
  readonly limits: Limits
  readonly sandbox: "bubblewrap" | "unsandboxed"
}): Registry => {
  const runs = new Map<string, Run>()
  const { spawner, scope, limits } = options

  /** Forgets the oldest finished runs beyond the number remembered. */
  const forget = () => {
    const finished = [...runs.values()].filter((r) => r.status !== "running")
    for (const run of finished.slice(0, Math.max(0, finished.length - limits.remembered))) runs.delete(run.id)
  }

  const supervise = (run: Run, launch: Launch): Effect.Effect<number | null, OutputCeiling | unknown> =>
    Effect.scoped(
      Effect.gen(function* () {
        const [program, ...args] = launch.argv
        const warm = launch.warm
        const handle =
          warm === undefined
            ? yield* spawner.spawn(
                ChildProcess.make(program, args, {
                  cwd: launch.cwd,
                  env: { ...launch.env },
                  extendEnv: false,
                  stdin: "ignore",
                  killSignal: "SIGKILL"
                })
              )
            : yield* Effect.acquireRelease(Effect.as(warm.begin, warm.handle), () => warm.close)
        // Registered after the spawn, so it runs before the spawner kills the leader's group.
        if (launch.namespace) yield* Effect.addFinalizer(() => killNamespace(handle.pid))
        let bytes = 0
        const drain = (stream: Stream.Stream<Uint8Array, unknown>, capture: Capture) =>
          Stream.runForEach(stream, (chunk) =>
            Effect.suspend(() => {
              capture.pushBytes(chunk)
              bytes += chunk.length
              return bytes > limits.outputBytes ? Effect.fail(new OutputCeiling()) : Effect.void
            })
          ).pipe(Effect.ensuring(Effect.sync(() => capture.end())))
        yield* Effect.all([drain(handle.stdout, run.stdout), drain(handle.stderr, run.stderr)], {
          concurrency: 2,
          discard: true
        })
        // A process killed by a signal has no exit code; bubblewrap reports such a command as 128 + signal.
        return yield* handle.exitCode.pipe(
          Effect.map((code) => Number(code)),
          Effect.orElseSucceed(() => null)
        )
      })
    )

  const start: Registry["start"] = (command, launch, { timeoutMillis, background }) =>
    Effect.gen(function* () {
      const run: Run = {
        id: newId(runs),
        command,
        background,
        startedAt: yield* Clock.currentTimeMillis,
        stdout: new Capture(limits.outputChars),
        stderr: new Capture(limits.outputChars),
        status: "running",
        exitCode: null,
        endedAt: undefined,
        fiber: undefined,
        done: yield* Deferred.make<void>()
      }
      runs.set(run.id, run)
      const finish = (status: Status, exitCode: number | null) =>
        Effect.gen(function* () {
          if (run.status === "running") {
            run.status = status
            run.exitCode = exitCode
            run.endedAt = yield* Clock.currentTimeMillis
          }
          // A process started ahead is ended here too, in case the run ended before it was handed its options.
          if (launch.warm !== undefined) yield* launch.warm.close
          launch.release?.()
          yield* Deferred.succeed(run.done, undefined)
          forget()
        })
      const lifecycle = supervise(run, launch).pipe(
        Effect.timeoutOption(timeoutMillis),
        Effect.exit,
        Effect.flatMap((exit) => {
          if (Exit.isSuccess(exit)) {
            return Option.isSome(exit.value) ? finish("exited", exit.value.value) : finish("timed-out", null)
          }
          if (Cause.hasInterruptsOnly(exit.cause)) return finish("killed", null)
          const ceiling = exit.cause.reasons.some((r) => Cause.isFailReason(r) && r.error instanceof OutputCeiling)
          if (ceiling) return finish("output-limit", null)
          run.stderr.push(`\n[the command could not be started: ${Cause.pretty(exit.cause).split("\n")[0]}]\n`)
          return finish("failed", null)
        }),
        Effect.onInterrupt(() => finish("killed", null))
      )
      run.fiber = yield* Effect.forkIn(lifecycle, scope, { startImmediately: true })
      return run
    })

  const view: Registry["view"] = (run) =>
    Effect.map(Clock.currentTimeMillis, (now) => {
      const { stdout, stderr, truncated } = renderBoth(run.stdout, run.stderr, limits.outputChars)
      return {
        id: run.id,
        command: run.command,
        background: run.background,
        status: run.status,
        exitCode: run.exitCode,
        stdout,
        stderr,
        durationMillis: Math.max(0, (run.endedAt ?? now) - run.startedAt),
        timedOut: run.status === "timed-out",
        truncated: truncated || run.status === "output-limit",
        sandbox: options.sandbox
      }
    })

  const kill: Registry["kill"] = (run) =>
    Effect.gen(function* () {
      if (run.fiber !== undefined) yield* Fiber.interrupt(run.fiber)
      yield* Deferred.await(run.done)
    })

  return {
    runs,
    runningInBackground: () =>
      [...runs.values()].filter((r) => r.background && r.status === "running").map((r) => r.id),
    start,
    view,
    await: (run) => Deferred.await(run.done),
    kill
  }
}
