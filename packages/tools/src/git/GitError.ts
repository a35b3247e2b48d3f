/**
 * The typed failures of the git tools. Each says what went wrong in words a
 * person or a model can act on, and what to do next: a directory that holds
 * no repository, a revision that names nothing, a revision refused because
 * git could read it as an option, a path outside the repository, and (rare)
 * a git command that failed for another reason.
 *
 * @since 0.1.0
 */
import { ToolError } from "@ugent/core"
import { Schema } from "effect"
import { StateRefused } from "../internal/workspace/errors.ts"
import * as Workspace from "../Workspace.ts"

/**
 * The directory holds no git repository the tools may read: no `.git` there,
 * or a `.git` that points outside the workspace. Git tools never search parent
 * directories and never create a repository.
 *
 * **Example** (Reading the message)
 * ```ts
 * import { GitError } from "@ugent/tools"
 * const e = new GitError.NotARepository({ path: ".", reason: "no-git-dir" })
 * console.log(e.message)
 * // => No git repository at .: there is no .git there. Git tools read the repository at the workspace root (or the sub-directory given as `repository`) and never search parent directories or create one. Check the path with file.list.
 * ```
 *
 * @category errors
 * @since 0.1.0
 */
export class NotARepository extends Schema.TaggedError<NotARepository>()("NotARepository", {
  path: Schema.String,
  reason: Schema.Literals(["no-git-dir", "git-dir-outside", "store-outside", "not-a-file", "unreadable"]),
  /** For `store-outside` and `not-a-file`: the part of the git directory at fault (relative to the working tree). */
  part: Schema.optionalKey(Schema.String)
}) {
  static readonly kind: ToolError.Kind = "not_found"
  override get message(): string {
    const why: Record<typeof this.reason, string> = {
      "no-git-dir": "there is no .git there",
      "git-dir-outside": "its .git points to a directory outside the workspace, which git tools do not read",
      "store-outside": `its ${this.part ?? ".git"} leads outside the workspace (a symbolic link or objects/info/alternates naming another repository), and git tools read no object, ref or index outside it; remove the link or alternate (or clone the repository with its own objects)`,
      "not-a-file": `its ${this.part ?? ".git"} is not a regular file (a FIFO, socket or device), which git would wait on for ever; remove it (git writes its files as regular files)`,
      unreadable: "its .git could not be read as a repository"
    }
    return `No git repository at ${this.path}: ${why[this.reason]}. Git tools read the repository at the workspace root (or the sub-directory given as \`repository\`) and never search parent directories or create one. Check the path with file.list.`
  }
}

/**
 * The revision is well formed but names no commit: no branch, tag or commit
 * of that name, an abbreviated hash that matches several objects, an
 * ancestor that does not exist (`HEAD~99`), or a repository with no commits.
 *
 * @category errors
 * @since 0.1.0
 */
export class UnknownRevision extends Schema.TaggedError<UnknownRevision>()("UnknownRevision", {
  revision: Schema.String,
  reason: Schema.Literals(["unknown", "ambiguous", "no-commits"])
}) {
  static readonly kind: ToolError.Kind = "not_found"
  override get message(): string {
    switch (this.reason) {
      case "no-commits":
        return `The repository has no commits yet, so "${this.revision}" names nothing. Use git.status to see what is staged.`
      case "ambiguous":
        return `The abbreviated hash "${this.revision}" matches more than one object. Give more characters of the hash (git.log lists full hashes).`
      default:
        return `Unknown revision "${this.revision}": no branch, tag or commit of that name. List recent commits with git.log and use one of their hashes, or check the branch name with git.status.`
    }
  }
}

/**
 * The revision was refused before git saw it: it starts with `-` (git could
 * read it as an option), or uses syntax the tools do not accept (ranges,
 * reflog selectors, paths, spaces or control characters).
 *
 * **Example** (An option in disguise)
 * ```ts
 * import { GitError } from "@ugent/tools"
 * const e = new GitError.InvalidRevision({ revision: "--output=/tmp/x", reason: "option-like" })
 * console.log(e.message.split(".")[0])
 * // => Refused revision "--output=/tmp/x": it starts with "-", so git could read it as an option
 * ```
 *
 * @category errors
 * @since 0.1.0
 */
