/**
 * `system.bash` runs a command line with `bash -c` in the workspace, inside
 * the {@link Sandbox.Sandbox} (bubblewrap on Linux: only the workspace
 * writable, secrets masked, no network unless the operator allows it, an
 * allow-listed environment, the whole process tree killed at the end). Each
 * call is a fresh process. The time limit is 120 s by default and 600 s at
 * most; the output is at most 30,000 characters over stdout and stderr, head
 * and tail kept around a note of what was cut. A run may go to the
 * background: the call returns its id at once, `system.output` reads it and
 * `system.kill` stops it. A non-zero exit is a result, not a failure. In a
 * workspace that keeps checkpoints, what a foreground command changed there
 * is one checkpoint (its id in `checkpoint`), so it can be undone.
 *
 * The tool needs L3. An operator may let a lower level run a fixed list of
 * plain commands ({@link requiredLevel}): the road then gates those calls at
 * the lower level.
 *
 * @since 0.2.0
 */
import { Tool, ToolError, type Trust } from "@ugent/core"
import { Effect, Schema } from "effect"
import { matches, plainCommands } from "../internal/system/plain.ts"
import * as StateDir from "../StateDir.ts"
import * as Workspace from "../Workspace.ts"
import * as Sandbox from "./Sandbox.ts"
import { SandboxFailed, TooManyRuns } from "./SystemError.ts"

/**
 * The default time limit, in seconds.
 *
 * @category constants
 * @since 0.2.0
 */
export const defaultTimeoutSeconds = 120

/**
 * The largest time limit, in seconds.
 *
 * @category constants
 * @since 0.2.0
 */
export const maxTimeoutSeconds = 600

/**
 * @category schemas
 * @since 0.2.0
 */
export const Input = Schema.Struct({
  command: Schema.String.check(
    Schema.isBetweenLength(1, 100_000),
    Schema.makeFilter(
      (command: string) => !command.includes("\u0000") || "A command line cannot contain a NUL character"
    )
  ).annotate({
    description:
      "The command line, run by `bash -c` in a sandbox: only the workspace is writable, secret files read empty, .git is read-only, there is no network."
  }),
  cwd: Schema.optionalKey(
    Schema.String.annotate({
      description: "Working directory, relative to the workspace root (default: the root)."
    })
  ),
  timeoutSeconds: Schema.optionalKey(
    Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: maxTimeoutSeconds })).annotate({
      description: `Time limit in seconds (default ${defaultTimeoutSeconds}, at most ${maxTimeoutSeconds}); past it the whole process tree is killed and the output so far returned.`
    })
  ),
  background: Schema.optionalKey(
    Schema.Boolean.annotate({
      description:
        "Start the command and return its id at once (status running); read its output with system.output, stop it with system.kill. The time limit still applies."
    })
  )
})

/**
 * @category models
 * @since 0.2.0
 */
export type Input = typeof Input.Type

/**
 * The run: id, status, exit code, stdout, stderr, duration, whether it timed
 * out and whether output was cut.
 *
 * @category schemas
 * @since 0.2.0
 */
export const Output = Sandbox.Run

/**
 * @category models
 * @since 0.2.0
 */
export type Output = typeof Output.Type

/**
 * Everything `system.bash` may fail with.
 *
 * @category schemas
 * @since 0.2.0
 */
export const Failure = Schema.Union([
  ToolError.InvalidInput,
  ToolError.CommandDenied,
  TooManyRuns,
  SandboxFailed,
  ...Workspace.pathErrors,
  StateDir.StateRefused
])

const description = (isolation: Sandbox.Isolation | undefined): string => {
  const base =
    "Run a shell command (bash -c) in the workspace and return its exit code, stdout and stderr (at most 30,000 characters, head and tail kept). Time limit 120 s by default, 600 s at most (timeoutSeconds); background: true returns an id at once for system.output and system.kill."
  if (isolation?.kind === "unsandboxed") {
    return `${base} WARNING: UNSANDBOXED on this server: commands run as the server's user with its file system and network.`
  }
  const network = isolation?.network === true ? "the network is available" : "there is no network"
  return `${base} It runs in a sandbox: only the workspace is writable, secret files (.env, keys) read empty, .git is read-only, ${network}, and nothing outside the workspace but system programs is visible.`
}

