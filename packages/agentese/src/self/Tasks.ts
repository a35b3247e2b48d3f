/**
 * Tasks an agent keeps for itself (`self.tools.task.create`, `task.update`,
 * `task.list`): a title, a status (pending, in progress, done, cancelled)
 * and notes, per caller and session, persisted in the server's key-value
 * store (memory, SQLite or PostgreSQL), so a plan survives a restart of the
 * server.
 *
 * @since 0.2.0
 */
import { randomUUID } from "node:crypto"
import { Observer, Tool, type ToolError } from "@ugent/core"
import { Clock, Effect, Schema, Semaphore } from "effect"
import { KeyValueStore } from "effect/persistence"
import * as Sessions from "../Sessions.ts"

/**
 * @category schemas
 * @since 0.2.0
 */
export const Status = Schema.Literals(["pending", "in_progress", "done", "cancelled"])

/**
 * A task.
 *
 * @category schemas
 * @since 0.2.0
 */
export const Task = Schema.Struct({
  id: Schema.String,
  title: Schema.String,
  status: Status,
  notes: Schema.optionalKey(Schema.String),
  /** Epoch milliseconds. */
  createdAt: Schema.Number,
  updatedAt: Schema.Number
})

/**
 * @category models
 * @since 0.2.0
 */
export type Task = typeof Task.Type

/**
 * No task with that id in this session.
 *
 * @category errors
 * @since 0.2.0
 */
export class TaskNotFound extends Schema.TaggedError<TaskNotFound>()("TaskNotFound", { id: Schema.String }) {
  static readonly kind: ToolError.Kind = "not_found"
  override get message(): string {
    return `No task ${this.id} in this session. List your tasks with self.tools.task.list to see their ids.`
  }
}

/**
 * The task store could not be read or written.
 *
 * @category errors
 * @since 0.2.0
 */
export class TaskStoreFailed extends Schema.TaggedError<TaskStoreFailed>()("TaskStoreFailed", {
  detail: Schema.String
}) {
  static readonly kind: ToolError.Kind = "unavailable"
  override get message(): string {
    return `The task store failed (${this.detail}). Try again; if it persists, the server's store is down.`
  }
}

const List = Schema.Array(Task)
const decodeList = Schema.decodeUnknownEffect(Schema.fromJsonString(List))
const encodeList = Schema.encodeEffect(Schema.fromJsonString(List))

// One writer at a time per process: a read-modify-write of a session's list is not interleaved.
const lock = Semaphore.makeUnsafe(1)

const keyOf = Effect.gen(function* () {
  const observer = yield* Effect.serviceOption(Observer.Observer)
  const session = yield* Sessions.Current
  const who = observer._tag === "Some" ? observer.value.id : "anonymous"
  return `ugent/tasks/${encodeURIComponent(who)}/${encodeURIComponent(session ?? "-")}`
})

const load = (store: KeyValueStore.KeyValueStore, key: string) =>
  Effect.gen(function* () {
    const raw = yield* store.get(key)
    return raw === undefined ? [] : yield* decodeList(raw)
  }).pipe(Effect.mapError((e) => new TaskStoreFailed({ detail: e.message })))

const save = (store: KeyValueStore.KeyValueStore, key: string, tasks: ReadonlyArray<Task>) =>
  Effect.flatMap(encodeList(tasks), (raw) => store.set(key, raw)).pipe(
    Effect.mapError((e) => new TaskStoreFailed({ detail: e.message }))
  )

const failure = Schema.Union([TaskNotFound, TaskStoreFailed])

/**
 * `task.create`: a new pending task.
 *
 * @category tools
 * @since 0.2.0
 */
export const create = Tool.make({
  name: "task.create",
  description: "Create a task in your list (status pending), to plan several steps.",
  input: Schema.Struct({
    title: Schema.String.check(Schema.isNonEmpty()).annotate({ description: "What to do, in a line." }),
    notes: Schema.optionalKey(Schema.String)
  }),
  output: Task,
  failure,
  run: (input) =>
    lock.withPermits(1)(
      Effect.gen(function* () {
        const store = yield* KeyValueStore.KeyValueStore
        const key = yield* keyOf
        const tasks = yield* load(store, key)
        const now = yield* Clock.currentTimeMillis
        const task: Task = {
          id: `t-${randomUUID().slice(0, 8)}`,
          title: input.title,
          status: "pending",
          ...(input.notes !== undefined ? { notes: input.notes } : {}),
          createdAt: now,
          updatedAt: now
        }
        yield* save(store, key, [...tasks, task])
        return task
      })
    )
})

/**
 * `task.update`: changes a task's status, title or notes.
 *
 * @category tools
 * @since 0.2.0
 */
export const update = Tool.make({
  name: "task.update",
  description: "Update a task's status, title or notes.",
  input: Schema.Struct({
    id: Schema.String,
    status: Schema.optionalKey(Status),
    title: Schema.optionalKey(Schema.String.check(Schema.isNonEmpty())),
    notes: Schema.optionalKey(Schema.String)
  }),
  output: Task,
  failure,
  run: (input) =>
    lock.withPermits(1)(
      Effect.gen(function* () {
        const store = yield* KeyValueStore.KeyValueStore
        const key = yield* keyOf
        const tasks = yield* load(store, key)
        const found = tasks.find((t) => t.id === input.id)
        if (found === undefined) return yield* new TaskNotFound({ id: input.id })
        const updated: Task = {
          ...found,
          ...(input.status !== undefined ? { status: input.status } : {}),
          ...(input.title !== undefined ? { title: input.title } : {}),
          ...(input.notes !== undefined ? { notes: input.notes } : {}),
          updatedAt: yield* Clock.currentTimeMillis
        }
        yield* save(
          store,
          key,
          tasks.map((t) => (t.id === input.id ? updated : t))
        )
        return updated
      })
    )
})

/**
 * `task.list`: the tasks of this session, in the order they were created.
 *
 * @category tools
 * @since 0.2.0
 */
export const list = Tool.make({
  name: "task.list",
  description: "List your tasks, oldest first, optionally by status.",
  input: Schema.Struct({ status: Schema.optionalKey(Status) }),
  output: Schema.Struct({ tasks: Schema.Array(Task) }),
  failure,
  run: (input) =>
    Effect.gen(function* () {
      const store = yield* KeyValueStore.KeyValueStore
      const tasks = yield* load(store, yield* keyOf)
      return { tasks: input.status === undefined ? tasks : tasks.filter((t) => t.status === input.status) }
    })
})
