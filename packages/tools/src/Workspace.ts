/**
 * The `Workspace` is the jail every file tool works in: one canonical root
 * (the real path of the configured directory) and a policy of blocked names,
 * default ignores and writable globs. Every path a tool receives passes
 * through it: relative paths resolve against the root, absolute ones must lie
 * inside it, containment is decided segment by segment on canonical real
 * paths (never by string prefix: `/root_evil` is not inside `/root`),
 * symbolic links are followed to their final target, which must be inside,
 * and a path is refused when its name, any link on the way, or its target
 * matches a blocked name. Only regular files are read or written.
 *
 * **How checking is bound to using.** A file is opened first and the opened
 * descriptor is verified: on Linux its real path is read back from
 * `/proc/self/fd/<fd>` and must be the checked path. Reads open with
 * `O_NONBLOCK | O_NOFOLLOW` after a `stat` that refuses FIFOs, devices and
 * sockets, and `fstat` on the descriptor decides again. Directories are
 * opened the same way (`O_DIRECTORY | O_NOFOLLOW`) and listed, created in, and
 * renamed in through `/proc/self/fd/<fd>/<name>`, so a directory swapped for a
 * link after its check cannot redirect a listing or a write. Writes are atomic:
 * a temporary file in the same directory, flushed, then `rename` (overwrite)
 * or `link` (create, which fails if the name exists). Temporary files a dead
 * writer left (kill -9) are swept by the next write in their directory once
 * they are ten minutes old.
 *
 * **What remains (Linux, Node's fs API, which has no `openat`).**
 * (1) Between the real-path check and `open`, an intermediate directory can be
 * swapped for a link to elsewhere; `open` then follows it, but the descriptor
 * check refuses it before a byte is read or written. What can escape is the
 * side effect of `open` itself on an outside file (`O_NONBLOCK` keeps a FIFO
 * from blocking; the type is refused by `fstat` right after). The window is
 * the few microseconds between `realpath` and `open`.
 * (2) An overwrite verifies the file's hash just before the `rename`, under a
 * per-file lock that every write of this process takes; another process that
 * changes the file in between (microseconds) loses its change. This is a lost
 * update inside the root, not an escape.
 * (3) A directory moved out of the root while a write is under way receives
 * that write (the descriptor stays valid wherever it moves). Moving it needs
 * write access outside the root, which an attacker with it does not need us for.
 * (4) A hard link inside the root to an inode outside it is, by path,
 * indistinguishable from an ordinary file: reads see its bytes. Writes never
 * change the outside inode, because the rename puts a new inode in place and
 * breaks the link.
 * Where `/proc/self/fd` is missing (macOS, BSD), descriptors are verified by
 * device and inode against a fresh `stat` of the checked path instead, and
 * listings and writes name directories by path: the window of (1) then also
 * covers those. The root itself is trusted not to be replaced while in use.
 *
 * @since 0.1.0
 */
import { existsSync } from "node:fs"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import { Secrets } from "@ugent/core"
import { Context, Duration, Effect, Layer } from "effect"
import {
  type Change,
  defaultOptions as checkpointDefaults,
  storeOf,
  type Version
} from "./internal/workspace/checkpoints.ts"
import { ApprovedFiles } from "./internal/workspace/approved.ts"
import {
  AlreadyExists,
  BinaryFile,
  BlockedPath,
  ChangedSinceApproval,
  CheckpointRefused,
  ConcurrentChange,
  FileKind,
  FileSystemError,
  FileTooLarge,
  InvalidPath,
  NotADirectory,
  NotAFile,
  NotFound,
  OutsideWorkspace
} from "./internal/workspace/errors.ts"
import { type Entry as EntryImpl, listDirectory, listPage, type Named as NamedImpl } from "./internal/workspace/list.ts"
import { type OpenError, readEntryVerified, readVerified } from "./internal/workspace/open.ts"
import * as paths from "./internal/workspace/paths.ts"
import { compile } from "./internal/workspace/policy.ts"
import {
  type Jail,
  type ResolvedPath as ResolvedImpl,
  resolveEntry as resolveEntryImpl,
  resolveExisting,
  resolveForWrite as resolveWrite
} from "./internal/workspace/resolve.ts"
import { restore as restoreImpl } from "./internal/workspace/restore.ts"
import type * as Checkpoints from "./internal/workspace/shape.ts"
import { watchOf } from "./internal/workspace/watch.ts"
import type { StateError } from "./internal/workspace/state.ts"
import { mapError } from "./internal/workspace/system.ts"
import {
  type Keeper,
  type WriteError as WriteErrorImpl,
  type WriteMode as WriteModeImpl,
  writeAtomic
} from "./internal/workspace/write.ts"

