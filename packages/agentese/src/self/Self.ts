/**
 * The `self.tools` family: what an agent keeps and asks for itself. Tasks
 * (`task.create`, `task.update`, `task.list`), plan mode (`mode.plan`,
 * `mode.execute`), `clarify` and the caller's own figures (`stats`). All are L0: they change no file, run no
 * shell and call no network. The host provides the key-value store (tasks)
 * and the modes (`Modes`, which the road also reads).
 *
 * @since 0.2.0
 */
import { Family } from "@ugent/core"
import * as Clarify from "./Clarify.ts"
import * as Modes from "./Modes.ts"
import * as Stats from "./Stats.ts"
import * as Tasks from "./Tasks.ts"

/**
 * The family, for a server's `families` option.
 *
 * @category families
 * @since 0.2.0
 */
export const family = Family.make({
  name: "self",
  prefix: "self.tools",
  tools: {
    "task.create": Tasks.create,
    "task.update": Tasks.update,
    "task.list": Tasks.list,
    "mode.plan": Modes.plan,
    "mode.execute": Modes.execute,
    clarify: Clarify.clarify,
    stats: Stats.stats
  },
  present: {
    stats: (o) => ({ summary: Stats.summary(o) }),
    "task.list": (o) => ({
      summary: `${o.tasks.length} tasks: ${o.tasks.filter((t) => t.status === "done").length} done, ${o.tasks.filter((t) => t.status === "in_progress").length} in progress`
    })
  }
})
