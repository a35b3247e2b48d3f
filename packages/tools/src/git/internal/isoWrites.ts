/**
 * The git writes of the isomorphic backend, with isomorphic-git over a
 * writable jailed file system (every name made or removed through a
 * directory checked inside the root). isomorphic-git runs no hooks, so a
 * write the repository has a hook for is refused (`hooks-unsupported`),
 * never done without it; a linked worktree's own index is not written.
 * Commits are built from the same inputs as the native backend's (the
 * cleaned message, author and committer with their dates), so both make the
 * same commit object, hash included.
 *
 * @internal
 */
import { Effect } from "effect"
import * as git from "isomorphic-git"
import { GitFailed, GitWriteRefused, PathNotInRepository } from "../GitError.ts"
import { type Operation, planHooks } from "./hooks.ts"
import { jailedFs } from "./jailedFs.ts"
import type { GitWrites, Repository, Signature, WriteConfig } from "./model.ts"

const person = (s: Signature) => ({
  name: s.name,
  email: s.email,
  timestamp: s.timestamp,
  // isomorphic-git's offset has JavaScript's sign: minutes west of UTC.
  timezoneOffset: s.zoneMinutes === 0 ? 0 : -s.zoneMinutes
})

const failed = (operation: string) =>
  new GitFailed({ operation, detail: "the repository could not be written (isomorphic backend)" })

const codeOf = (e: unknown): string | undefined =>
  typeof e === "object" && e !== null && "code" in e && typeof e.code === "string" ? e.code : undefined

