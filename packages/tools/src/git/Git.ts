/**
 * The git family: `git.status`, `git.log`, `git.diff`, `git.blame` and
 * `git.show` (L0), and the writes `git.add`, `git.commit`, `git.branch`,
 * `git.switch` and `git.stash` (L2, each confirmed), served under
 * `world.tools` over the `GitBackend` it builds (the git binary when there
 * is one, else isomorphic-git). A diff is told as
 * `3 files: +40/-12`. Its tools need the host's `Workspace`.
 *
 * @since 0.2.0
 */
import { Family } from "@ugent/core"
import * as GitAdd from "./Add.ts"
import * as GitBlame from "./Blame.ts"
import * as GitBranch from "./Branch.ts"
import * as GitCommit from "./Commit.ts"
import * as GitDiff from "./Diff.ts"
import * as GitBackend from "./GitBackend.ts"
import * as GitLog from "./Log.ts"
import * as GitShow from "./Show.ts"
import * as GitStash from "./Stash.ts"
import * as GitStatus from "./Status.ts"
import * as GitSwitch from "./Switch.ts"

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`

const stats = (s: GitDiff.Changes["stats"]) => `${plural(s.filesChanged, "file")}: +${s.additions}/-${s.deletions}`

/**
 * The family, for a server's `families` option.
 *
 * @category families
 * @since 0.2.0
 */
export const family = Family.make({
  name: "git",
  prefix: "world.tools",
  tools: {
    "git.status": GitStatus.status,
    "git.log": GitLog.log,
    "git.diff": GitDiff.diff,
    "git.blame": GitBlame.blame,
    "git.show": GitShow.show,
    "git.add": GitAdd.add,
    "git.commit": GitCommit.commit,
    "git.branch": GitBranch.branch,
    "git.switch": GitSwitch.switchBranch,
    "git.stash": GitStash.stash
  },
  layer: GitBackend.layer,
  present: {
    "git.status": (o) => ({
      summary: `On ${o.branch ?? "a detached HEAD"}: ${o.totals.staged} staged, ${o.totals.unstaged} unstaged, ${o.totals.untracked} untracked`
    }),
    "git.log": (o) => ({
      summary: `${plural(o.commits.length, "commit")}`,
      next: "pass a smaller limit, or leave includeDiff off"
    }),
    "git.diff": (o) => ({ summary: stats(o.stats), next: "pass paths to diff fewer files, or a smaller maxDiffSize" }),
    "git.blame": (o) => ({
      summary: `Blamed ${plural(o.lines.length, "line")} of ${o.path}`,
      next: `blame a range with startLine and endLine`
    }),
    "git.show": (o) => ({
      summary: `Commit ${o.commit.shortHash}${o.diff === undefined ? "" : `, ${stats(o.diff.stats)}`}`,
      next: "show it without the diff, or diff single paths with world.tools.git.diff"
    }),
    "git.add": (o) => ({
      summary: `${o.dryRun === true ? "Would stage; now " : ""}${plural(o.status.totals.staged, "file")} staged, ${o.status.totals.unstaged} unstaged, ${o.status.totals.untracked} untracked`
    }),
    "git.commit": (o) => ({
      summary:
        o.commit === undefined
          ? `Would commit ${plural(o.files.length, "file")} on ${o.status.branch ?? "a detached HEAD"}`
          : `${o.commit.amended ? "Amended" : "Committed"} ${o.commit.shortHash} on ${o.commit.branch ?? "a detached HEAD"}: ${o.commit.subject} (${plural(o.files.length, "file")}); now ${o.status.clean ? "clean" : `${o.status.totals.unstaged} unstaged, ${o.status.totals.untracked} untracked`}`
    }),
    "git.branch": (o) => ({ summary: `Branch ${o.branch} at ${o.at.slice(0, 7)}` }),
    "git.switch": (o) => ({
      summary: `${o.dryRun === true ? "Would switch" : "Switched"} to ${o.branch}${o.checkpoint === undefined ? "" : ` (checkpoint ${o.checkpoint})`}`
    }),
    "git.stash": (o) => ({ summary: `Stash ${o.action}: ${plural(o.entries.length, "entry", "entries")} kept` })
  }
})