export {
  /**
   * The bytes a person approved the running call against, by file (relative
   * to the root; `null`: absent). Every write checks it under the file's lock,
   * just before its rename, and refuses with `ChangedSinceApproval` when the
   * file holds other bytes. The road sets it for an approved call.
   *
   * @category services
   * @since 0.2.0
   */
  ApprovedFiles,
  /**
   * A file an approved call writes changed since the approval: nothing was written.
   *
   * @category errors
   * @since 0.2.0
   */
  ChangedSinceApproval,
  /**
   * A write that must create found the file there.
   *
   * @category errors
   * @since 0.1.0
   */
  AlreadyExists,
  /**
   * The file is not UTF-8 text.
   *
   * @category errors
   * @since 0.1.0
   */
  BinaryFile,
  /**
   * The path, a link on the way, or its target matches a blocked name.
   *
   * @category errors
   * @since 0.1.0
   */
  BlockedPath,
  /**
   * The path changed between its check and its use; nothing was done.
   *
   * @category errors
   * @since 0.1.0
   */
  ConcurrentChange,
  /**
   * The kinds of things a path can name.
   *
   * @category models
   * @since 0.1.0
   */
  FileKind,
  /**
   * Any other system failure, with its code.
   *
   * @category errors
   * @since 0.1.0
   */
  FileSystemError,
  /**
   * The file is over the byte limit.
   *
   * @category errors
   * @since 0.1.0
   */
  FileTooLarge,
  /**
   * The path cannot name a file (NUL byte, empty, link loop, dangling link).
   *
   * @category errors
   * @since 0.1.0
   */
  InvalidPath,
  /**
   * A directory was expected.
   *
   * @category errors
   * @since 0.1.0
   */
  NotADirectory,
  /**
   * A regular file was expected.
   *
   * @category errors
   * @since 0.1.0
   */
  NotAFile,
  /**
   * Nothing exists at the path.
   *
   * @category errors
   * @since 0.1.0
   */
  NotFound,
  /**
   * The path, or its real target, is outside the root.
   *
   * @category errors
   * @since 0.1.0
   */
  OutsideWorkspace
}

/**
 * The schemas of the failures of resolving and opening a path in the
 * workspace, for the `failure` schema of every tool that takes a path:
 * `Schema.Union([MyError, ...Workspace.pathErrors])`.
 *
 * @category schemas
 * @since 0.1.0
 */
export const pathErrors = [
  InvalidPath,
  OutsideWorkspace,
  BlockedPath,
  NotFound,
  NotAFile,
  NotADirectory,
  FileSystemError
] as const

// ---------------------------------------------------------------------------
// Policy
// ---------------------------------------------------------------------------

/**
 * What the workspace refuses, skips and lets an L1 caller write. Patterns
 * are picomatch globs; one without `/` is tested against every segment of a
 * path (so `.env*` blocks `a/b/.env.local`), one with `/` against the whole
 * path relative to the root. Blocked patterns ignore case.
 *
 * @category models
 * @since 0.1.0
 */
export interface Policy {
  /** Never read, written or listed by a file tool, through links too. */
  readonly blocked: ReadonlyArray<string>
  /** Skipped by listing and globbing unless asked for. */
  readonly ignored: ReadonlyArray<string>
  /** What an L1 caller may write; elsewhere a write needs L2. */
  readonly writable: ReadonlyArray<string>
  /**
   * Scripts git runs by itself (hook folders, hook managers' configuration):
   * a write there needs L2 with a confirmation, even inside `writable`.
   */
  readonly hooks: ReadonlyArray<string>
}

/**
 * The names blocked by default, which no policy removes: the secret names of
 * `Secrets` in `@ugent/core` (environment files but not their templates,
 * private keys and key stores, credential stores), then `.git` with
 * everything inside it, and `.ugent` (ugent's own state: traces, audit,
 * working memory, the proof key). Source files and documents are not
 * blocked for their names (`src/secretStore.ts` is read like any other).
 *
 * @category constants
 * @since 0.1.0
 */
