/**
 * The `Sandbox` runs shell commands inside an operating-system sandbox: on
 * Linux, bubblewrap, with new user, PID, IPC, UTS, cgroup and network
 * namespaces. The kernel is the boundary, not the text of the command.
 *
 * **What isolation is real (Linux, bubblewrap).**
 * - Files: only the workspace is mounted writable, at its real path. Inside
 *   it, every entry the workspace policy blocks is masked (`.env*`, keys,
 *   credential files: empty and read-only), `.git` is read-only (no hook,
 *   config or alternates can be planted for the host's git to run later) and
 *   `.ugent` is hidden. System directories (`/usr`, `/bin`, `/lib*`) are
 *   read-only; the host's `/etc` is not mounted (a synthetic one names the
 *   sandbox user; `/etc/passwd`, `/etc/shadow` and the rest of the host's are
 *   not there), nor are `/home`, `/root`, `/var`, `/run` or `/sys`; `/tmp` is
 *   private and size-limited, `/proc` shows only the sandbox's processes,
 *   `/dev` is minimal and read-only (its `/dev/shm` is sized like `/tmp`).
 *   The root is read-only.
 * - Network: none unless the operator allows it (`network: true`): a new
 *   network namespace has only its own loopback, so the host's loopback
 *   services (databases, metadata proxies) are unreachable too.
 * - Privileges: an unprivileged user (uid 1000) with no capabilities, in a
 *   new session (no terminal injection), with further user namespaces
 *   disabled where bubblewrap can (`--disable-userns`). It is never host
 *   root: a server running as root drops to the workspace's owner (or the
 *   operator's `user`) before bubblewrap starts, and without such a user the
 *   shell is not offered. `/proc/sys`, `/proc/sysrq-trigger`, `/proc/irq`
 *   and `/proc/bus` are read-only whatever the user.
 * - Environment: built from an allow-list (`PATH`, `HOME`, `LANG`, `TERM`, …
 *   and the operator's `env`); nothing of the server's environment is copied.
 * - Processes: a run is one PID namespace. When it ends (exit, timeout,
 *   `system.kill`, a caller that gave up, shutdown) the sandbox's monitor is
 *   killed, its init dies with it, and the kernel kills every process of the
 *   namespace, whatever group or session they moved to. The number of
 *   processes is limited by `RLIMIT_NPROC` (it holds: the command's host user
 *   is never root, the one user the kernel exempts) and, where the server runs
 *   as root and can make one, also by a `pids` control group; file size by
 *   `RLIMIT_FSIZE`; output by a byte ceiling after which the run is stopped.
 *   Joining a `pids` group is slow (10–20 ms), so where runs join one the
 *   next run's process is started ahead: it joins its group and waits in
 *   bubblewrap for the run's options, which decide everything about the run.
 *
 * **What is not isolated.** Memory is not limited beyond the process count;
 * CPU time only by the wall-time limit. The kernel is shared: a kernel bug
 * reachable from an unprivileged user namespace is an escape. Unix sockets
 * inside the workspace reach whatever listens on them. A shell-text policy
 * (`textPolicy`) may run first as a friendly refusal; it is advisory.
 *
 * **Where there is no sandbox** (no bubblewrap, or user namespaces refused)
 * the shell is not offered at all, unless the operator passes the loudly
 * named opt-out `unsandboxed: "I-understand-this-runs-unsandboxed"`: then
 * commands run as the server's user, with the allow-listed environment,
 * resource limits and process-group kill only.
 *
 * Prior art: Anthropic's sandbox-runtime also drives bubblewrap on Linux;
 * bubblewrap is used directly here, because the masks come from the
 * workspace's own policy, network is on or off (no proxy needed), and one
 * process fewer per call keeps the overhead small.
 *
 * @since 0.2.0
 */
import { Context, Effect, Layer } from "effect"
import type { ChildProcessSpawner } from "effect/process"
import * as internal from "../internal/system/sandbox.ts"
import * as model from "../internal/system/sandboxModel.ts"
import type { Workspace } from "../Workspace.ts"

// ---------------------------------------------------------------------------
// Models
// ---------------------------------------------------------------------------

/**
 * The words an operator must pass, exactly, to run the shell where no
 * sandbox exists.
 *
 * @category constants
 * @since 0.2.0
 */
export const unsandboxedConsent: typeof model.unsandboxedConsent = model.unsandboxedConsent

/**
 * A shell-text policy run before the sandbox, as a friendly first refusal
 * (`Sandboxed.textPolicy(...)` of `@ugent/wrappers` is one). Advisory: shell
 * text can always be re-spelled; the sandbox is the boundary. `sandboxed`
 * says whether a sandbox stands behind it (false on the unsandboxed opt-out).
 *
 * @category models
 * @since 0.2.0
 */
