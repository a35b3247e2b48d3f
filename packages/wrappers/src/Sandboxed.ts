/**
 * `Sandboxed` runs a tool under an ADVISORY policy plus resource limits: its
 * working directory must lie in the workspace, a command it is given must
 * pass the shell-text policy, it has a wall-time limit, and its output a size
 * limit; shell tools read the scrubbed environment and the limits from
 * {@link Sandbox} and spawn with them.
 *
 * **What isolation is real: none from this wrapper.** The text policy is a
 * fast, friendly first refusal whose message a model can act on, not a
 * security boundary: shell text can always be re-spelled (`((…))` and
 * `$((…))` re-read as subshells, `$(…)` evaluated inside arithmetic, array
 * subscripts and `${x@P}`, environment prefixes such as `PATH=.`,
 * `BASH_ENV`, `GIT_CONFIG_*`, allowed programs that run programs: awk
 * `system`, sed `e`, tar checkpoint actions, make, git `--upload-pack`).
 * Every subcommand it can see is parsed (`;`, `&&`, `||`, pipes, subshells,
 * `$(…)`, backticks, here-documents, `sh -c` strings, `timeout`/`nice`/
 * `env`/`xargs`/`find -exec` wrappers) and must be an allowed program that
 * matches no denied pattern; anything the parser does not understand is
 * refused. The limits are real: wall time is enforced by interrupting the
 * call, which kills the child's process group when the shell tool spawns it
 * in a scope with `ChildProcess` (a process that calls `setsid` leaves the
 * group). {@link scrubEnv} removes what looks like a secret, which is a guess
 * by name and value, not an allow-list. The boundary is the kernel: the
 * `system.bash` tool of `@ugent/tools` runs every command in a bubblewrap
 * sandbox (new namespaces, only the workspace writable, secrets masked, no
 * network, an allow-listed environment) and can take this policy as its
 * first refusal (`Sandboxed.textPolicy`). Elsewhere, for isolation from the
 * file system or the network, run the agent in a container or VM.
 *
 * @since 0.1.0
 */
import { realpathSync } from "node:fs"
import * as NodePath from "node:path"
import { Tool, ToolError } from "@ugent/core"
import { Context, Duration, Effect, Option, Predicate, Schema } from "effect"
import { dual } from "effect/Function"
import { optionEncoder } from "./internal/jsonValue.ts"
import { type CommandPolicy, type DenyRule, type Invocation, vet } from "./internal/shellPolicy.ts"
import { TimedOut } from "./Timeout.ts"

/**
 * A further denied pattern (`name`, and `check`, which returns why an
 * unwrapped program is refused), and the program it sees (`name`, `args`,
 * whether `xargs` or `find` feed it, the simple command it came from).
 *
 * @category models
 * @since 0.1.0
 */
export type { DenyRule, Invocation }

/**
 * The programs a sandboxed shell may run by default: file inspection, text
 * processing, git and simple file management. Interpreters and package
 * managers (`node`, `npm`, `python`) are left out on purpose, because they
 * run arbitrary code; add them when that is acceptable.
 *
 * @category constants
 * @since 0.1.0
 */
export const defaultAllowedCommands: ReadonlyArray<string> = [
  // inspection
  "ls",
  "cat",
  "head",
  "tail",
  "wc",
  "grep",
  "egrep",
  "fgrep",
  "rg",
  "find",
  "fd",
  "tree",
  "file",
  "stat",
  "du",
  "df",
  "which",
  "type",
  "realpath",
  "readlink",
  "basename",
  "dirname",
  "pwd",
  "date",
  "printenv",
  "env",
  // text
  "echo",
  "printf",
  "sort",
  "uniq",
  "cut",
  "tr",
  "sed",
  "awk",
  "diff",
  "cmp",
  "comm",
  "paste",
  "join",
  "column",
  "nl",
  "fold",
  "fmt",
  "rev",
  "tac",
  "seq",
  "expr",
  "jq",
  "base64",
  "sha256sum",
  "sha1sum",
  "md5sum",
  "xxd",
  "od",
  "hexdump",
  // files
  "mkdir",
  "touch",
  "cp",
  "mv",
  "rm",
  "rmdir",
  "ln",
  "chmod",
  "tee",
  "tar",
  "gzip",
  "gunzip",
  "zcat",
  "zip",
  "unzip",
  // git and builds
  "git",
  "make",
  // shell builtins
  "cd",
  "pushd",
  "popd",
  "test",
  "[",
  "true",
  "false",
  ":",
  "sleep",
  "wait",
  "exit",
  "export",
  "set",
  "unset",
  "read",
  "local",
  "return",
  "shift"
]