export const makeIsoWrites = (onWrite: (repo: Repository) => void): GitWrites => {
  const fsOf = (repo: Repository) => jailedFs(repo.root, { writable: true })

  const attempt = <A, E = never>(
    operation: string,
    f: () => Promise<A>,
    known?: (e: unknown) => E | undefined
  ): Effect.Effect<A, E | GitFailed> =>
    Effect.tryPromise({
      try: f,
      // isomorphic-git's messages can quote what it read: only fixed phrases leave.
      catch: (e) => known?.(e) ?? failed(operation)
    })

  const config = (repo: Repository): Effect.Effect<WriteConfig, GitFailed> =>
    attempt("config", async () => {
      const fs = fsOf(repo)
      const get = async (key: string) => {
        const v: unknown = await git.getConfig({ fs, gitdir: repo.commonDir, path: key })
        return typeof v === "string" ? v : undefined
      }
      return { name: await get("user.name"), email: await get("user.email"), hooksPath: await get("core.hooksPath") }
    })

  /** Checks what every write needs here: the main worktree, and no hook the write would make git run. */
  const ready = (repo: Repository, operation: Operation) =>
    Effect.gen(function* () {
      if (repo.gitDir !== repo.commonDir) return yield* new GitWriteRefused({ operation, reason: "linked-worktree" })
      const { hooksPath } = yield* config(repo)
      const plan = planHooks(repo, hooksPath, operation)
      if (plan instanceof GitWriteRefused) return yield* plan
      if (plan.present.length > 0) {
        return yield* new GitWriteRefused({ operation, reason: "hooks-unsupported", names: [...plan.present] })
      }
      return { fs: fsOf(repo), dir: repo.workTree, gitdir: repo.gitDir, cache: {} }
    })

  const done = <A, E, R>(repo: Repository, effect: Effect.Effect<A, E, R>) =>
    Effect.ensuring(
      effect,
      Effect.sync(() => onWrite(repo))
    )

  return {
    config,
    add: (repo, paths) =>
      done(
        repo,
        Effect.gen(function* () {
          const at = yield* ready(repo, "add")
          yield* attempt(
            "add",
            async () => {
              for (const p of paths) {
                const whole = p === "" || p === "."
                const rows = await git.statusMatrix({ ...at, ...(whole ? {} : { filepaths: [p] }) })
                if (rows.length === 0) {
                  if (!whole && (await git.isIgnored({ ...at, filepath: p }))) {
                    throw new GitWriteRefused({ operation: "add", reason: "ignored", names: [p] })
                  }
                  throw new PathNotInRepository({ path: p, reason: "not-tracked" })
                }
                for (const [file, , work, stage] of rows) {
                  if (work === 0 && stage !== 0) await git.remove({ ...at, filepath: file })
                }
                // Every file there is added again: the matrix compares contents, and a mode change alone is one too.
                const present = rows.filter(([, , work]) => work !== 0).map(([file]) => file)
                if (present.length > 0) await git.add({ ...at, filepath: present })
              }
            },
            (e): GitWriteRefused | PathNotInRepository | undefined =>
              e instanceof GitWriteRefused || e instanceof PathNotInRepository ? e : undefined
          )
        })
      ),
    commit: (repo, query) =>
      done(
        repo,
        Effect.gen(function* () {
          const at = yield* ready(repo, "commit")
          return yield* attempt("commit", () =>
            git.commit({
              ...at,
              message: query.message,
              ...(query.amend ? { amend: true } : { author: person(query.author) }),
              committer: person(query.committer)
            })
          )
        })
      ),
    branches: (repo) =>
      attempt("branch", async () => [...(await git.listBranches({ fs: fsOf(repo), gitdir: repo.gitDir }))].sort()),
    remoteContaining: (repo, oid) =>
      attempt("branch", async () => {
        const fs = fsOf(repo)
        const refs = await git.listRefs({ fs, gitdir: repo.commonDir, filepath: "refs/remotes" })
        const out: Array<string> = []
        for (const ref of refs) {
          const name = `refs/remotes/${ref}`
          if (name.endsWith("/HEAD")) continue
          const tip = await git.resolveRef({ fs, gitdir: repo.commonDir, ref: name })
          if (
            tip === oid ||
            (await git.isDescendent({ fs, gitdir: repo.commonDir, oid: tip, ancestor: oid, depth: -1 }))
          ) {
            out.push(name)
          }
        }
        return out.sort()
      }),
    branch: (repo, name, oid) =>
      done(
        repo,
        Effect.gen(function* () {
          const at = yield* ready(repo, "branch")
          yield* attempt(
            "branch",
            () => git.branch({ fs: at.fs, gitdir: at.gitdir, ref: name, object: oid, checkout: false }),
            (e) =>
              codeOf(e) === "AlreadyExistsError"
                ? new GitWriteRefused({ operation: "branch", reason: "branch-exists", names: [name] })
                : undefined
          )
        })
      ),
    switchTo: (repo, name) =>
      done(
        repo,
        Effect.gen(function* () {
          const at = yield* ready(repo, "switch")
          yield* attempt(
            "switch",
            () => git.checkout({ ...at, ref: name, track: false }),
            (e) =>
              codeOf(e) === "CheckoutConflictError"
                ? new GitWriteRefused({ operation: "switch", reason: "changes-in-the-way" })
                : codeOf(e) === "NotFoundError"
                  ? new GitWriteRefused({ operation: "switch", reason: "no-such-branch", names: [name] })
                  : undefined
          )
        })
      ),
    stashPush: (repo, message) =>
      done(
        repo,
        Effect.gen(function* () {
          const at = yield* ready(repo, "stash")
          yield* attempt("stash", () => git.stash({ ...at, op: "push", ...(message === undefined ? {} : { message }) }))
        })
      ),
    stashPop: (repo) =>
      done(
        repo,
        Effect.gen(function* () {
          const at = yield* ready(repo, "stash")
          yield* attempt(
            "stash",
            () => git.stash({ ...at, op: "pop" }),
            (e) =>
              codeOf(e) === "CheckoutConflictError" || codeOf(e) === "MergeConflictError"
                ? new GitWriteRefused({ operation: "stash", reason: "conflicted" })
                : undefined
          )
        })
      ),
    stashList: (repo) =>
      attempt("stash", async () => {
        // isomorphic-git declares the list op as string | void; it resolves to the entries.
        const entries = (await git.stash({
          fs: fsOf(repo),
          dir: repo.workTree,
          gitdir: repo.gitDir,
          op: "list"
        })) as unknown as ReadonlyArray<unknown>
        return (entries ?? []).map((e, index) => ({
          index,
          message:
            typeof e === "string"
              ? e
              : typeof e === "object" && e !== null && "message" in e
                ? String(e.message)
                : String(e)
        }))
      })
  }
}
