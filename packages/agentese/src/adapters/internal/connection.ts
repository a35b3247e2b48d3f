/**
 * What every adapter shares: the road it calls (a runtime the caller gives,
 * or one built from `Server.Options`), the caller's offers under their
 * provider-safe names, one call through `Invoker.invoke` in the
 * conversation's session, the text a result goes back to a model as, the
 * function definitions of a path (plain, or in a provider's strict mode), and
 * whether the road will ask a person before a call runs.
 *
 * @internal
 */
import { randomUUID } from "node:crypto"
import { Boundary, Observer, Trust } from "@ugent/core"
import { Effect, Exit, ManagedRuntime, Option, Schema } from "effect"
import * as Catalog from "../../Catalog.ts"
import * as Invoke from "../../Invoke.ts"
import * as Recipe from "../../Recipe.ts"
import type { Entry } from "../../Registry.ts"
import * as Server from "../../Server.ts"

/**
 * A runtime that serves the road: `ManagedRuntime.make(Server.layer(options))`,
 * or any runtime whose context holds the road and its caller.
 */
export type Runtime = ManagedRuntime.ManagedRuntime<Invoke.Services, unknown>

/** Where the road comes from, and which conversation the calls belong to. */
export type Options = (
  | {
      /** A runtime serving the road; the caller owns it (and disposes it). */
      readonly runtime: Runtime
      readonly server?: undefined
    }
  | {
      /** Server options: the adapter builds the road, and disposing the tools disposes it. */
      readonly server: Server.Options
      readonly runtime?: undefined
    }
) & {
  /**
   * The conversation's session: read proofs the model was shown in it are
   * supplied to its writes. Default: the caller's own session (`Server.Options.session`),
   * else a new session for this set of tools, ended when they are disposed.
   */
  readonly session?: string | undefined
}

/** Whether a call of a path waits for a person: never, always, or depending on its input. */
export type Approval = "never" | "always" | "depends"

/** An offered path, as an adapter serves it. */
export interface Served {
  readonly path: string
  /** The provider-safe name (`world_tools_file_read`). */
  readonly name: string
  readonly offer: Catalog.Offer
  readonly entry: Entry
  /** The object-root parameters, and how to read the path's input back from them. */
  readonly shape: Catalog.InputShape
  readonly approval: Approval
  /** Whether the road will ask for approval of a call with this input (or may: an L2 caller's writes). */
  readonly needsApproval: (input: unknown) => boolean
}

/** How one call is made. */
export interface CallOptions {
  /** A person approved this call in the conversation: the road's approval question is answered yes. */
  readonly approved?: boolean | undefined
  readonly signal?: AbortSignal | undefined
}

/** The road, as adapters use it. */
export interface Connection {
  /** The caller's offers that have a provider-safe name, in path order. */
  readonly served: ReadonlyArray<Served>
  readonly observer: Observer.ObserverShape
  readonly session: string
  /** The offered path of a provider name or a dotted path, if it is offered. */
  readonly find: (name: string) => Served | undefined
  /** One call through the road, in the conversation's session; it never throws for a failed call. */
  readonly call: (path: string, input: unknown, options?: CallOptions) => Promise<Invoke.Outcome>
  readonly dispose: () => Promise<void>
}

const approvingApprover: Trust.ApproverShape = { approve: () => Effect.succeed(true) }

/** The approval a path's calls need, as the road decides it (see `Trust.admit` and the road's stages). */
const approvalOf = (
  offer: Catalog.Offer,
  entry: Entry,
  observer: Observer.ObserverShape,
  recipe: Recipe.Recipe
): { readonly approval: Approval; readonly needsApproval: (input: unknown) => boolean } => {
  const always = { approval: "always", needsApproval: () => true } as const
  const never = { approval: "never", needsApproval: () => false } as const
  if (offer.requiresApproval || entry.tool.effects.irreversible) return always
  // Only an L2 caller is asked to confirm what it may do: below, it is refused; above, it runs.
  if (observer.trust !== 2) return never
  if (offer.requiredTrust >= 2) return always
  const level = entry.level
  if (level !== undefined) {
    const decode = Schema.decodeUnknownExit(entry.tool.input as Schema.Codec<unknown, unknown>)
    return {
      approval: "depends",
      needsApproval: (input) => {
        const decoded = decode(input, { onExcessProperty: "ignore" })
        // Input that does not decode is refused by the road before any approval.
        if (Exit.isFailure(decoded)) return false
        const decision = Recipe.decide(recipe, offer.path, level.of(decoded.value))
        return decision._tag === "Allowed" && decision.requiredTrust >= 2
      }
    }
  }
  // A write below L2 asks for L2 (and the caller's confirmation) when its input needs more, such as
  // a file outside the writable globs; which input does is known only inside the tool, so every
  // write of an L2 caller is put to the person.
  return entry.tool.effects.writesFs || entry.tool.effects.callsShell ? always : never
}

/**
 * Connects to the road: builds the runtime if asked, lists the caller's
 * offers once, and fixes the session.
 */
