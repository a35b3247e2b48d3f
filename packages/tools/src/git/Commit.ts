/**
 * `git.commit` records what is staged as a commit, under the seeds' rules:
 * the message is data (handed to git on standard input, never through a
 * shell); nothing staged is refused; a staged file whose name holds a secret
 * (the names `file.read` refuses: environment files, keys, credential
 * stores, the recipe's `blocked`) refuses the commit; `amend` replaces HEAD
 * only when HEAD is on no remote-tracking branch and its author is the
 * configured user; the repository's hooks run (never `--no-verify`), from its
 * `.git` only (see `GitWriteRefused`); no configuration is ever changed. The
 * result holds `git status` after the commit. L2: each commit is confirmed,
 * and `dryRun` shows the person what would be committed.
 *
 * @since 0.2.0
 */
import { Tool } from "@ugent/core"
import { Effect, Schema } from "effect"
import { GitBackend } from "./GitBackend.ts"
import { GitWriteRefused, WriteFailure } from "./GitError.ts"
import { shortHash, subjectOf } from "./internal/format.ts"
import { locate, repositoryOption } from "./internal/locate.ts"
import * as Results from "./internal/results.ts"
import {
  CommitIdentity as Identity,
  cleanMessage,
  exclusive,
  identityOf,
  renderChanges,
  signatureOf
} from "./internal/writing.ts"

/**
 * @category schemas
 * @since 0.2.0
 */
export const Input = Schema.Struct({
  repository: repositoryOption,
  message: Schema.String.annotate({
    description:
      "The commit message: a subject line, optionally a blank line and a body. Passed to git as data, never through a shell."
  }),
  amend: Schema.optionalKey(
    Schema.Boolean.annotate({
      description:
        "Replace HEAD with this commit (its staged changes and this message). Refused when HEAD is on a remote-tracking branch (pushed) or was written by someone else."
    })
  ),
  dryRun: Schema.optionalKey(
    Schema.Boolean.annotate({ description: "Check everything and show what would be committed; commit nothing." })
  )
})

/**
 * @category models
 * @since 0.2.0
 */
export type Input = typeof Input.Type

/**
 * The commit made.
 *
 * @category schemas
 * @since 0.2.0
 */
export const Made = Schema.Struct({
  hash: Schema.String,
  shortHash: Schema.String,
  /** The branch it is on, or `null` on a detached HEAD. */
  branch: Schema.NullOr(Schema.String),
  subject: Schema.String,
  amended: Schema.Boolean,
  author: Schema.String,
  email: Schema.String
})

/**
 * @category schemas
 * @since 0.2.0
 */
export const Output = Schema.Struct({
  /** The commit made (absent on a dry run). */
  commit: Schema.optionalKey(Made),
  /** The files the commit records, as staged. */
  files: Schema.Array(Results.Change),
  /** `git status` after the commit (before it, on a dry run). */
  status: Results.StatusOutput,
  dryRun: Schema.optionalKey(Schema.Literal(true)),
  /** On a dry run: who commits where, the message, and the staged changes as a unified diff. */
  diff: Schema.optionalKey(Schema.String)
})

/**
 * @category models
 * @since 0.2.0
 */
export type Output = typeof Output.Type

/** Every file status lists, however many. */
const all = { limit: 100_000 }

/**
 * Commits what is staged.
 *
 * @category tools
 * @since 0.2.0
 */
export const commit = Tool.make({
  name: "git.commit",
  description:
    "Commit what is staged (world.tools.git.add stages). Refused when nothing is staged, a staged file is a secret (.env, keys), or for amend when HEAD is pushed or someone else's. Hooks run; --no-verify is never used. Returns the commit and git status; dryRun shows what would be committed.",
  input: Input,
  output: Output,
  failure: WriteFailure,
  trust: 2,
  effects: { readsFs: true, writesFs: true, idempotent: false },
  run: (input) =>
    Effect.gen(function* () {
      const located = yield* locate("git.commit", input.repository)
      const repo = located.repository
      const backend = yield* GitBackend
      const message = cleanMessage(input.message)
      if (message === undefined) return yield* new GitWriteRefused({ operation: "commit", reason: "invalid-message" })
      const amend = input.amend === true
      return yield* exclusive(
        repo,
        Effect.gen(function* () {
          const who = yield* identityOf(backend, repo, "commit")
          const before = yield* backend.status(repo, all)
          if (before.conflicted.length > 0) {
            return yield* new GitWriteRefused({ operation: "commit", reason: "conflicted", names: before.conflicted })
          }
          if (before.staged.length === 0 && !amend) {
            return yield* new GitWriteRefused({ operation: "commit", reason: "nothing-staged" })
          }
          // A secret is never committed: the names file.read refuses, among what the commit would record.
          const secrets = before.staged
            .filter((c) => c.status !== "deleted" && located.redact(c.path))
            .map((c) => c.path)
          if (secrets.length > 0) {
            return yield* new GitWriteRefused({ operation: "commit", reason: "secret-staged", names: secrets })
          }
          if (amend) {
            if (before.head === null) return yield* new GitWriteRefused({ operation: "commit", reason: "no-commits" })
            const pushed = yield* backend.writes.remoteContaining(repo, before.head)
            if (pushed.length > 0) {
              return yield* new GitWriteRefused({ operation: "commit", reason: "amend-pushed", names: pushed })
            }
            const head = yield* backend.log(repo, {
              rev: before.head,
              path: undefined,
              limit: 1,
              since: undefined,
              until: undefined,
              author: undefined,
              grep: undefined,
              includeDiff: false,
              diff: { contextLines: 0, ignoreWhitespace: false, maxDiffSize: 0, maxFiles: 0, redact: located.redact }
            })
            const author = head.commits[0]
            if (author === undefined || author.email.toLowerCase() !== who.email.toLowerCase()) {
              return yield* new GitWriteRefused({
                operation: "commit",
                reason: "amend-author",
                names: [author === undefined ? "unknown" : `${author.author} <${author.email}>`]
              })
            }
          }
          if (input.dryRun === true) {
            const staged = yield* backend.diff(repo, {
              base: undefined,
              compare: undefined,
              staged: true,
              paths: [],
              ...(yield* located.diffOptions({}))
            })
            const header = `${amend ? "Amend HEAD" : "Commit"} on ${before.branch ?? "a detached HEAD"} as ${who.name} <${who.email}>:\n\n${message}`
            return {
              files: before.staged,
              status: before,
              dryRun: true as const,
              diff: `${header}\n${renderChanges(staged)}`
            }
          }
          const signature = yield* signatureOf(who)
          const hash = yield* backend.writes.commit(repo, { message, amend, author: signature, committer: signature })
          const after = yield* backend.status(repo, all)
          return {
            commit: {
              hash,
              shortHash: shortHash(hash),
              branch: after.branch,
              subject: subjectOf(message),
              amended: amend,
              author: who.name,
              email: who.email
            },
            files: before.staged,
            status: after
          }
        })
      )
    })
})

/**
 * Who commits when the repository's own configuration names no user
 * (`user.name`, `user.email`): a host may provide one; without either, a
 * commit is refused (`no-identity`). The global configuration of whoever
 * runs the server is never read.
 *
 * @category references
 * @since 0.2.0
 */
export const CommitIdentity = Identity
