/**
 * `@ugent/tools`: the workspace jail and the built-in tools (file, search,
 * git, system, …) that work inside it.
 *
 * @since 0.1.0
 */

/** @since 0.1.0 */
export * as Edit from "./file/Edit.ts"
/** @since 0.2.0 */
export * as Files from "./file/Files.ts"
/** @since 0.2.0 */
export * as Git from "./git/Git.ts"
/** @since 0.1.0 */
export * as Glob from "./file/Glob.ts"
/** @since 0.1.0 */
export * as List from "./file/List.ts"
/** @since 0.1.0 */
export * as Read from "./file/Read.ts"
/** @since 0.1.0 */
export * as Write from "./file/Write.ts"
/** @since 0.2.0 */
export * as GitAdd from "./git/Add.ts"
/** @since 0.1.0 */
export * as GitBlame from "./git/Blame.ts"
/** @since 0.2.0 */
export * as GitBranch from "./git/Branch.ts"
/** @since 0.2.0 */
export * as GitCommit from "./git/Commit.ts"
/** @since 0.1.0 */
export * as GitDiff from "./git/Diff.ts"
/** @since 0.1.0 */
export * as GitBackend from "./git/GitBackend.ts"
/** @since 0.1.0 */
export * as GitError from "./git/GitError.ts"
/** @since 0.1.0 */
export * as GitLog from "./git/Log.ts"
/** @since 0.1.0 */
export * as GitShow from "./git/Show.ts"
/** @since 0.2.0 */
export * as GitStash from "./git/Stash.ts"
/** @since 0.1.0 */
export * as GitStatus from "./git/Status.ts"
/** @since 0.2.0 */
export * as GitSwitch from "./git/Switch.ts"
/** @since 0.1.0 */
export * as Grep from "./search/Grep.ts"
/** @since 0.2.0 */
export * as Search from "./search/Search.ts"
/** @since 0.2.0 */
export * as Sandbox from "./system/Sandbox.ts"
/** @since 0.2.0 */
export * as StateDir from "./StateDir.ts"
/** @since 0.2.0 */
export * as System from "./system/System.ts"
/** @since 0.2.0 */
export * as SystemBash from "./system/Bash.ts"
/** @since 0.2.0 */
export * as SystemError from "./system/SystemError.ts"
/** @since 0.2.0 */
export * as SystemKill from "./system/Kill.ts"
/** @since 0.2.0 */
export * as SystemOutput from "./system/Output.ts"
/** @since 0.2.0 */
export * as Web from "./web/Web.ts"
/** @since 0.2.0 */
export * as WebError from "./web/WebError.ts"
/** @since 0.2.0 */
export * as WebFetch from "./web/Fetch.ts"
/** @since 0.2.0 */
export * as WebSearch from "./web/Search.ts"
/** @since 0.1.0 */
export * as Workspace from "./Workspace.ts"
/** @since 0.3.0 */
export * as Checkpoint from "./checkpoint/Checkpoint.ts"
/** @since 0.3.0 */
export * as Checkpoints from "./Checkpoints.ts"