// --- secrets in the environment ----------------------------------------------------------------

const secretNames: ReadonlyArray<RegExp> = [
  /TOKEN/i,
  /SECRET/i,
  /PASSWORD|PASSWD|PASSPHRASE/i,
  /(^|_)PASS$/i,
  /PGPASS/i,
  /.+_PWD$/i, // MYSQL_PWD; not PWD or OLDPWD
  /WEBHOOK/i,
  /(^|_)KEYS?$/i,
  /API_?KEY/i,
  /ACCESS_?KEY/i,
  /PRIVATE/i,
  /CREDENTIAL/i,
  /(^|_)AUTH($|_)/i,
  /COOKIE/i,
  /^AWS_/i,
  /^AZURE_/i,
  /DATABASE_URL|CONNECTION_STRING|_DSN$/i,
  /^SSH_AUTH_SOCK$/,
  /^GPG_AGENT_INFO$/,
  /^KRB5CCNAME$/
]

const secretValues: ReadonlyArray<RegExp> = [
  /\/\/[^/\s:@]*:[^/\s@]+@/, // credentials in a URL, a password without a user too (redis://:pw@host)
  /^(sk|rk|pk)_(live|test)_/, // payment-provider keys
  /hooks\.slack\.com\/|discord(app)?\.com\/api\/webhooks\/|webhook\.office\.com\//i,
  /^[0-9a-f]{40,}$/i, // a bare hex token (40 characters or more)
  /^(sk|rk)-[A-Za-z0-9_-]{16,}/,
  /^sk-ant-/,
  /^gh[pousr]_[A-Za-z0-9]{20,}/,
  /^github_pat_/,
  /^glpat-/,
  /^xox[abprs]-/,
  /^AKIA[0-9A-Z]{16}$/,
  /^AIza[0-9A-Za-z_-]{30,}/,
  /^eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\./, // a JWT
  /-----BEGIN [A-Z ]*PRIVATE KEY-----/
]

/**
 * Whether an environment variable looks like a secret, by its name (`*_KEY`,
 * `*TOKEN*`, `*SECRET*`, `PASSWORD`, `AWS_*`, credentials, auth sockets…) or
 * its value (a URL with a password, a known API-key format, a webhook URL, a
 * long hex token, a JWT, a private key). A guess, not a guarantee: the
 * sandboxed `system.bash` of `@ugent/tools` builds its child's environment
 * from an allow-list instead.
 *
 * @category environment
 * @since 0.1.0
 */
export const isSecret = (name: string, value: string | undefined): boolean =>
  secretNames.some((re) => re.test(name)) || (value !== undefined && secretValues.some((re) => re.test(value)))

/**
 * The environment without the variables that look like secrets (see
 * {@link isSecret}), for a shell tool to spawn its child with. Names in
 * `keep` stay whatever they look like.
 *
 * **Example** (API keys do not reach the child)
 * ```ts
 * import { Sandboxed } from "@ugent/wrappers"
 * const env = Sandboxed.scrubEnv({ PATH: "/usr/bin", OPENAI_API_KEY: "sk-abc", GITHUB_TOKEN: "x", DB: "postgres://u:p@h/db", HOME: "/home/a" })
 * console.log(env)
 * // => { PATH: '/usr/bin', HOME: '/home/a' }
 * ```
 *
 * @category environment
 * @since 0.1.0
 */
