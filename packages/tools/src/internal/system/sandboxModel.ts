// What a sandbox is built from and offers, shared by the public `Sandbox`
// module and the builder, so that neither imports the other's module.
import type { ToolError } from "@ugent/core"
import { type Effect, Schema } from "effect"
import type { SandboxFailed, TooManyRuns, UnknownRun } from "../../system/SystemError.ts"

/** The words that enable the opt-out (exported as `Sandbox.unsandboxedConsent`). */
export const unsandboxedConsent = "I-understand-this-runs-unsandboxed" as const

export type TextPolicy = (
  command: string,
  where: { readonly root: string; readonly cwd: string; readonly sandboxed?: boolean | undefined }
) =>
  | { readonly ok: true }
  | { readonly ok: false; readonly rule: string; readonly detail: string; readonly subcommand: string }

export interface Limits {
  /** Processes and threads at once (default 1024). */
  readonly processes?: number | undefined
  /** Largest file a command may write, in bytes (default 1 GiB). */
  readonly fileBytes?: number | undefined
  /** Size of the private `/tmp`, in bytes (default 512 MiB). */
  readonly tmpBytes?: number | undefined
  /** Characters of output returned, stdout and stderr together, head and tail kept (default 30,000). */
  readonly outputChars?: number | undefined
  /** Bytes of output after which a run is stopped (default 16 MiB). */
  readonly outputBytes?: number | undefined
  /** Background runs running at once (default 8). */
  readonly backgroundRuns?: number | undefined
}

export interface Options {
  /** Share the host's network (default `false`: no network at all). */
  readonly network?: boolean | undefined
  /** Run commands without a sandbox where none can be made. Only these exact words enable it. */
  readonly unsandboxed?: typeof unsandboxedConsent | undefined
  /** A first, advisory refusal of shell text, before anything runs. */
  readonly textPolicy?: TextPolicy | undefined
  /** Further host directories mounted read-only at the same path (a toolchain outside `/usr`). */
  readonly readOnly?: ReadonlyArray<string> | undefined
  /** Further environment variables, by value (the server's own environment is never copied). */
  readonly env?: Readonly<Record<string, string>> | undefined
  readonly limits?: Limits | undefined
  /** The bubblewrap binary (default: `bwrap` on the PATH). */
  readonly bwrap?: string | undefined
  /**
   * The host user commands run as when the server runs as root (default: the
   * workspace's owner). Never root: a sandbox of host root could write
   * `/proc/sys`. It must be able to write the workspace. Ignored when the
   * server is not root (commands then run as the server's user).
   */
  readonly user?: { readonly uid: number; readonly gid: number } | undefined
}

export interface Isolation {
  readonly kind: "bubblewrap" | "unsandboxed" | "none"
  /** Why there is no sandbox, or what the sandbox is, in a sentence. */
  readonly reason: string
  readonly network: boolean
  /** What limits the number of processes: the resource limit, and a control group too where root can make one. */
  readonly processLimit: "rlimit" | "cgroup"
  /** Whether further user namespaces are disabled inside the sandbox. */
  readonly nestedUserNamespaces: "disabled" | "allowed"
  /** The host user commands run as (the server's own user unless it is root). */
  readonly hostUid: number | undefined
}

export const Status = Schema.Literals(["running", "exited", "timed-out", "killed", "output-limit", "failed"])

export const Run = Schema.Struct({
  id: Schema.String,
  command: Schema.String,
  background: Schema.Boolean,
  status: Status,
  exitCode: Schema.NullOr(Schema.Int),
  stdout: Schema.String,
  stderr: Schema.String,
  durationMillis: Schema.Int,
  timedOut: Schema.Boolean,
  truncated: Schema.Boolean,
  sandbox: Schema.Literals(["bubblewrap", "unsandboxed"]),
  /** The checkpoint of what the command changed in the workspace (self.tools.checkpoint.restore undoes it). */
  checkpoint: Schema.optionalKey(Schema.String)
})

export type Run = typeof Run.Type

export interface Request {
  readonly command: string
  readonly cwd: string
  readonly timeoutMillis: number
}

export type StartError = ToolError.CommandDenied | TooManyRuns | SandboxFailed

export interface SandboxShape {
  readonly isolation: Isolation
  /** Runs a command to its end (exit, timeout, output ceiling); interrupting the call kills the run. */
  readonly run: (request: Request) => Effect.Effect<Run, StartError>
  /** Starts a command in the background and returns at once. */
  readonly start: (request: Request) => Effect.Effect<Run, StartError>
  /** A run started by this sandbox, as it is now. */
  readonly output: (id: string) => Effect.Effect<Run, UnknownRun>
  /** Kills a run's whole process tree and returns its final state. */
  readonly kill: (id: string) => Effect.Effect<Run, UnknownRun>
}