export class InvalidRevision extends Schema.TaggedError<InvalidRevision>()("InvalidRevision", {
  revision: Schema.String,
  reason: Schema.Literals(["option-like", "syntax"])
}) {
  static readonly kind: ToolError.Kind = "invalid_input"
  override get message(): string {
    const shown = JSON.stringify(this.revision).slice(1, -1)
    const why =
      this.reason === "option-like"
        ? `it starts with "-", so git could read it as an option`
        : "it is not a revision the git tools accept"
    return `Refused revision "${shown}": ${why}. Give a branch or tag name, a commit hash (4 to 40 hex digits) or HEAD, optionally followed by ~N or ^N (for example "HEAD~2", "main^2"); ranges, reflog selectors and paths are not accepted.`
  }
}

/**
 * The path is not inside the repository's working tree, or it names nothing
 * the operation can read (not tracked, or absent from the revision).
 *
 * @category errors
 * @since 0.1.0
 */
export class PathNotInRepository extends Schema.TaggedError<PathNotInRepository>()("PathNotInRepository", {
  path: Schema.String,
  reason: Schema.Literals(["outside", "not-tracked", "not-in-revision", "not-a-file"]),
  revision: Schema.optionalKey(Schema.String)
}) {
  static readonly kind: ToolError.Kind = "not_found"
  override get message(): string {
    const p = JSON.stringify(this.path).slice(1, -1)
    switch (this.reason) {
      case "outside":
        return `${p} is outside the repository's working tree. Give a path inside the repository, relative to the workspace root.`
      case "not-tracked":
        return `${p} is not tracked by git (not in the last commit). Commit it first, or read it with file.read; git.status lists untracked files.`
      case "not-a-file":
        return `${p} is a directory in the repository, not a file. Give the path of a file (git.log with this path lists the commits that touched it).`
      default:
        return `${p} does not exist at revision ${this.revision ?? "HEAD"}. Check the path with git.show of that revision, or use git.log with the path to find when it existed.`
    }
  }
}

/**
 * A git command failed for a reason the tools do not model (a damaged
 * repository, a missing object, the `git` binary not usable). `detail` is one
 * of a few fixed phrases chosen from what git said; git's own words never
 * reach it (they can quote any file git was made to read).
 *
 * @category errors
 * @since 0.1.0
 */
export class GitFailed extends Schema.TaggedError<GitFailed>()("GitFailed", {
  operation: Schema.String,
  detail: Schema.String
}) {
  static readonly kind: ToolError.Kind = "failed"
  override get message(): string {
    return `git ${this.operation} failed: ${this.detail}. Check that the repository is not damaged (for example with git.status); if the problem persists, report it to the operator.`
  }
}

/**
 * A git write refused before anything changed, with what to do instead:
 * nothing staged to commit; a staged file whose name holds a secret (the
 * same names `file.read` refuses: environment files, keys, credential
 * stores, and the recipe's `blocked`); an amend of a commit already on a
 * remote-tracking branch, of someone else's commit, or with no commit yet; no
 * configured user; a hook the repository would run that the tools cannot
 * run safely; a branch that exists already or is not there; a bad branch
 * name; tracked changes or unmerged files in the way; nothing to stash or no
 * stash to pop; a path git ignores.
 *
 * **Example** (A staged environment file)
 * ```ts
 * import { GitError } from "@ugent/tools"
 * const e = new GitError.GitWriteRefused({ operation: "commit", reason: "secret-staged", names: [".env"] })
 * console.log(e.message.split(":")[0])
 * // => Refused git commit
 * ```
 *
 * @category errors
 * @since 0.2.0
 */