export const scrubEnv = (
  env: Readonly<Record<string, string | undefined>>,
  options?: { readonly keep?: ReadonlyArray<string> | undefined }
): Record<string, string> => {
  const keep = new Set(options?.keep ?? [])
  const out: Record<string, string> = {}
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) continue
    if (keep.has(name) || !isSecret(name, value)) out[name] = value
  }
  return out
}

// --- errors ----------------------------------------------------------------------------------------

/**
 * A command was refused by the command policy before anything ran. Defined
 * once in `@ugent/core` (`ToolError.CommandDenied`), so the shell tool of
 * `@ugent/tools`, which can apply the same policy, fails with the same class.
 *
 * **Example** (Reading the message)
 * ```ts
 * import { CommandDenied } from "@ugent/wrappers"
 * const e = new CommandDenied({ tool: "system.bash", command: "ls && sudo rm x", subcommand: "sudo rm x", rule: "privilege", detail: "it runs sudo, which raises privileges" })
 * console.log(e.message)
 * // => system.bash refused the command: it runs sudo, which raises privileges (in "sudo rm x", rule privilege). Nothing was run. Use allowed programs without this pattern, or ask the user to run it.
 * ```
 *
 * @category errors
 * @since 0.1.0
 */
export const CommandDenied = ToolError.CommandDenied

/**
 * @category errors
 * @since 0.1.0
 */
export type CommandDenied = ToolError.CommandDenied

/**
 * The working directory a call asked for is outside the workspace (by its
 * path, or through a symbolic link). Defined once in `@ugent/core`
 * (`ToolError.OutsideWorkspace`), the class the workspace jail raises.
 *
 * @category errors
 * @since 0.1.0
 */
export const OutsideWorkspace = ToolError.OutsideWorkspace

/**
 * @category errors
 * @since 0.1.0
 */
export type OutsideWorkspace = ToolError.OutsideWorkspace

/**
 * The output of a call was larger than the limit and could not be truncated
 * (or the policy is to fail rather than truncate).
 *
 * @category errors
 * @since 0.1.0
 */
export class OutputTooLarge extends Schema.TaggedError<OutputTooLarge>()("OutputTooLarge", {
  tool: Schema.String,
  chars: Schema.Number,
  limit: Schema.Number
}) {
  static readonly kind: ToolError.Kind = "failed"
  override get message(): string {
    return `${this.tool} produced ${this.chars} characters of output, over the limit of ${this.limit}. Narrow the call (pipe through head or grep, a smaller path, fewer files) and try again.`
  }
}

// --- the policy in force ---------------------------------------------------------------------------

/**
 * What a sandboxed call runs under: the workspace root and working directory
 * (real paths), the scrubbed environment to give a child process, the limits,
 * and the command vetting itself (for a tool that builds further commands).
 *
 * @category models
 * @since 0.1.0
 */
export interface SandboxPolicy {
  readonly root: string
  readonly cwd: string
  readonly env: Readonly<Record<string, string>>
  readonly timeoutMillis: number
  readonly maxOutputChars: number
  readonly vet: (
    command: string
  ) =>
    | { readonly ok: true }
    | { readonly ok: false; readonly rule: string; readonly detail: string; readonly subcommand: string }
}

const defaultPolicy = (): SandboxPolicy => {
  const root = process.cwd()
  const policy: CommandPolicy = { allow: new Set(defaultAllowedCommands), root, cwd: root, rules: [] }
  return {
    root,
    cwd: root,
    // Read afresh: the process environment may change after the default is first used.
    get env() {
      return scrubEnv(process.env)
    },
    timeoutMillis: 120_000,
    maxOutputChars: 30_000,
    vet: (command) => vet(command, policy)
  }
}