export const defaultBlocked: ReadonlyArray<string> = [...Secrets.globs, ".git", ".ugent"]

/**
 * The names skipped by listing and globbing by default.
 *
 * @category constants
 * @since 0.1.0
 */
export const defaultIgnored: ReadonlyArray<string> = ["node_modules", ".git", "dist", "build"]

/**
 * What an L1 caller may write by default: everything that is not blocked.
 *
 * @category constants
 * @since 0.1.0
 */
export const defaultWritable: ReadonlyArray<string> = ["**"]

/**
 * The hook scripts and hook-manager configurations that `git commit` (and
 * other git commands) run by themselves: `.husky/` and `.githooks/` (the
 * usual `core.hooksPath` targets; `.git/hooks` is blocked outright), and the
 * configuration files of pre-commit and lefthook, which name the commands to
 * run. Writing any of them needs L2 with a confirmation. Whatever
 * `core.hooksPath` names, git runs only executable hooks, and overwriting an
 * executable file needs L2 too (a created file is never executable).
 *
 * @category constants
 * @since 0.2.0
 */
export const defaultHooks: ReadonlyArray<string> = [
  ".husky",
  ".githooks",
  ".pre-commit-config.yaml",
  ".pre-commit-config.yml",
  "lefthook.yml",
  "lefthook.yaml",
  ".lefthook.yml",
  ".lefthook.yaml",
  "lefthook-local.yml",
  ".lefthook-local.yml"
]

/**
 * The default policy.
 *
 * @category constants
 * @since 0.1.0
 */
export const defaultPolicy: Policy = {
  blocked: defaultBlocked,
  ignored: defaultIgnored,
  writable: defaultWritable,
  hooks: defaultHooks
}

/**
 * How to adjust the default policy. `blocked` and `hooks` patterns are added
 * to the defaults, which cannot be removed (the blocked defaults are the
 * files that hold secrets, `.git` and `.ugent`: a hard core no
 * configuration lifts); `ignored` and `writable` replace theirs.
 *
 * @category models
 * @since 0.1.0
 */
export interface PolicyOptions {
  readonly blocked?: ReadonlyArray<string> | undefined
  readonly ignored?: ReadonlyArray<string> | undefined
  readonly writable?: ReadonlyArray<string> | undefined
  readonly hooks?: ReadonlyArray<string> | undefined
}

/**
 * Builds a policy from the defaults and some options.
 *
 * **Example** (L1 may write only under src/)
 * ```ts
 * import { Workspace } from "@ugent/tools"
 * const policy = Workspace.makePolicy({ writable: ["src/**"], blocked: ["*.sqlite"] })
 * console.log(policy.writable, policy.blocked.includes(".npmrc"), policy.blocked.includes("*.sqlite"))
 * // => [ 'src/**' ] true true
 * ```
 *
 * @category constructors
 * @since 0.1.0
 */
export const makePolicy = (options?: PolicyOptions): Policy => ({
  blocked: [...defaultBlocked, ...(options?.blocked ?? [])],
  ignored: options?.ignored ?? defaultIgnored,
  writable: options?.writable ?? defaultWritable,
  hooks: [...defaultHooks, ...(options?.hooks ?? [])]
})

// ---------------------------------------------------------------------------
// Models
// ---------------------------------------------------------------------------

/**
 * A path that passed the jail: its canonical real path, its path relative to
 * the root and what is there.
 *
 * @category models
 * @since 0.1.0
 */
export type ResolvedPath = ResolvedImpl

/**
 * One entry of a directory listing, inspected without following it. A
 * symbolic link says where it leads (`inside`, `outside`, `broken`); only a
 * link inside reports its target's kind, size and time.
 *
 * @category models
 * @since 0.1.0
 */
export type Entry = EntryImpl

/**
 * An entry of a directory as its listing names it, before it is inspected:
 * name, path relative to the root, kind (from the listing; a link's is its
 * target's when it leads inside), where a link leads and the blocked rule
 * it matches. {@link WorkspaceShape.listPage} filters and orders these.
 *
 * @category models
 * @since 0.2.0
 */
export type Named = NamedImpl

/**
 * The bytes of a file read through the jail, with the size and modification
 * time of the descriptor they were read from.
 *
 * @category models
 * @since 0.1.0
 */