export class GitWriteRefused extends Schema.TaggedError<GitWriteRefused>()("GitWriteRefused", {
  operation: Schema.String,
  reason: Schema.Literals([
    "nothing-staged",
    "secret-staged",
    "amend-pushed",
    "amend-author",
    "no-commits",
    "no-identity",
    "hooks-outside",
    "hooks-unsupported",
    "hook-refused",
    "branch-exists",
    "no-such-branch",
    "invalid-branch-name",
    "changes-in-the-way",
    "conflicted",
    "nothing-to-stash",
    "no-stash",
    "ignored",
    "invalid-message",
    "linked-worktree"
  ]),
  /** The files, refs, hooks or names at fault. */
  names: Schema.optionalKey(Schema.Array(Schema.String))
}) {
  static readonly kind: ToolError.Kind = "invalid_input"
  override get message(): string {
    const names = (this.names ?? []).map((n) => JSON.stringify(n).slice(1, -1)).join(", ")
    const why: Record<typeof this.reason, string> = {
      "nothing-staged": "nothing is staged. Stage files with world.tools.git.add first (git.status shows what changed)",
      "secret-staged": `${names} ${this.names?.length === 1 ? "is a file" : "are files"} whose name holds a secret (the names file.read refuses), so no commit takes ${this.names?.length === 1 ? "it" : "them"}. Unstage ${this.names?.length === 1 ? "it" : "them"} (a person runs git restore --staged), and list the name in .gitignore`,
      "amend-pushed": `HEAD is already on the remote-tracking branch${this.names?.length === 1 ? "" : "es"} ${names}, and a pushed commit is never amended. Make a new commit instead`,
      "amend-author": `HEAD was written by ${names}, not by the configured user, and only one's own commit is amended. Make a new commit instead`,
      "no-commits": "the repository has no commit yet. Make the first commit (git.add, then git.commit without amend)",
      "no-identity":
        "no user is configured for commits. A person sets user.name and user.email in the repository's configuration (git config user.name ...), or the host passes an identity",
      "hooks-outside": `the repository runs the hook${this.names?.length === 1 ? "" : "s"} ${names} from a folder outside its .git directory (core.hooksPath), which a write in the workspace could change, so the tools do not run ${this.names?.length === 1 ? "it" : "them"} and never skip ${this.names?.length === 1 ? "it" : "them"}. A person runs this git command, or moves the hooks into .git/hooks`,
      "hooks-unsupported": `the repository has the hook${this.names?.length === 1 ? "" : "s"} ${names}, which the isomorphic backend (used when the git binary is missing) cannot run, and hooks are never skipped. Install git, or a person runs this git command`,
      "hook-refused": `the repository's hook${this.names?.length === 1 ? "" : "s"} ${names} exited with an error, so nothing was committed. Look at what ${this.names?.length === 1 ? "it checks" : "they check"} (the hooks are in .git/hooks), fix it, stage again and commit`,
      "branch-exists": `the branch ${names} exists already, and no branch is moved or overwritten. Choose another name, or switch to it with world.tools.git.switch`,
      "no-such-branch": `there is no local branch ${names}. Check the name (world.tools.git.branch lists the branches after making one), or pass create: true to make it`,
      "invalid-branch-name": `${names} is not a branch name git accepts (no leading "-", spaces, "..", "~^:?*[\\", "@{", a part starting with "." or ending in ".lock"). Choose a plain name such as "feature/login"`,
      "changes-in-the-way": `${names === "" ? "tracked files" : names} ${this.names?.length === 1 ? "has" : "have"} changes the switch would overwrite. Commit them (git.add, git.commit) or put them aside with world.tools.git.stash first`,
      conflicted: `${names} ${this.names?.length === 1 ? "is" : "are"} unmerged. A person resolves the conflict first`,
      "nothing-to-stash": "there are no changes to tracked files to put aside",
      "no-stash": "there is no stash entry to pop",
      ignored: `${names} ${this.names?.length === 1 ? "is" : "are"} ignored by .gitignore, and ignored files are not staged. Remove the ignore rule first if the file belongs in the repository`,
      "invalid-message":
        "the commit message is empty or holds a NUL byte. Pass a message with a subject line (the message is data, passed to git as is, never through a shell)",
      "linked-worktree":
        "the isomorphic backend (used when the git binary is missing) cannot write a linked worktree's own index. Install git to write here"
    }
    return `Refused git ${this.operation}: ${why[this.reason]}.`
  }
}

/**
 * Any failure of a git backend.
 *
 * @category models
 * @since 0.1.0
 */
export type GitError = NotARepository | UnknownRevision | InvalidRevision | PathNotInRepository | GitFailed

/**
 * The schemas of every git failure, for a tool's `failure` schema.
 *
 * @category schemas
 * @since 0.1.0
 */
export const GitErrorSchema = Schema.Union([
  NotARepository,
  UnknownRevision,
  InvalidRevision,
  PathNotInRepository,
  GitFailed
])

/**
 * Everything a git tool that takes a revision or a path may fail with: bad
 * input, every git failure, the workspace's path failures, and
 * `ConcurrentChange` (retryable: the working tree changed under git while a
 * diff against it ran, so nothing was shown).
 *
 * @category schemas
 * @since 0.1.0
 */
export const ToolFailure = Schema.Union([
  ToolError.InvalidInput,
  NotARepository,
  UnknownRevision,
  InvalidRevision,
  PathNotInRepository,
  GitFailed,
  Workspace.ConcurrentChange,
  ...Workspace.pathErrors
])

/**
 * Everything a git write tool may fail with: what a reading tool may, the
 * refusals of `GitWriteRefused`, and `StateRefused` (the checkpoint of a
 * working-tree change could not be kept: `.ugent` is not as ugent made it).
 *
 * @category schemas
 * @since 0.2.0
 */
export const WriteFailure = Schema.Union([...ToolFailure.members, GitWriteRefused, StateRefused])