/**
 * The sandbox policy in force: inside {@link Sandboxed}, the one of that call;
 * elsewhere a default (the process's working directory, the scrubbed process
 * environment, 120 s, 30,000 characters, the default allow-list). A shell
 * tool spawns its child with `cwd` and `env` from here.
 *
 * @category references
 * @since 0.1.0
 */
export const Sandbox = Context.Reference<SandboxPolicy>("ugent/wrappers/Sandbox", { defaultValue: defaultPolicy })

/**
 * The options of {@link Sandboxed}.
 *
 * @category models
 * @since 0.1.0
 */
export interface SandboxedOptions<A = unknown> {
  /** The workspace root (default: the process's working directory). */
  readonly root?: string | undefined
  /** Where the input names its working directory (default: its `cwd` field), relative to the root or absolute. */
  readonly cwd?: ((input: A) => string | undefined) | undefined
  /** Where the input holds a command line to vet (default: its `command`, `cmd` or `script` field). */
  readonly command?: ((input: A) => string | undefined) | undefined
  /** Wall-time limit (default 120 s). */
  readonly timeout?: Duration.Input | undefined
  /** Output limit in characters of text (default 30,000). */
  readonly maxOutputChars?: number | undefined
  /** Past the limit: cut the longest texts, keeping head and tail with a notice (default), or fail. */
  readonly onOutputLimit?: "truncate" | "fail" | undefined
  /** The allowed programs (default {@link defaultAllowedCommands}); `"all"` keeps only the denied patterns. */
  readonly allow?: ReadonlyArray<string> | "all" | undefined
  /** Further denied patterns, checked on every unwrapped program. */
  readonly rules?: ReadonlyArray<DenyRule> | undefined
  /** The environment to scrub and pass on (default: the process's). */
  readonly env?: Readonly<Record<string, string | undefined>> | undefined
  /** Variable names kept even when they look like secrets. */
  readonly keepEnv?: ReadonlyArray<string> | undefined
}

const field =
  (...names: ReadonlyArray<string>) =>
  (input: unknown): string | undefined => {
    if (!Predicate.isObject(input)) return undefined
    for (const name of names) {
      const value = (input as Record<string, unknown>)[name]
      if (typeof value === "string") return value
    }
    return undefined
  }

const realpath = (p: string): string | undefined => {
  try {
    // The native call is one realpath(3), not an lstat per path segment.
    return realpathSync.native(p)
  } catch {
    return undefined
  }
}

/**
 * The real path of `p`, or, when it does not exist yet, the real path of its
 * nearest existing ancestor joined with the missing rest (`p` is absolute and
 * normalized, so the rest holds no `..`).
 */
const realOrNearest = (p: string): string => {
  const missing: Array<string> = []
  let head = p
  for (;;) {
    const real = realpath(head)
    if (real !== undefined) return NodePath.join(real, ...missing.reverse())
    const parent = NodePath.dirname(head)
    if (parent === head) return p
    missing.push(NodePath.basename(head))
    head = parent
  }
}

const isInside = (root: string, p: string): boolean => {
  const rel = NodePath.relative(root, p)
  return rel === "" || (!rel.startsWith("..") && !NodePath.isAbsolute(rel))
}

// --- output limit -----------------------------------------------------------------------------------

interface Leaf {
  readonly path: ReadonlyArray<string | number>
  readonly text: string
}

const leavesOf = (value: unknown): Array<Leaf> => {
  const out: Array<Leaf> = []
  const visit = (v: unknown, path: Array<string | number>) => {
    if (typeof v === "string") out.push({ path: [...path], text: v })
    else if (Array.isArray(v)) {
      for (const [i, x] of v.entries()) visit(x, [...path, i])
    } else if (Predicate.isObject(v)) for (const [k, x] of Object.entries(v)) visit(x, [...path, k])
  }
  visit(value, [])
  return out
}

const replaceAt = (value: unknown, path: ReadonlyArray<string | number>, text: string): unknown => {
  if (path.length === 0) return text
  const [head, ...rest] = path
  if (Array.isArray(value)) return value.map((x, i) => (i === head ? replaceAt(x, rest, text) : x))
  const record = value as Record<string, unknown>
  return { ...record, [head!]: replaceAt(record[head!], rest, text) }
}