export interface FileBytes {
  readonly path: ResolvedPath
  readonly bytes: Uint8Array
  readonly size: number
  readonly mtimeMs: number
}

/**
 * How to read: the byte limit (1 MB by default) and whether the file must be
 * UTF-8 text (the default: binary is detected from the first 8 KB before the
 * rest is read).
 *
 * @category models
 * @since 0.1.0
 */
export interface ReadOptions {
  readonly maxBytes?: number | undefined
  readonly text?: boolean | undefined
}

/**
 * How to write: `create` (exclusive) or `replace` (only if the file still
 * hashes to `expectedHash`, checked just before the rename).
 *
 * @category models
 * @since 0.1.0
 */
export type WriteMode = WriteModeImpl

/**
 * The byte limit of a read, by default: 1 MB.
 *
 * @category constants
 * @since 0.1.0
 */
export const defaultMaxBytes = 1_048_576

/**
 * The errors of resolving a path.
 *
 * @category models
 * @since 0.1.0
 */
export type PathError =
  | InvalidPath
  | OutsideWorkspace
  | BlockedPath
  | NotFound
  | NotAFile
  | NotADirectory
  | FileSystemError

/**
 * The errors of opening what a path names.
 *
 * @category models
 * @since 0.1.0
 */
export type OpenFailure = OpenError

/**
 * The errors of reading a file.
 *
 * @category models
 * @since 0.1.0
 */
export type ReadError = PathError | OpenError | BinaryFile | FileTooLarge

/**
 * The errors of writing a file.
 *
 * @category models
 * @since 0.1.0
 */
export type WriteError = PathError | WriteErrorImpl

// ---------------------------------------------------------------------------
// Service
// ---------------------------------------------------------------------------

/**
 * What the workspace offers. Every method that takes a path string runs the
 * whole check; methods that take a {@link ResolvedPath} verify again on open.
 *
 * @category models
 * @since 0.1.0
 */
export interface WorkspaceShape {
  /** Canonical real path of the root. */
  readonly root: string
  readonly policy: Policy
  /** How long a read proof is accepted after it was issued (the second fence after its hash; `Infinity`: no bound). */
  readonly proofMaxAgeMillis: number
  /** Resolves a path that must exist; `expect` (default `any`) refuses the wrong kind. */
  readonly resolve: (
    path: string,
    options?: { readonly expect?: "file" | "directory" | "any" | undefined }
  ) => Effect.Effect<ResolvedPath, PathError>
  /** Resolves a path to write: an existing regular file, or a new one whose real parent is inside. */
  readonly resolveForWrite: (path: string) => Effect.Effect<ResolvedPath, PathError>
  /**
   * Resolves a path as git sees one (the git tools hand only such paths to
   * git): the directories on the way resolved through the jail (a link among
   * them must lead inside), the last name not followed (kind `symlink` for a
   * link), the path possibly missing (kind `missing`; its deepest existing
   * directory must be inside). Blocked names are not refused here.
   */
  readonly resolveEntry: (path: string) => Effect.Effect<ResolvedPath, InvalidPath | OutsideWorkspace | FileSystemError>
  /**
   * Reads what {@link resolveEntry} found as git stores it: a regular file's
   * bytes (through a verified descriptor, blocked names refused), or a link's
   * own text. A directory is `NotAFile`, a missing path `NotFound`.
   */
  readonly readEntry: (
    entry: ResolvedPath,
    options?: { readonly maxBytes?: number | undefined }
  ) => Effect.Effect<Uint8Array, OpenError | FileTooLarge>
  /** Reads a regular file through a verified descriptor, within the byte limit. */
  readonly readFile: (path: string | ResolvedPath, options?: ReadOptions) => Effect.Effect<FileBytes, ReadError>
  /** Writes atomically; returns the path written (kind `file`). */
  readonly writeFile: (
    path: string | ResolvedPath,
    bytes: Uint8Array,
    mode: WriteMode
  ) => Effect.Effect<ResolvedPath, WriteError>
  /** One level of a directory, through a verified descriptor. */
  readonly list: (path: string | ResolvedPath) => Effect.Effect<ReadonlyArray<Entry>, PathError | OpenError>
  /**
   * One page of a directory level, through a verified descriptor: the names
   * `keep` keeps, the first `limit` of them in `order`, inspected (size and
   * time), and how many were kept in all. Only the page is `stat`'ed, and the
   * event loop runs between batches of entries, so a directory of 100,000
   * entries neither holds the server nor costs a `stat` each.
   */
  readonly listPage: (
    path: string | ResolvedPath,
    options: {
      readonly keep: (named: Named) => boolean
      readonly order: (a: Named, b: Named) => number
      readonly limit: number
    }
  ) => Effect.Effect<{ readonly entries: ReadonlyArray<Entry>; readonly total: number }, PathError | OpenError>
  /** Whether a real absolute path lies inside the root. */
  readonly contains: (real: string) => boolean
  /** The path of a real absolute path relative to the root (`.` for the root); `undefined` if outside. */
  readonly relative: (real: string) => string | undefined
  /** The blocked rule a relative path matches, if any. */
  readonly blockedBy: (relative: string) => string | undefined
  /** Whether a relative path is under an ignored name. */
  readonly isIgnored: (relative: string) => boolean
  /** Whether an L1 caller may write a relative path. */
  readonly isWritable: (relative: string) => boolean
  /** The hook rule a relative path matches, if any (a write there needs L2 with a confirmation). */
  readonly hookBy: (relative: string) => string | undefined
  /** The checkpoints of the workspace's writes, when it keeps them (see `Checkpoints`). */
  readonly checkpoints?: Checkpoints.CheckpointsShape | undefined
}

