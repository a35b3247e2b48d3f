/**
 * The tool families a server serves by default, one line each. A family is
 * one folder that exports its tools (see `Family` in `@ugent/core`); to
 * serve another, add it to a server's `families` option (or to this list).
 *
 * | path | family | trust |
 * |---|---|---|
 * | `world.tools.file.read` / `list` / `glob` | file | L0 |
 * | `world.tools.file.write` / `edit` | file | L1 (L2 outside the writable globs) |
 * | `world.tools.search.grep` | search | L0 |
 * | `world.tools.git.status` / `log` / `diff` / `blame` / `show` | git | L0 |
 * | `world.tools.web.fetch` / `search` | web | L0 (calls the network) |
 * | `world.tools.system.bash` / `output` / `kill` | system | L3 (a recipe's `shell` lowers plain commands) |
 * | `self.memory.read` / `list` / `delete` | memory | L0 |
 * | `self.tools.task.create` / `update` / `list` | self | L0 |
 * | `self.tools.mode.plan` / `execute` | self | L0 |
 * | `self.tools.clarify` | self | L0 |
 * | `self.tools.stats` | self | L0 |
 * | `self.tools.checkpoint.list` / `restore` | checkpoint (when the workspace keeps checkpoints) | L0 / L1 (L2 outside the writable globs) |
 * | `world.tools.model.summarize` / `extract` | model (only with a model: `Server.Options.model`) | L0 (calls the network) |
 * | `self.tools.agent.run` | agent (only with a model) | L0 (a sub-agent at most at its caller's level) |
 *
 * A family from outside the packages is a module whose default export is a
 * `Family`: {@link load} imports it (`ugent --family <module>`, a recipe's
 * `families`) and a server serves it after these (`Server.Options.extraFamilies`).
 *
 * @since 0.2.0
 */
import { statSync } from "node:fs"
import { isAbsolute, join, resolve } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { Family, ReadProof, ToolError } from "@ugent/core"
import { Checkpoint, Files, Git, Sandbox, Search, System, Web, Workspace } from "@ugent/tools"
import { MemoryStore, Sandboxed, Summarized } from "@ugent/wrappers"
import { Cause, Effect, Layer, Schema } from "effect"
// Node's own algorithm for resolving a bare specifier from a directory (import.meta.resolve takes no parent unflagged).
import { resolve as resolveImport } from "import-meta-resolve"
import * as Agent from "./Agent.ts"
import * as ModelTool from "./ModelTool.ts"
import * as Self from "./self/Self.ts"

/**
 * How the memory tools tell that the file an entry was kept from changed:
 * its bytes now, read through the workspace, against the hash kept with it.
 */
const sourceCheck = Layer.effect(
  MemoryStore.SourceCheck,
  Effect.map(
    Workspace.Workspace,
    (ws) => (source: { readonly path: string; readonly hash: string }) =>
      ws.readFile(source.path, { text: false, maxBytes: 64 * 1024 * 1024 }).pipe(
        Effect.map(
          (file): MemoryStore.SourceState =>
            ReadProof.hash(file.bytes) === source.hash
              ? { state: "unchanged" }
              : { state: "changed", next: `world.tools.file.read ${JSON.stringify({ path: source.path })}` }
        ),
        Effect.catchTag("NotFound", () => Effect.succeed<MemoryStore.SourceState>({ state: "deleted" })),
        Effect.catch(() => Effect.succeed<MemoryStore.SourceState>({ state: "unknown" }))
      )
  )
)

/**
 * The `self.memory` family: results kept in working memory (by the result
 * budget, or the `Summarized` wrapper), read back in parts, and deleted. A
 * read of an entry kept from a file that changed since says so.
 *
 * @category families
 * @since 0.2.0
 */
export const memory = Family.make({
  name: "memory",
  prefix: "self.memory",
  tools: { read: Summarized.read, list: Summarized.list, delete: Summarized.delete },
  layer: sourceCheck
})

/**
 * What the configurable families take from the server's configuration.
 *
 * @category models
 * @since 0.2.0
 */