const notice = (omitted: number, original: number, limit: number) =>
  `\n[… ${omitted} of ${original} characters omitted: the output was over the ${limit}-character limit; narrow the command to see them …]\n`

/** Cuts the longest texts (keeping 60% head, 40% tail around a notice) until the total fits, or `undefined`. */
const truncate = (encoded: unknown, total: number, limit: number): unknown | undefined => {
  const leaves = leavesOf(encoded).sort((a, b) => b.text.length - a.text.length)
  let current = encoded
  let size = total
  for (const leaf of leaves) {
    if (size <= limit) break
    const marker = notice(0, leaf.text.length, limit).length + 12
    const keep = Math.max(0, leaf.text.length - (size - limit) - marker)
    if (keep === 0 && leaf.text.length <= marker) continue
    const omitted = leaf.text.length - keep
    const head = Math.ceil(keep * 0.6)
    const tail = keep - head
    const cut =
      leaf.text.slice(0, head) + notice(omitted, leaf.text.length, limit) + (tail > 0 ? leaf.text.slice(-tail) : "")
    size -= leaf.text.length - cut.length
    current = replaceAt(current, leaf.path, cut)
  }
  return size <= limit ? current : undefined
}

// --- the text policy as a function -------------------------------------------------------------------

/**
 * What a shell-text policy says of a command line: it passes, or it is
 * refused with a rule, a detail a model can act on, and the subcommand that
 * failed.
 *
 * @category models
 * @since 0.2.0
 */
export type TextVerdict =
  | { readonly ok: true }
  | { readonly ok: false; readonly rule: string; readonly detail: string; readonly subcommand: string }

/**
 * The shell-text policy of {@link Sandboxed} as a plain function, for a shell
 * tool that applies it itself as a first refusal before its own sandbox
 * (`System.family({ textPolicy: Sandboxed.textPolicy({ allow: "all" }) })`
 * in `@ugent/tools`). ADVISORY: it catches the plain spellings of denied
 * commands with a message a model can act on; a re-spelled command gets past
 * it, and only an operating-system sandbox contains that. With a sandbox
 * behind it (`where.sandboxed`), it refuses only those named patterns: text
 * it cannot read (`./build.sh`, `CMD=ls; $CMD`, a `case`, a `cd` out of the
 * workspace) runs, contained by the sandbox; with none behind it, that text is
 * refused too.
 *
 * **Example** (The denied patterns, with every program allowed)
 * ```ts
 * import { Sandboxed } from "@ugent/wrappers"
 * const policy = Sandboxed.textPolicy({ allow: "all" })
 * const where = { root: "/srv/app", cwd: "/srv/app" }
 * console.log(policy("npm test && git status", where).ok)
 * // => true
 * console.log(policy("git push --force origin main", where))
 * // => { ok: false, rule: 'git', detail: 'it force-pushes to main', subcommand: 'git push --force origin main' }
 * console.log(policy("./build.sh", { ...where, sandboxed: true }).ok, policy("./build.sh", where).ok)
 * // => true false
 * ```
 *
 * @category policy
 * @since 0.2.0
 */
export const textPolicy = (options?: {
  readonly allow?: ReadonlyArray<string> | "all" | undefined
  readonly rules?: ReadonlyArray<DenyRule> | undefined
}): ((
  command: string,
  where: { readonly root: string; readonly cwd: string; readonly sandboxed?: boolean | undefined }
) => TextVerdict) => {
  const allow = options?.allow === "all" ? "all" : new Set(options?.allow ?? defaultAllowedCommands)
  const rules = options?.rules ?? []
  return (command, where) => {
    // In front of a sandbox, what the policy cannot read runs there; only the named refusals stay.
    const unreadable = where.sandboxed === true ? "run" : "refuse"
    const verdict = vet(command, { allow, rules, root: where.root, cwd: where.cwd, unreadable })
    return verdict.ok
      ? { ok: true }
      : { ok: false, rule: verdict.rule, detail: verdict.detail, subcommand: verdict.subcommand }
  }
}