export const connect = async (options: Options): Promise<Connection> => {
  const owned = options.runtime === undefined
  const runtime: Runtime = options.runtime ?? ManagedRuntime.make(Server.layer(options.server))
  try {
    const { road, observer, recipe, offers } = await runtime.runPromise(
      Effect.gen(function* () {
        const road = yield* Invoke.Invoker
        return {
          road,
          observer: yield* Observer.Observer,
          recipe: yield* Recipe.CurrentRecipe,
          offers: yield* road.list
        }
      })
    )
    const newSession = options.session === undefined && observer.session === undefined
    const session = options.session ?? observer.session ?? `conversation-${randomUUID()}`
    const served: Array<Served> = []
    for (const offer of offers) {
      const name = Catalog.safeName(offer.path)
      const entry = road.registry.get(offer.path)
      if (Option.isNone(name) || entry === undefined) continue
      served.push({
        path: offer.path,
        name: name.value,
        offer,
        entry,
        shape: Catalog.inputShape(offer.input),
        ...approvalOf(offer, entry, observer, recipe)
      })
    }
    const byPath = new Map(served.map((s) => [s.path, s]))
    return {
      served,
      observer,
      session,
      find: (name) => Option.getOrUndefined(Option.flatMapNullishOr(Catalog.pathOf(name), (p) => byPath.get(p))),
      call: (path, input, callOptions) =>
        runtime.runPromise(
          Effect.gen(function* () {
            const call = road.invoke({ path, input, session })
            return yield* callOptions?.approved === true
              ? Effect.provideService(call, Trust.Approver, approvingApprover)
              : call
          }),
          { signal: callOptions?.signal }
        ),
      dispose: async () => {
        if (newSession) await runtime.runPromise(road.endSession(session))
        if (owned) await runtime.dispose()
      }
    }
  } catch (error) {
    if (owned) await runtime.dispose()
    throw error
  }
}

/**
 * The text a call's outcome goes back to a model as: a string result as it
 * is, any other result as JSON, a failure as its JSON (`_tag`, `message` that
 * says what to do next, fields), which a model reads and acts on.
 */
export const contentOf = (outcome: Invoke.Outcome): string =>
  outcome.ok
    ? typeof outcome.result === "string"
      ? outcome.result
      : (JSON.stringify(outcome.result) ?? "null")
    : JSON.stringify(outcome.error)

/** Parses a model's argument text; empty text is no arguments, text that is not JSON stays text (the road reports it). */
export const parseArguments = (args: unknown): unknown => {
  if (typeof args !== "string") return args ?? {}
  if (args.trim().length === 0) return {}
  try {
    return JSON.parse(args)
  } catch {
    return args
  }
}

/** A function definition of a served path, whatever the provider's wire shape. */
export interface Definition {
  readonly name: string
  readonly description: string
  readonly parameters: Boundary.ObjectSchema
  readonly strict: boolean
  /** The path's input from a model's (parsed) arguments. */
  readonly inputOf: (args: unknown) => unknown
}

/**
 * The definition of a served path. Asked for strict mode, a path whose
 * input has a strict form (an object) gets it, and the model's arguments
 * (where an absent optional field is `null`) are turned back into the
 * path's input; arguments that do not fit are passed on as they are, so the
 * road reports them (`InvalidInput`, audited) to the model.
 */
export const definitionOf = (served: Served, strict: boolean, dialect: "openai" | "anthropic"): Definition => {
  const plain: Definition = {
    name: served.name,
    description: served.offer.description,
    parameters: served.shape.schema as Boundary.ObjectSchema,
    strict: false,
    inputOf: served.shape.unwrap
  }
  if (!strict) return plain
  const parameters = Boundary.strictParameters(served.entry.tool, dialect)
  if (Option.isNone(parameters)) return plain
  const tool = served.entry.tool
  return {
    ...plain,
    parameters: parameters.value,
    strict: true,
    inputOf: (args) => {
      const input = Effect.runSyncExit(Boundary.fromStrictArguments(tool, args))
      return Exit.isSuccess(input) ? input.value : args
    }
  }
}

/**
 * Runs a model's call by name: an offered path's arguments (JSON text, or a
 * parsed value) read by its definition; any other name handed to the road as
 * it is, which refuses it and records the refusal.
 */
export const callByName =
  (connection: Connection, definitions: ReadonlyMap<string, Definition>) =>
  (name: string, args: unknown): Promise<Invoke.Outcome> => {
    const parsed = parseArguments(args)
    const served = connection.find(name)
    if (served === undefined) {
      return connection.call(
        Option.getOrElse(Catalog.pathOf(name), () => name.trim()),
        parsed
      )
    }
    const definition = definitions.get(served.path)
    // Text that is not JSON goes to the road as it is: its InvalidInput tells the model what to fix.
    return connection.call(
      served.path,
      definition === undefined || typeof parsed === "string" ? parsed : definition.inputOf(parsed)
    )
  }

/** Adds `Symbol.asyncDispose` (not enumerable, so it is no tool) to what an adapter returns. */
export const disposable = <T extends object>(value: T, dispose: () => Promise<void>): T & AsyncDisposable =>
  Object.defineProperty(value, Symbol.asyncDispose, { value: dispose, enumerable: false }) as T & AsyncDisposable