/**
 * The workspace service.
 *
 * @category services
 * @since 0.1.0
 */
export class Workspace extends Context.Service<Workspace, WorkspaceShape>()("ugent/Workspace") {}

/**
 * How to build a workspace: the root directory (it must exist) and policy
 * adjustments.
 *
 * @category models
 * @since 0.1.0
 */
export interface Options {
  readonly root: string
  readonly policy?: PolicyOptions | undefined
  /**
   * Keep a checkpoint of every write, with these bounds (`{}`: the defaults);
   * none by default. See `Checkpoints`.
   */
  readonly checkpoints?: Checkpoints.Options | undefined
  /**
   * How long a read proof is accepted after it was issued, a fence after its
   * hash (default {@link defaultProofMaxAge}, 24 hours); `false` for none. A
   * write with an older proof is refused (`ProofRejected`, `expired`): read again.
   */
  readonly proofMaxAge?: Duration.Input | false | undefined
}

/**
 * How long a read proof is accepted by default: a day. The hash decides
 * whether the file is as it was read; the bound retires a token long
 * forgotten in a log or a transcript.
 *
 * @category constants
 * @since 0.2.0
 */
export const defaultProofMaxAge: Duration.Duration = Duration.hours(24)

/**
 * Builds a workspace over an existing directory.
 *
 * @category constructors
 * @since 0.1.0
 */