// --- the wrapper ----------------------------------------------------------------------------------

// The wrapper itself; exported below with scrubEnv, the policy reference and the defaults attached.
const sandboxed: {
  <A = unknown>(
    options?: SandboxedOptions<A>
  ): <A2 extends A, B, E, R>(
    self: Tool.Tool<A2, B, E, R>
  ) => Tool.Tool<A2, B, E | CommandDenied | OutsideWorkspace | OutputTooLarge | TimedOut, R>
  <A, B, E, R>(
    self: Tool.Tool<A, B, E, R>,
    options?: SandboxedOptions<A>
  ): Tool.Tool<A, B, E | CommandDenied | OutsideWorkspace | OutputTooLarge | TimedOut, R>
} = dual(
  (args) => Tool.isTool(args[0]),
  <A, B, E, R>(
    self: Tool.Tool<A, B, E, R>,
    options?: SandboxedOptions<A>
  ): Tool.Tool<A, B, E | CommandDenied | OutsideWorkspace | OutputTooLarge | TimedOut, R> => {
    const cwdOf = options?.cwd ?? (field("cwd") as (a: A) => string | undefined)
    const commandOf = options?.command ?? (field("command", "cmd", "script") as (a: A) => string | undefined)
    const timeout = Duration.fromInputUnsafe(options?.timeout ?? "120 seconds")
    const timeoutMillis = Duration.toMillis(timeout)
    const limit = options?.maxOutputChars ?? 30_000
    const onLimit = options?.onOutputLimit ?? "truncate"
    const allow = options?.allow === "all" ? "all" : new Set(options?.allow ?? defaultAllowedCommands)
    const rules = options?.rules ?? []
    const encodeOutput = optionEncoder(self.output)
    const decodeOutput = Schema.decodeUnknownOption(self.output)

    const limitOutput = (b: B): Effect.Effect<B, OutputTooLarge> => {
      const encoded = encodeOutput(b)
      // An output the schema cannot encode is measured as it is; it is then only measured, never cut.
      const value = Option.isSome(encoded) ? encoded.value : b
      const chars = leavesOf(value).reduce((n, l) => n + l.text.length, 0)
      if (chars <= limit) return Effect.succeed(b)
      const tooLarge = new OutputTooLarge({ tool: self.name, chars, limit })
      if (onLimit === "fail" || Option.isNone(encoded)) return Effect.fail(tooLarge)
      const cut = truncate(value, chars, limit)
      const decoded = cut === undefined ? Option.none() : decodeOutput(cut)
      if (Option.isNone(decoded)) return Effect.fail(tooLarge)
      return Effect.as(
        Effect.annotateCurrentSpan({ "ugent.sandbox.truncated": true, "ugent.sandbox.output_chars": chars }),
        decoded.value as B
      )
    }

    return Tool.wrap(
      self,
      (run) => (a) =>
        Effect.gen(function* () {
          const rootGiven = options?.root ?? process.cwd()
          const root = realpath(rootGiven)
          // The root is the operator's configuration, not the caller's input: a missing one is a defect.
          if (root === undefined)
            return yield* Effect.die(new Error(`Sandboxed: the workspace root ${rootGiven} does not exist`))
          const asked = cwdOf(a)
          let cwd = root
          if (asked !== undefined) {
            const lexical = NodePath.resolve(root, asked)
            // A missing directory is decided by its nearest existing ancestor; the tool then reports it missing.
            const resolved = realOrNearest(lexical)
            if (!isInside(root, resolved)) {
              return yield* new OutsideWorkspace({
                path: asked,
                reason: isInside(root, lexical) ? "symlink-target" : "outside"
              })
            }
            cwd = resolved
          }
          const commandPolicy: CommandPolicy = { allow, root, cwd, rules }
          const command = commandOf(a)
          if (command !== undefined) {
            const verdict = vet(command, commandPolicy)
            if (!verdict.ok) {
              return yield* new CommandDenied({
                tool: self.name,
                command,
                subcommand: verdict.subcommand,
                rule: verdict.rule,
                detail: verdict.detail
              })
            }
          }
          // Scrubbing walks the whole environment: done on first read only, so a tool that spawns nothing never pays.
          let env: Readonly<Record<string, string>> | undefined
          const policy: SandboxPolicy = {
            root,
            cwd,
            get env() {
              if (env === undefined) env = scrubEnv(options?.env ?? process.env, { keep: options?.keepEnv })
              return env
            },
            timeoutMillis,
            maxOutputChars: limit,
            vet: (c) => vet(c, commandPolicy)
          }
          const b = yield* run(a).pipe(
            Effect.provideService(Sandbox, policy),
            Effect.timeoutOrElse({
              duration: timeout,
              orElse: () => Effect.fail(new TimedOut({ tool: self.name, timeoutMillis, retryable: false }))
            })
          )
          return yield* limitOutput(b)
        }),
      { failure: Tool.failureWith(self, CommandDenied, OutsideWorkspace, OutputTooLarge, TimedOut) }
    )
  }
)

