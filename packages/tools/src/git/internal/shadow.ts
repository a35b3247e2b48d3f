/**
 * The native backend never lets git read the repository's own configuration.
 * Git reads its configuration from the common directory
 * (`$GIT_COMMON_DIR/config`), so each repository gets a private "shadow"
 * common directory (mode 0700, under the system's temporary directory) whose
 * `config` ugent writes, and whose `refs`, `packed-refs`, `shallow`, `info`,
 * `logs` (and `reftable`) are links to the repository's own, named through git's
 * working directory (`/proc/self/cwd/.git/refs`: git runs in the working
 * tree as opened); objects come through `GIT_OBJECT_DIRECTORY`, HEAD and the
 * index from the real `GIT_DIR`.
 *
 * The shadow `config` holds only the keys that change how a repository is
 * read (its format and extensions, file modes, links, case, line endings,
 * the index format, sparse checkout), copied from the repository's config as
 * git itself parses it: the config file is read through the jail (it must lie
 * inside the workspace) and handed to `git config --file - --no-includes
 * --list -z` on standard input, outside any repository. Includes are never
 * followed, and every key that names a file git would open or a program it
 * would run simply does not exist for git: `include.path`,
 * `includeIf.*.path`, `blame.ignoreRevsFile`, `core.excludesFile`,
 * `core.attributesFile`, `core.hooksPath`, `core.fsmonitor`, `core.pager`,
 * `core.editor`, `core.askPass`, `core.sshCommand`, `core.gitProxy`,
 * `core.worktree`, `mailmap.file`, `mailmap.blob`, `diff.external`,
 * `diff.orderFile`, `diff.<driver>.textconv` and `.command`, `filter.<driver>.*`,
 * `merge.<driver>.driver`, `gpg.program` (and `gpg.<format>.program`),
 * `credential.helper`, `sequence.editor`, `pager.<command>`, `alias.*`,
 * `remote.<name>.*` (`url`, `uploadpack`, `receivepack`, `proxy`), `url.*`,
 * `http.*` (cookie files, certificates, proxies), `protocol.*`,
 * `submodule.*`, `extensions.partialClone` (a promisor remote to fetch from),
 * `extensions.worktreeConfig` (`config.worktree`), `trace2.*`, `gc.*`,
 * `instaweb.*`, `sendemail.*`, `difftool.*`, `mergetool.*`, `web.browser`
 * and all the rest: whatever a future git adds is left out too, since only
 * the list below is copied.
 *
 * @internal
 */
import { randomBytes } from "node:crypto"
import { existsSync, rmSync, statSync } from "node:fs"
import * as fsp from "node:fs/promises"
import { tmpdir } from "node:os"
import * as path from "node:path"
import { Effect } from "effect"
import { readRegularSync } from "../../internal/workspace/regular.ts"
import type { Repository, WriteConfig } from "./model.ts"
import { GitFailed } from "../GitError.ts"
import { text } from "./tokens.ts"

const procFd = existsSync("/proc/self/fd")

/** Keys copied from the repository's config (lower case, as git prints them); `extensions.*` is handled apart. */
const copied = new Set([
  "core.repositoryformatversion",
  "core.filemode",
  "core.symlinks",
  "core.ignorecase",
  "core.precomposeunicode",
  "core.protecthfs",
  "core.protectntfs",
  "core.autocrlf",
  "core.eol",
  "core.safecrlf",
  "core.checkstat",
  "core.trustctime",
  "core.splitindex",
  "core.sparsecheckout",
  "core.sparsecheckoutcone",
  "core.bigfilethreshold",
  "index.version",
  "index.skiphash",
  "index.sparse"
])

/** Extensions that make git fetch or read files outside what the shadow offers. */
const droppedExtensions = new Set(["extensions.partialclone", "extensions.worktreeconfig"])

/** The largest repository config read. */
const maxConfigBytes = 1 << 20

/** Whether a key from the repository's config is copied to the shadow config. */
export const isCopied = (key: string): boolean =>
  copied.has(key) || (key.startsWith("extensions.") && !droppedExtensions.has(key))

/** A value written to a config file: quoted, with the escapes git reads back. */
const quote = (value: string): string =>
  `"${value.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n").replace(/\t/g, "\\t")}"`

/** The shadow config's text for `key\nvalue` entries (a key alone is a boolean `true`). */
export const shadowConfig = (entries: ReadonlyArray<readonly [string, string | undefined]>): string => {
  const sections = new Map<string, Array<string>>()
  for (const [key, value] of entries) {
    const dot = key.indexOf(".")
    const last = key.lastIndexOf(".")
    // Only two-part keys are copied (no subsections).
    if (dot <= 0 || dot !== last) continue
    const section = key.slice(0, dot)
    const lines = sections.get(section) ?? []
    lines.push(`\t${key.slice(dot + 1)} = ${value === undefined ? "true" : quote(value)}`)
    sections.set(section, lines)
  }
  // A work tree is given explicitly; the repository is never bare for the tools.
  const core = sections.get("core") ?? []
  core.push("\tbare = false")
  sections.set("core", core)
  return [...sections].map(([section, lines]) => `[${section}]\n${lines.join("\n")}\n`).join("")
}