export const make = (options: Options): Effect.Effect<WorkspaceShape, NotFound | NotADirectory | FileSystemError> =>
  Effect.gen(function* () {
    const configuredRoot = path.resolve(options.root)
    const root = yield* Effect.tryPromise({
      try: () => fsp.realpath(configuredRoot),
      catch: mapError(options.root, "open the workspace root", "directory")
    }).pipe(
      Effect.catchTag("InvalidPath", (e) =>
        Effect.fail(
          new FileSystemError({ path: e.path, operation: "open the workspace root", code: e.reason, retryable: false })
        )
      )
    )
    const st = yield* Effect.tryPromise({
      try: () => fsp.stat(root),
      catch: mapError(options.root, "open the workspace root", "directory")
    }).pipe(
      Effect.catchTag("InvalidPath", (e) =>
        Effect.fail(
          new FileSystemError({ path: e.path, operation: "open the workspace root", code: e.reason, retryable: false })
        )
      )
    )
    if (!st.isDirectory()) return yield* new NotADirectory({ path: options.root, kind: "file" })
    const policy = makePolicy(options.policy)
    const compiled = compile(policy)
    const jail: Jail = { root, configuredRoot, policy: compiled, procFd: existsSync("/proc/self/fd") }
    const toResolved = (p: string | ResolvedPath, expect: "file" | "directory") =>
      typeof p === "string" ? resolveExisting(jail, p, expect) : Effect.succeed(p)
    const store =
      options.checkpoints === undefined
        ? undefined
        : storeOf(root, {
            maxFileBytes: options.checkpoints.maxFileBytes ?? checkpointDefaults.maxFileBytes,
            maxTotalBytes: options.checkpoints.maxTotalBytes ?? checkpointDefaults.maxTotalBytes
          })
    /** Writes, keeping the content before and after in the store first, then records the checkpoint. */
    const writeKept = (resolved: ResolvedPath, bytes: Uint8Array, mode: WriteMode) =>
      Effect.gen(function* () {
        if (store === undefined) return (yield* writeAtomic(jail, resolved, bytes, mode)).real
        const limit = store.options.maxFileBytes
        if (bytes.length > limit) {
          return yield* new CheckpointRefused({ path: resolved.input, reason: "too-large", size: bytes.length, limit })
        }
        let change: Change | undefined
        const keeper: Keeper = {
          maxBytes: limit,
          keep: (previous, created) =>
            Effect.gen(function* () {
              if (previous !== undefined && previous.bytes === undefined) {
                return yield* new CheckpointRefused({
                  path: resolved.input,
                  reason: "too-large",
                  size: previous.size,
                  limit
                })
              }
              const before = previous?.bytes === undefined ? null : yield* store.keep(previous.bytes)
              const after = yield* store.keep(bytes)
              const dirs = created.map((d) => paths.relativeTo(root, d))
              change = { path: resolved.relative, before, after, ...(dirs.length > 0 ? { dirs } : {}) }
            })
        }
        const { real } = yield* writeAtomic(jail, resolved, bytes, mode, keeper)
        if (change?.after) watchOf(jail, store).wrote(paths.relativeTo(root, real), change.after)
        if (change !== undefined && change.before?.hash !== change.after?.hash) {
          const relative = paths.relativeTo(root, real)
          // The write is done: a checkpoint that cannot be recorded is reported, not turned into a failed write.
          yield* store
            .record([{ ...change, path: relative }])
            .pipe(Effect.catch((e) => Effect.logWarning(`checkpoint of ${relative} not recorded: ${e.message}`)))
        }
        return real
      })
    const observedVersion = (side: Checkpoints.Observed["before"]): Effect.Effect<Version | null, StateError> =>
      side === undefined
        ? Effect.succeed(null)
        : side instanceof Uint8Array
          ? store!.keep(side)
          : Effect.succeed({ hash: side.hash, size: side.size, kept: false })
    const checkpoints: Checkpoints.CheckpointsShape | undefined =
      store === undefined
        ? undefined
        : {
            options: store.options,
            list: Effect.map(store.entries, (entries) => [...entries].reverse()),
            restore: (to, o) => restoreImpl(jail, store, to, o?.proofs ?? []),
            record: (changes) =>
              Effect.gen(function* () {
                const files: Array<Change> = []
                for (const observed of changes) {
                  const before = yield* observedVersion(observed.before)
                  const after = yield* observedVersion(observed.after)
                  if (before?.hash !== after?.hash) files.push({ path: observed.path, before, after })
                }
                return files.length === 0 ? undefined : yield* store.record(files)
              }),
            capture: (effect) => watchOf(jail, store).capture(effect)
          }
    return {
      root,
      policy,
      proofMaxAgeMillis:
        options.proofMaxAge === false
          ? Number.POSITIVE_INFINITY
          : Duration.toMillis(Duration.fromInputUnsafe(options.proofMaxAge ?? defaultProofMaxAge)),
      resolve: (p, o) => resolveExisting(jail, p, o?.expect ?? "any"),
      resolveForWrite: (p) => resolveWrite(jail, p),
      resolveEntry: (p) => resolveEntryImpl(jail, p),
      readEntry: (entry, o) => readEntryVerified(jail, entry, o?.maxBytes ?? defaultMaxBytes),
      readFile: (p, o) =>
        Effect.gen(function* () {
          const resolved = yield* toResolved(p, "file")
          const read = yield* readVerified(jail, resolved, {
            maxBytes: o?.maxBytes ?? defaultMaxBytes,
            text: o?.text ?? true
          })
          return { path: resolved, bytes: read.bytes, size: read.bytes.length, mtimeMs: read.stats.mtimeMs }
        }),
      writeFile: (p, bytes, mode) =>
        Effect.gen(function* () {
          const resolved = typeof p === "string" ? yield* resolveWrite(jail, p) : p
          const real = yield* writeKept(resolved, bytes, mode)
          return { input: resolved.input, real, relative: paths.relativeTo(root, real), kind: "file" as const }
        }),
      list: (p) => Effect.flatMap(toResolved(p, "directory"), (dir) => listDirectory(jail, dir)),
      listPage: (p, o) => Effect.flatMap(toResolved(p, "directory"), (dir) => listPage(jail, dir, o)),
      contains: (real) => paths.isInside(root, real),
      relative: (real) => (paths.isInside(root, real) ? paths.relativeTo(root, real) : undefined),
      blockedBy: compiled.blockedBy,
      isIgnored: compiled.isIgnored,
      isWritable: compiled.isWritable,
      hookBy: compiled.hookBy,
      checkpoints
    } satisfies WorkspaceShape
  })

