/**
 * The built-in nodes: `world.tools` (the file, search and git tools of
 * `@ugent/tools`, behind the workspace jail).
 *
 * | path | tool | trust |
 * |---|---|---|
 * | `world.tools.file.read` | read a text file, with a read proof | L0 |
 * | `world.tools.file.write` | create or overwrite a file (a proof to overwrite) | L1 (L2 outside the writable globs) |
 * | `world.tools.file.edit` | exact replacements, with a proof | L1 (L2 outside the writable globs) |
 * | `world.tools.file.list` | one directory level | L0 |
 * | `world.tools.file.glob` | files matching a pattern | L0 |
 * | `world.tools.search.grep` | ripgrep-style search | L0 |
 * | `world.tools.git.status` | branch, staged, unstaged and untracked files | L0 |
 * | `world.tools.git.log` | commits, with stats and diffs on request | L0 |
 * | `world.tools.git.diff` | hunks with typed lines between two trees | L0 |
 * | `world.tools.git.blame` | each line with its commit | L0 |
 * | `world.tools.git.show` | one commit with its diff | L0 |
 *
 * and `self.memory` (the working memory of the `Summarized` wrapper of
 * `@ugent/wrappers`):
 *
 * | path | tool | trust |
 * |---|---|---|
 * | `self.memory.read` | a full result kept under an id, whole or by range | L0 |
 *
 * @since 0.1.0
 */
import {
  Edit,
  type GitBackend,
  GitBlame,
  GitDiff,
  GitLog,
  GitShow,
  GitStatus,
  Glob,
  Grep,
  List,
  Read,
  type Workspace,
  Write
} from "@ugent/tools"
import { type MemoryStore, Summarized } from "@ugent/wrappers"
import type { Effect } from "effect"
import * as Node from "./Node.ts"

/**
 * The `world.tools` node. Needs the `Workspace` and a `GitBackend`.
 *
 * @category nodes
 * @since 0.1.0
 */
export const worldTools: Effect.Effect<Node.Node, never, Workspace.Workspace | GitBackend.GitBackend> = Node.make(
  "world.tools",
  {
    "file.read": Read.read,
    "file.write": Write.write,
    "file.edit": Edit.edit,
    "file.list": List.list,
    "file.glob": Glob.glob,
    "search.grep": Grep.grep,
    "git.status": GitStatus.status,
    "git.log": GitLog.log,
    "git.diff": GitDiff.diff,
    "git.blame": GitBlame.blame,
    "git.show": GitShow.show
  }
)

/**
 * The `self.memory` node. Needs the `MemoryStore`.
 *
 * @category nodes
 * @since 0.1.0
 */
export const selfMemory: Effect.Effect<Node.Node, never, MemoryStore.MemoryStore> = Node.make("self.memory", {
  read: Summarized.read
})