/** Parses the output of `git config --list -z`: `key\nvalue` or `key` records separated by NUL. */
export const parseConfigList = (out: Uint8Array): ReadonlyArray<readonly [string, string | undefined]> =>
  text(out)
    .split("\0")
    .filter((r) => r !== "")
    .map((r) => {
      const nl = r.indexOf("\n")
      return nl === -1 ? ([r, undefined] as const) : ([r.slice(0, nl), r.slice(nl + 1)] as const)
    })

export interface Shadow {
  /** The shadow common directory, for `GIT_COMMON_DIR`. */
  readonly commonDir: string
  /** The repository's real object directory, for `GIT_OBJECT_DIRECTORY`. */
  readonly objects: string
  /** What the git writes read from the repository's config (never copied to the shadow's). */
  readonly write: WriteConfig
}

/** The configured user and `core.hooksPath`, from the repository's config as git parsed it (the last value wins). */
export const writeConfigOf = (entries: ReadonlyArray<readonly [string, string | undefined]>): WriteConfig => {
  const last = (key: string) => entries.findLast(([k]) => k === key)?.[1]
  return { name: last("user.name"), email: last("user.email"), hooksPath: last("core.hookspath") }
}

/** A file's signature; synchronous, since it is taken on every call (a trip through the thread pool costs more). */
const statSignature = (file: string): string => {
  try {
    const s = statSync(file)
    return `${s.mtimeMs}:${s.size}:${s.ino}:${s.ctimeMs}`
  } catch {
    return "-"
  }
}

const made = new Set<string>()
let cleanupRegistered = false

const registerCleanup = () => {
  if (cleanupRegistered) return
  cleanupRegistered = true
  process.once("exit", () => {
    for (const dir of made) rmSync(dir, { recursive: true, force: true })
  })
}

/**
 * The shadows of a backend: one per repository, made again when the
 * repository's config changes (all are removed when the process exits). `parse` runs `git config --file - --list -z
 * --no-includes` on the given bytes, outside any repository.
 */
export const makeShadows = (parse: (config: Uint8Array) => Effect.Effect<Uint8Array, GitFailed>) => {
  const cache = new Map<string, { readonly signature: string; readonly shadow: Shadow }>()
  const unreadable = new GitFailed({ operation: "config", detail: "the repository's configuration could not be read" })
  return (repo: Repository): Effect.Effect<Shadow, GitFailed> =>
    Effect.gen(function* () {
      const configFile = path.join(repo.commonDir, "config")
      const signature = `${repo.commonDir}|${statSignature(configFile)}`
      const hit = cache.get(repo.gitDir)
      if (hit !== undefined && hit.signature === signature) return hit.shadow
      // Read without blocking, on this thread: a FIFO planted as the config once pinned a pool thread for ever.
      const read = readRegularSync(configFile, { maxBytes: maxConfigBytes, root: repo.root })
      if (read._tag !== "Bytes" && read._tag !== "Missing") return yield* unreadable
      const bytes = read._tag === "Bytes" ? new Uint8Array(read.bytes) : new Uint8Array(0)
      const listed = bytes.length === 0 ? new Uint8Array(0) : yield* parse(bytes)
      const entries = parseConfigList(listed)
      const kept = entries.filter(([key]) => isCopied(key))
      const objects = yield* Effect.promise(() =>
        fsp.realpath(path.join(repo.commonDir, "objects")).catch(() => path.join(repo.commonDir, "objects"))
      )
      const commonDir = yield* Effect.tryPromise({
        try: async () => {
          const dir = path.join(tmpdir(), `ugent-git-${process.pid}-${randomBytes(6).toString("hex")}`)
          await fsp.mkdir(dir, { mode: 0o700 })
          made.add(dir)
          registerCleanup()
          await fsp.writeFile(path.join(dir, "config"), shadowConfig(kept), { mode: 0o600, flag: "wx" })
          // git runs in the working tree as opened (see `native.ts`): through its own working directory the links
          // reach that repository's refs, not whatever its path names by the time git reads them (threat 44).
          // Joined as text: path.join would fold a linked worktree's `../.git` into `/proc/self/.git`.
          const base = procFd ? `/proc/self/cwd/${path.relative(repo.workTree, repo.commonDir)}` : repo.commonDir
          // `logs` too: a write's reflog (a stash's entries live there) goes to the repository's own.
          for (const name of ["refs", "packed-refs", "shallow", "info", "reftable", "logs"]) {
            await fsp.symlink(`${base}/${name}`, path.join(dir, name))
          }
          return dir
        },
        catch: () =>
          new GitFailed({
            operation: "config",
            detail: "a private directory for git's configuration could not be made"
          })
      })
      // An older shadow stays until the process exits: a git started with it may still be running.
      const shadow = { commonDir, objects, write: writeConfigOf(entries) }
      cache.set(repo.gitDir, { signature, shadow })
      return shadow
    })
}