/**
 * Builds the tool, describing the isolation it will run under (the family
 * does this with the sandbox it built; without one, the default sandbox: no
 * network).
 *
 * **Example** (A command in the sandbox)
 * ```ts
 * import { Trust } from "@ugent/core"
 * import { SystemBash, Sandbox, Workspace } from "@ugent/tools"
 * import { NodeServices } from "@effect/platform-node"
 * import { Effect, Layer } from "effect"
 * import { chownSync, mkdtempSync, writeFileSync } from "node:fs"
 * import { tmpdir } from "node:os"
 * import { join } from "node:path"
 * const root = mkdtempSync(join(tmpdir(), "bash-"))
 * // A server running as root runs commands as the workspace's owner, never as root.
 * if (process.getuid?.() === 0) chownSync(root, 65534, 65534)
 * writeFileSync(join(root, "a.txt"), "one\ntwo\n")
 * const layer = Sandbox.layer().pipe(Layer.provideMerge(Workspace.layer({ root })), Layer.provide(NodeServices.layer))
 * const run = SystemBash.make().run({ command: "wc -l < a.txt && exit 3" })
 * const out = await Effect.runPromise(Effect.scoped(run.pipe(Effect.provide([layer, Trust.grant(3)]))))
 * console.log(out.status, out.exitCode, JSON.stringify(out.stdout))
 * // => exited 3 "2\n"
 * ```
 *
 * @category constructors
 * @since 0.2.0
 */
export const make = (isolation?: Sandbox.Isolation) =>
  Tool.make({
    name: "system.bash",
    description: description(isolation),
    input: Input,
    output: Output,
    failure: Failure,
    trust: 3,
    effects: {
      readsFs: true,
      writesFs: true,
      callsShell: true,
      callsNetwork: isolation?.kind === "unsandboxed" || isolation?.network === true,
      idempotent: false
    },
    run: (input) =>
      Effect.gen(function* () {
        const seconds = input.timeoutSeconds ?? defaultTimeoutSeconds
        if (!(Number.isInteger(seconds) && seconds >= 1 && seconds <= maxTimeoutSeconds)) {
          return yield* new ToolError.InvalidInput({
            tool: "system.bash",
            issues: `timeoutSeconds must be an integer from 1 to ${maxTimeoutSeconds} (got ${seconds}); leave it out for ${defaultTimeoutSeconds}`
          })
        }
        const ws = yield* Workspace.Workspace
        const cwd = yield* ws.resolve(input.cwd ?? ".", { expect: "directory" })
        const sandbox = yield* Sandbox.Sandbox
        const request = { command: input.command, cwd: cwd.real, timeoutMillis: seconds * 1000 }
        if (input.background === true) return yield* sandbox.start(request)
        if (ws.checkpoints === undefined) return yield* sandbox.run(request)
        // What the command changed in the workspace is a checkpoint, so it can be undone.
        const [run, checkpoint] = yield* ws.checkpoints.capture(sandbox.run(request))
        return checkpoint === undefined ? run : { ...run, checkpoint: checkpoint.id }
      })
  })

/**
 * `system.bash`, described for the default sandbox (no network).
 *
 * @category tools
 * @since 0.2.0
 */
export const bash = make()

/**
 * What a recipe may grant: a trust level at which a caller may run the
 * listed commands. A pattern is words separated by spaces, matched literally,
 * and a final `*` for any further words (`"git status"`, `"git diff *"`,
 * `"npm test"`).
 *
 * @category models
 * @since 0.2.0
 */
export interface ShellAllowance {
  /** At least 1: any command may write the workspace. */
  readonly level: 1 | 2 | 3
  readonly commands: ReadonlyArray<string>
}

/**
 * The level a `system.bash` call needs under a recipe's allowance: the
 * allowance's level when the command line is plain (words of letters,
 * digits and `_ . / : = , + @ % -` or single-quoted text, joined by `&&`,
 * `||`, `;`, `|`: no expansion, substitution, redirection, glob, assignment
 * or background) and every simple command in it matches a listed pattern;
 * otherwise L3. Background runs, and a server without a sandbox, always need
 * L3. Plain lines have one reading, so no re-spelling gets past the list;
 * what a listed program itself may do is the list's author's choice, and the
 * sandbox still contains it.
 *
 * **Example** (A read-only command list for L1)
 * ```ts
 * import { SystemBash } from "@ugent/tools"
 * const allowance: SystemBash.ShellAllowance = { level: 1, commands: ["git status", "git diff *", "npm test"] }
 * console.log(SystemBash.requiredLevel({ command: "git status && npm test" }, allowance))
 * // => 1
 * console.log(SystemBash.requiredLevel({ command: "git diff $(id)" }, allowance), SystemBash.requiredLevel({ command: "npm test; rm -rf x" }, allowance))
 * // => 3 3
 * ```
 *
 * @category trust
 * @since 0.2.0
 */
export const requiredLevel = (
  input: { readonly command: string; readonly background?: boolean | undefined },
  allowance: ShellAllowance | undefined,
  isolation?: Sandbox.Isolation
): Trust.TrustLevel => {
  if (allowance === undefined || input.background === true || isolation?.kind === "unsandboxed") return 3
  const commands = plainCommands(input.command)
  if (commands === undefined) return 3
  const patterns = allowance.commands.map((c) => c.trim().split(/\s+/))
  const allowed = commands.every((argv) => patterns.some((p) => matches(argv, p)))
  return allowed ? (Math.max(1, allowance.level) as Trust.TrustLevel) : 3
}