export type { TextPolicy } from "../internal/system/sandboxModel.ts"

/**
 * Resource limits of every run.
 *
 * @category models
 * @since 0.2.0
 */
export type { Limits } from "../internal/system/sandboxModel.ts"

/**
 * How the sandbox is built. Every option is the operator's, never a
 * caller's.
 *
 * @category models
 * @since 0.2.0
 */
export type { Options } from "../internal/system/sandboxModel.ts"

/**
 * What isolation this machine gives, found when the sandbox is built.
 * `kind` is `none` when no sandbox can be made and no opt-out was given: the
 * shell is then not offered.
 *
 * @category models
 * @since 0.2.0
 */
export type { Isolation } from "../internal/system/sandboxModel.ts"

/**
 * The state of a run: `running`; `exited` (with its exit code);
 * `timed-out`, `killed` or `output-limit` (its whole process tree was
 * killed); `failed` (it could not start).
 *
 * @category schemas
 * @since 0.2.0
 */
export { Status } from "../internal/system/sandboxModel.ts"

/**
 * A run as a caller sees it: its id (for `system.output` and `system.kill`),
 * state, exit code, output so far (at most 30,000 characters over both
 * streams by default, head and tail kept around a note of what was cut),
 * duration, and whether it ran in a sandbox.
 *
 * @category schemas
 * @since 0.2.0
 */
export { Run } from "../internal/system/sandboxModel.ts"

/**
 * What to run: a command line for `bash -c`, the real working directory
 * (inside the workspace), and the time limit.
 *
 * @category models
 * @since 0.2.0
 */
export type { Request } from "../internal/system/sandboxModel.ts"

/**
 * The failures of starting a run.
 *
 * @category models
 * @since 0.2.0
 */
export type { StartError } from "../internal/system/sandboxModel.ts"

// ---------------------------------------------------------------------------
// Service
// ---------------------------------------------------------------------------

/**
 * What the sandbox offers.
 *
 * @category models
 * @since 0.2.0
 */
export type { SandboxShape } from "../internal/system/sandboxModel.ts"

/**
 * The sandbox service.
 *
 * @category services
 * @since 0.2.0
 */
export class Sandbox extends Context.Service<Sandbox, model.SandboxShape>()("ugent/tools/Sandbox") {}

// ---------------------------------------------------------------------------
// Construction
// ---------------------------------------------------------------------------

/**
 * The sandbox over the current workspace. Building it finds bubblewrap and
 * runs it once to see that namespaces can be made (a few milliseconds); the
 * result is in `isolation`. Closing the layer kills every run still going.
 *
 * **Example** (A command sees the workspace and nothing else)
 * ```ts
 * import { Sandbox, Workspace } from "@ugent/tools"
 * import { NodeServices } from "@effect/platform-node"
 * import { Effect, Layer } from "effect"
 * import { chownSync, mkdtempSync, realpathSync, writeFileSync } from "node:fs"
 * import { tmpdir } from "node:os"
 * import { join } from "node:path"
 * const root = realpathSync(mkdtempSync(join(tmpdir(), "ws-")))
 * // A server running as root runs commands as the workspace's owner, never as root.
 * if (process.getuid?.() === 0) chownSync(root, 65534, 65534)
 * writeFileSync(join(root, "notes.txt"), "hi\n")
 * writeFileSync(join(root, ".env"), "TOKEN=s3cret\n")
 * const program = Effect.gen(function* () {
 *   const sandbox = yield* Sandbox.Sandbox
 *   if (sandbox.isolation.kind !== "bubblewrap") return "no sandbox here"
 *   const run = yield* sandbox.run({ command: "cat notes.txt .env; cat /etc/shadow /root/.bashrc 2>&1", cwd: root, timeoutMillis: 10_000 })
 *   return [run.status, run.exitCode, run.stdout]
 * })
 * const layer = Sandbox.layer().pipe(Layer.provideMerge(Workspace.layer({ root })), Layer.provide(NodeServices.layer))
 * console.log(await Effect.runPromise(Effect.scoped(Effect.provide(program, layer))))
 * // => [ 'exited', 1, 'hi\ncat: /etc/shadow: No such file or directory\ncat: /root/.bashrc: No such file or directory\n' ]
 * ```
 *
 * @category layers
 * @since 0.2.0
 */
export const layer = (
  options?: model.Options
): Layer.Layer<Sandbox, never, Workspace | ChildProcessSpawner.ChildProcessSpawner> =>
  Layer.effect(
    Sandbox,
    Effect.map(internal.make(options), (shape) => Sandbox.of(shape))
  )