export interface Configuration {
  /** Hosts the web tools may reach although private or local (the recipe's `allowHosts`). */
  readonly allowHosts?: ReadonlyArray<string> | undefined
  /** Plain commands the shell runs below L3 (the recipe's `shell`). */
  readonly shell?: System.Options["shell"]
  /** Whether shell commands may use the network (the recipe's `shellNetwork`, or the operator's). */
  readonly shellNetwork?: boolean | undefined
  /** The operator's consent to a shell without a sandbox where none can be made (L3 callers only). */
  readonly unsandboxed?: typeof Sandbox.unsandboxedConsent | undefined
  /** The host user shell commands run as when the server is root (default: the workspace's owner). */
  readonly sandboxUser?: Sandbox.Options["user"]
}

/**
 * Every family a server serves by default: the built-in ones, the web
 * (`web.search` only when a search provider is configured), the sandboxed
 * shell (`system.*`, only where a sandbox can be made), the model steps
 * (`model.*`) and sub-agents (`self.tools.agent.run`), these two only when
 * the server has a model.
 *
 * @category families
 * @since 0.2.0
 */
export const standard = (configuration: Configuration = {}) =>
  [
    ...builtIn,
    Web.family({ allowHosts: configuration.allowHosts }),
    Self.family,
    Checkpoint.family,
    System.family({
      shell: configuration.shell,
      network: configuration.shellNetwork === true,
      unsandboxed: configuration.unsandboxed,
      user: configuration.sandboxUser,
      // The text policy is a fast, friendly first refusal; the sandbox is the boundary.
      textPolicy: Sandboxed.textPolicy({ allow: "all" })
    }),
    ModelTool.family,
    Agent.family
  ] as const

/**
 * The built-in families that need no configuration, in the order they are registered.
 *
 * **Example** (The file tools are among them)
 * ```ts
 * import { Families } from "@ugent/agentese"
 * console.log(Families.builtIn.some((f) => f.name === "file"))
 * // => true
 * ```
 *
 * @category families
 * @since 0.2.0
 */
export const builtIn = [Files.family, Search.family, Git.family, memory] as const

/**
 * A family module could not be served: it is not found, throws when
 * imported, has no default export, exports something other than a `Family`,
 * or its family fails to build. `module` is the specifier as given.
 *
 * @category errors
 * @since 0.2.0
 */
export class FamilyError extends Schema.TaggedError<FamilyError>()("FamilyError", {
  module: Schema.String,
  issue: Schema.String
}) {
  static readonly kind: ToolError.Kind = "invalid_input"
  override get message(): string {
    return `The family module ${this.module} ${this.issue.replace(/\.$/, "")}.`
  }
}

/** A specifier Node's `import` reads as a file (a relative or absolute path, a file URL), not a package. */
const isFileSpecifier = (specifier: string): boolean =>
  specifier.startsWith("./") ||
  specifier.startsWith("../") ||
  specifier === "." ||
  specifier === ".." ||
  specifier.startsWith("file:") ||
  isAbsolute(specifier)

const resolveModule = (specifier: string, from: string): Effect.Effect<string, FamilyError> => {
  const fail = (issue: string) => Effect.fail(new FamilyError({ module: specifier, issue }))
  if (specifier.trim() === "") return fail("is empty: give a file (./family.ts) or a package name")
  if (isFileSpecifier(specifier)) {
    let file: string
    try {
      file = specifier.startsWith("file:") ? fileURLToPath(specifier) : resolve(from, specifier)
    } catch (e) {
      return fail(`is not a file URL: ${ToolError.messageOf(e)}`)
    }
    const stat = statSync(file, { throwIfNoEntry: false })
    if (stat === undefined) return fail(`is not found: ${file} does not exist`)
    if (!stat.isFile()) return fail(`is not a file: ${file} is a directory; name the module file in it`)
    return Effect.succeed(pathToFileURL(file).href)
  }
  return Effect.try({
    try: () => resolveImport(specifier, pathToFileURL(join(from, "_")).href),
    catch: (e) => {
      const code = (e as { readonly code?: unknown }).code
      // A file beside it is what a person who forgot the "./" meant.
      const beside = statSync(resolve(from, specifier), { throwIfNoEntry: false })?.isFile() === true
      return new FamilyError({
        module: specifier,
        issue:
          code === "ERR_MODULE_NOT_FOUND" && beside
            ? `is not found as a package from ${from}: for the file, write ./${specifier}`
            : code === "ERR_MODULE_NOT_FOUND"
              ? `is not found: no package ${specifier} is installed where ${from} can import it`
              : `cannot be resolved from ${from}: ${ToolError.messageOf(e)}`
      })
    }
  })
}

