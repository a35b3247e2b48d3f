/**
 * The `effect/ai` Toolkit projection: the paths a caller is offered, as an
 * `effect/ai` `Toolkit` for `LanguageModel.generateText` and `Chat`. Each
 * tool has the provider-safe name of its path (`world_tools_file_read`), the
 * path's JSON Schema as parameters, and a handler that calls
 * `Invoker.invoke`, so a model's calls take the same road as every other
 * projection. A typed failure is returned to the model as its JSON (`_tag`,
 * `message`, fields) with `isFailure: true`, never as an error of the
 * generation.
 *
 * @since 0.1.0
 */
import { Effect, type Layer, Option, Schema } from "effect"
import { Tool as AiTool, Toolkit as AiToolkit } from "effect/ai"
import * as Catalog from "../Catalog.ts"
import { capture, within } from "../internal/captured.ts"
import type * as Invoke from "../Invoke.ts"
import { Invoker } from "../Invoke.ts"
import type { Description } from "../Registry.ts"

type Services = Invoke.Services

/**
 * The schema of a failure as the model receives it: the tagged error's JSON.
 *
 * @category schemas
 * @since 0.1.0
 */
export const Failure = Schema.StructWithRest(Schema.Struct({ _tag: Schema.String, message: Schema.String }), [
  Schema.Record(Schema.String, Schema.Unknown)
]).annotate({ title: "Failure", description: "A typed failure: its tag, a message saying what to do, and its fields." })

/**
 * An `effect/ai` tool of a path: untyped parameters described by the path's
 * JSON Schema (the road decodes them; a non-object input is wrapped as
 * `{ input }`), any JSON result, failures returned to the model.
 *
 * @category models
 * @since 0.1.0
 */
export type PathTool = AiTool.Any

/**
 * The toolkit of a caller, and the layer of its handlers.
 *
 * @category models
 * @since 0.1.0
 */
export interface Built {
  readonly toolkit: AiToolkit.Toolkit<Record<string, PathTool>>
  readonly layer: Layer.Layer<AiTool.HandlersFor<Record<string, PathTool>>>
}

/**
 * The `effect/ai` tool of a path, if its provider-safe name fits
 * `^[a-zA-Z0-9_-]{1,64}$`. It carries the path as `Tool.Title` and in
 * `Tool.Meta`, and the path's protocol hints as `Tool.Readonly`,
 * `Tool.Destructive`, `Tool.Idempotent` and `Tool.OpenWorld`.
 *
 * @category describing
 * @since 0.1.0
 */
export const toAiTool = (description: Description | Invoke.Offer): Option.Option<PathTool> =>
  Option.map(Catalog.safeName(description.path), (name) =>
    AiTool.dynamic(name, {
      description: description.description,
      parameters: Catalog.inputShape(description.input).schema,
      success: Schema.Unknown,
      failure: Failure,
      failureMode: "return"
    })
      .annotate(AiTool.Title, description.path)
      .annotate(AiTool.Readonly, description.annotations.readOnly)
      .annotate(AiTool.Destructive, description.annotations.destructive)
      .annotate(AiTool.Idempotent, description.annotations.idempotent)
      .annotate(AiTool.OpenWorld, description.annotations.openWorld)
      .annotate(AiTool.Meta, {
        "ugent/path": description.path,
        "ugent/trust": Catalog.levelOf(description).requiredTrust,
        "ugent/approval": Catalog.levelOf(description).requiresApproval
      })
  )

/**
 * Builds the toolkit of the caller in context (the paths `Invoker.list`
 * offers it) and the layer of its handlers, to merge with other toolkits
 * (`Toolkit.merge`). Calls run with the caller and services of the place it
 * was built.
 *
 * @category constructors
 * @since 0.1.0
 */
export const build: Effect.Effect<Built, never, Services> = Effect.gen(function* () {
  const captured = yield* capture
  const road = yield* Invoker
  const offers = yield* road.list
  const tools: Array<PathTool> = []
  const handlers: Record<string, (params: unknown) => Effect.Effect<unknown, typeof Failure.Type>> = {}
  for (const offer of offers) {
    const tool = toAiTool(offer)
    if (Option.isNone(tool)) continue
    tools.push(tool.value)
    const { unwrap } = Catalog.inputShape(offer.input)
    handlers[tool.value.name] = (params) =>
      within(captured)(road.invoke({ path: offer.path, input: unwrap(params ?? {}) })).pipe(
        Effect.flatMap((outcome) => (outcome.ok ? Effect.succeed(outcome.result) : Effect.fail(outcome.error)))
      )
  }
  const toolkit = AiToolkit.make(...tools) as AiToolkit.Toolkit<Record<string, PathTool>>
  return { toolkit, layer: toolkit.toLayer(handlers) }
})

/**
 * The caller's toolkit with its handlers, ready for
 * `LanguageModel.generateText({ prompt, toolkit })` or `Chat`.
 *
 * **Example** (Running a model's tool call)
 * ```ts
 * import { Server, Toolkit } from "@ugent/agentese"
 * import { Effect, Stream } from "effect"
 * import { mkdtempSync, writeFileSync } from "node:fs"
 * import { tmpdir } from "node:os"
 * import { join } from "node:path"
 * const root = mkdtempSync(join(tmpdir(), "ugent-"))
 * writeFileSync(join(root, "hello.txt"), "hello\n")
 * const program = Effect.gen(function* () {
 *   const toolkit = yield* Toolkit.fromInvoker
 *   const results = yield* toolkit.handle("world_tools_file_read", { path: "hello.txt" })
 *   const last = yield* Stream.runLast(results)
 *   return last._tag === "Some" ? (last.value.result as { content: string }).content : ""
 * })
 * const { tools } = await Effect.runPromise(Toolkit.fromInvoker.pipe(Effect.provide(Server.layer({ root, stores: "memory" }))))
 * // An L0 caller is offered the reader, not the writer.
 * console.log("world_tools_file_read" in tools, "world_tools_file_write" in tools)
 * // => true false
 * console.log(await Effect.runPromise(program.pipe(Effect.provide(Server.layer({ root, stores: "memory" })))))
 * // => 1	hello
 * ```
 *
 * @category constructors
 * @since 0.1.0
 */
export const fromInvoker: Effect.Effect<
  AiToolkit.WithHandler<Record<string, PathTool>>,
  never,
  Services
> = Effect.flatMap(build, ({ layer, toolkit }) => Effect.provide(toolkit, layer))