/**
 * A layer providing a workspace over `root`.
 *
 * **Example** (Resolving paths in a workspace)
 * ```ts
 * import { Workspace } from "@ugent/tools"
 * import { Effect } from "effect"
 * import { mkdtempSync, writeFileSync } from "node:fs"
 * import { tmpdir } from "node:os"
 * import { join } from "node:path"
 * const root = mkdtempSync(join(tmpdir(), "ws-"))
 * writeFileSync(join(root, "notes.txt"), "hi\n")
 * const program = Effect.gen(function* () {
 *   const ok = yield* Workspace.resolve("notes.txt")
 *   const out = yield* Effect.flip(Workspace.resolve("../etc/passwd"))
 *   return [ok.relative, ok.kind, out._tag]
 * })
 * console.log(await Effect.runPromise(Effect.provide(program, Workspace.layer({ root }))))
 * // => [ 'notes.txt', 'file', 'OutsideWorkspace' ]
 * ```
 *
 * @category layers
 * @since 0.1.0
 */
export const layer = (options: Options): Layer.Layer<Workspace, NotFound | NotADirectory | FileSystemError> =>
  Layer.effect(
    Workspace,
    Effect.map(make(options), (shape) => Workspace.of(shape))
  )

// ---------------------------------------------------------------------------
// Accessors
// ---------------------------------------------------------------------------

/**
 * Resolves a path that must exist in the current workspace.
 *
 * @category accessors
 * @since 0.1.0
 */
export const resolve = (
  path: string,
  options?: { readonly expect?: "file" | "directory" | "any" | undefined }
): Effect.Effect<ResolvedPath, PathError, Workspace> => Workspace.use((ws) => ws.resolve(path, options))

/**
 * Resolves a path to write in the current workspace.
 *
 * @category accessors
 * @since 0.1.0
 */
export const resolveForWrite = (path: string): Effect.Effect<ResolvedPath, PathError, Workspace> =>
  Workspace.use((ws) => ws.resolveForWrite(path))

/**
 * Reads a regular file of the current workspace.
 *
 * @category accessors
 * @since 0.1.0
 */
export const readFile = (
  path: string | ResolvedPath,
  options?: ReadOptions
): Effect.Effect<FileBytes, ReadError, Workspace> => Workspace.use((ws) => ws.readFile(path, options))

/**
 * Writes a file of the current workspace atomically.
 *
 * @category accessors
 * @since 0.1.0
 */
export const writeFile = (
  path: string | ResolvedPath,
  bytes: Uint8Array,
  mode: WriteMode
): Effect.Effect<ResolvedPath, WriteError, Workspace> => Workspace.use((ws) => ws.writeFile(path, bytes, mode))

/**
 * Lists one level of a directory of the current workspace.
 *
 * @category accessors
 * @since 0.1.0
 */
export const list = (
  path: string | ResolvedPath
): Effect.Effect<ReadonlyArray<Entry>, PathError | OpenError, Workspace> => Workspace.use((ws) => ws.list(path))

/**
 * Whether `candidate` is `root` or lies below it, segment by segment (both
 * absolute, normalized). `/root_evil` is not inside `/root`.
 *
 * **Example** (Segments, not prefixes)
 * ```ts
 * import { Workspace } from "@ugent/tools"
 * console.log(Workspace.isInside("/srv/app", "/srv/app/src"), Workspace.isInside("/srv/app", "/srv/app_evil"))
 * // => true false
 * ```
 *
 * @category predicates
 * @since 0.1.0
 */
export const isInside: (root: string, candidate: string) => boolean = paths.isInside