/** The module each loaded family came from, for messages that must name it. */
const origins = new WeakMap<Family.Any, string>()

/**
 * The module a family was loaded from by {@link load}, as given; `undefined`
 * for a family that was not loaded from a module.
 *
 * @category loading
 * @since 0.2.0
 */
export const origin = (family: Family.Any): string | undefined => origins.get(family)

/** The family, with a build that fails with a `FamilyError` naming the module (a missing service, a layer that fails). */
const guarded = (family: Family.Any, module: string): Family.Any => {
  const served: Family.Any = {
    [Family.TypeId]: Family.TypeId,
    name: family.name,
    prefix: family.prefix,
    build: Effect.catchCause(family.build, (cause) =>
      Cause.hasInterruptsOnly(cause)
        ? Effect.failCause(cause)
        : Effect.fail(
            new FamilyError({
              module,
              issue: `(family ${family.name}) failed to build: ${ToolError.messageOf(Cause.squash(cause))}${
                // A defect is most often a service nobody provides.
                Cause.hasFails(cause)
                  ? ""
                  : " (a server gives a family its workspace, stores and modes; the family's own layer provides the rest)"
              }`
            })
          )
    )
  }
  origins.set(served, module)
  return served
}

/**
 * Loads the family a module exports by default: `specifier` is a file
 * (`./family.ts`, an absolute path, a file URL), resolved from `from`, or a
 * package resolved as Node's `import` would from `from`. JavaScript modules
 * load as they are; TypeScript ones where Node strips types (Node 22.18 and
 * later). The family's build fails with a `FamilyError` naming the module.
 *
 * **Example** (A module that is not there)
 * ```ts
 * import { Families } from "@ugent/agentese"
 * import { Effect } from "effect"
 * import { tmpdir } from "node:os"
 * const error = await Effect.runPromise(Effect.flip(Families.load("./nowhere.ts", { from: tmpdir() })))
 * console.log(error._tag)
 * // => FamilyError
 * ```
 *
 * @category loading
 * @since 0.2.0
 */
export const load = (specifier: string, options: { readonly from: string }): Effect.Effect<Family.Any, FamilyError> =>
  Effect.gen(function* () {
    const url = yield* resolveModule(specifier, options.from)
    const module: Record<string, unknown> = yield* Effect.tryPromise({
      try: () => import(url),
      catch: (e) =>
        new FamilyError({ module: specifier, issue: `failed when imported: ${ToolError.messageOf(e).split("\n")[0]}` })
    })
    if (!("default" in module)) {
      const named = Object.keys(module).filter((key) => Family.isFamily(module[key]))
      return yield* new FamilyError({
        module: specifier,
        issue: `has no default export${named.length > 0 ? ` (it exports ${named.join(", ")} by name)` : ""}: end it with export default Family.make({ ... })`
      })
    }
    const value = module.default
    if (!Family.isFamily(value)) {
      const what = value === null ? "null" : Array.isArray(value) ? "an array" : typeof value
      return yield* new FamilyError({
        module: specifier,
        issue: `exports by default ${what === "object" ? "an object" : what} that is not a Family: build it with Family.make or Family.effect of @ugent/core`
      })
    }
    return guarded(value, specifier)
  })

/**
 * Loads the families of several modules, in order (see {@link load}).
 *
 * @category loading
 * @since 0.2.0
 */
export const loadAll = (
  specifiers: ReadonlyArray<string>,
  options: { readonly from: string }
): Effect.Effect<ReadonlyArray<Family.Any>, FamilyError> => Effect.forEach(specifiers, (s) => load(s, options))