/**
 * Runs a tool under a sandbox policy (see the module documentation for what
 * it does and does not isolate). Before the call: the working directory
 * (the input's `cwd`) must be inside the workspace root (`OutsideWorkspace`),
 * and a command line (the input's `command`) must pass the command policy
 * (`CommandDenied`, nothing run). During it: {@link Sandbox} holds the real
 * root and cwd, the scrubbed environment and the limits; past the wall-time
 * limit the call is interrupted (`TimedOut`, not retryable). After it: an
 * output over the size limit is cut, keeping head and tail around a notice
 * that says how much was left out, or fails with `OutputTooLarge`. Dual. At
 * hand: `Sandboxed.scrubEnv`, `Sandboxed.isSecret`, `Sandboxed.Policy` (the
 * reference), `Sandboxed.defaultAllowedCommands`, `Sandboxed.textPolicy`.
 *
 * **Example** (A denied subcommand stops the whole command line)
 * ```ts
 * import { Tool, Trust } from "@ugent/core"
 * import { Sandboxed } from "@ugent/wrappers"
 * import { Effect, Schema } from "effect"
 * const bash = Tool.make({
 *   name: "system.bash",
 *   description: "Runs a command.",
 *   trust: 3,
 *   effects: { callsShell: true },
 *   input: Schema.Struct({ command: Schema.String }),
 *   output: Schema.String,
 *   run: ({ command }) => Effect.succeed(`ran: ${command}`)
 * })
 * const sandboxed = bash.pipe(Sandboxed())
 * const run = (command: string) =>
 *   Effect.runSync(Effect.match(sandboxed.run({ command }), { onFailure: (e) => e.message, onSuccess: (s) => s }).pipe(Effect.provide(Trust.grant(3))))
 * console.log(run("ls -la && git status"))
 * // => ran: ls -la && git status
 * console.log(run("ls; timeout 5 env X=1 sudo rm -rf /tmp/x"))
 * // => system.bash refused the command: it runs sudo, which raises privileges (in "timeout 5 env X=1 sudo rm -rf /tmp/x", rule privilege). Nothing was run. Use allowed programs without this pattern, or ask the user to run it.
 * ```
 *
 * @category wrappers
 * @since 0.1.0
 */
export const Sandboxed: typeof sandboxed & {
  readonly scrubEnv: typeof scrubEnv
  readonly isSecret: typeof isSecret
  readonly Policy: typeof Sandbox
  readonly defaultAllowedCommands: typeof defaultAllowedCommands
  readonly textPolicy: typeof textPolicy
} = Object.assign(sandboxed, { scrubEnv, isSecret, Policy: Sandbox, defaultAllowedCommands, textPolicy })
