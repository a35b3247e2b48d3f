/**
 * The machinery behind `Tool.ts`: the shared prototype, primitive tools, and
 * the composition engine. Composition is kept as a binary tree at construction
 * (O(1) per `andThen`) and flattened once, iteratively, on first use into a
 * list of segments where adjacent pure steps are fused into one function; so
 * a 10,000-step pipeline neither recurses nor rebuilds lists quadratically.
 *
 * @internal
 */
import { type Context, Effect, Inspectable, Pipeable, Predicate, Schema } from "effect"
import { type Capability, capabilityKeys, type TrustLevel } from "./level.ts"

export const TypeId = "~ugent/Tool" as const

/** A schema that a tool may hold: any codec that needs no services. */
export type AnySchema = Schema.Codec<unknown, unknown, never, never>

/** What a tool declares it does to the world. */
export interface Effects {
  readonly readsFs: boolean
  readonly writesFs: boolean
  readonly callsShell: boolean
  readonly callsNetwork: boolean
  /** An irreversible action always asks for approval, whatever the caller's level. */
  readonly irreversible: boolean
  /** Calling twice with the same input leaves the world as calling once. */
  readonly idempotent: boolean
}

export const noEffects: Effects = {
  readsFs: false,
  writesFs: false,
  callsShell: false,
  callsNetwork: false,
  irreversible: false,
  idempotent: true
}

export const mergeEffects = (a: Effects, b: Effects): Effects => ({
  readsFs: a.readsFs || b.readsFs,
  writesFs: a.writesFs || b.writesFs,
  callsShell: a.callsShell || b.callsShell,
  callsNetwork: a.callsNetwork || b.callsNetwork,
  irreversible: a.irreversible || b.irreversible,
  idempotent: a.idempotent && b.idempotent
})

/** The runtime view of a tool, with the fields the engine needs. */
export interface ToolImpl {
  readonly [TypeId]: unknown
  readonly name: string
  readonly description: string
  readonly version: string
  readonly input: AnySchema
  readonly output: AnySchema
  readonly failure: AnySchema
  readonly trust: TrustLevel
  readonly effects: Effects
  readonly run: (a: unknown) => Effect.Effect<unknown, unknown, unknown>
  /** "primitive": opaque run; "pure": a total function; "identity"; "composed": a tree of parts. */
  readonly kind: "primitive" | "pure" | "identity" | "composed"
  readonly pure?: ((a: unknown) => unknown) | undefined
  /** The run of a `make` tool without its capability check, so a pipeline checks each level once. */
  readonly unchecked?: ((a: unknown) => Effect.Effect<unknown, unknown, unknown>) | undefined
  readonly left?: ToolImpl | undefined
  readonly right?: ToolImpl | undefined
}

const variance = {
  _A: (_: never) => _,
  _B: (_: never) => _,
  _E: (_: never) => _,
  _R: (_: never) => _
}

const BaseProto = {
  [TypeId]: variance,
  pipe() {
    // biome-ignore lint/complexity/noArguments: Pipeable's own convention
    return Pipeable.pipeArguments(this, arguments)
  },
  toJSON(this: ToolImpl) {
    return {
      _id: "Tool",
      name: this.name,
      description: this.description,
      version: this.version,
      trust: this.trust,
      effects: this.effects,
      steps: this.kind === "composed" ? flatten(this).length : 1
    }
  },
  toString(this: ToolImpl) {
    return `Tool(${this.name})`
  },
  [Inspectable.NodeInspectSymbol](this: ToolImpl & { toJSON(): unknown }) {
    return this.toJSON()
  }
}

export const isTool = (u: unknown): u is ToolImpl => Predicate.hasProperty(u, TypeId)

export interface PrimitiveOptions {
  readonly name: string
  readonly description: string
  readonly version?: string | undefined
  readonly input: AnySchema
  readonly output: AnySchema
  readonly failure: AnySchema
  readonly trust: TrustLevel
  readonly effects: Effects
  readonly run: (a: unknown) => Effect.Effect<unknown, unknown, unknown>
  readonly kind?: "primitive" | "pure" | "identity"
  readonly pure?: ((a: unknown) => unknown) | undefined
  readonly unchecked?: ((a: unknown) => Effect.Effect<unknown, unknown, unknown>) | undefined
}

export const makePrimitive = (options: PrimitiveOptions): ToolImpl => {
  const self = Object.create(BaseProto)
  self.name = options.name
  self.description = options.description
  self.version = options.version ?? "1"
  self.input = options.input
  self.output = options.output
  self.failure = options.failure
  self.trust = options.trust
  self.effects = options.effects
  self.run = options.run
  self.kind = options.kind ?? "primitive"
  self.pure = options.pure
  self.unchecked = options.unchecked
  return self
}

/** Wraps `run` so that the capability of `trust` is looked up before each call. */
export const requireCapability = (
  trust: TrustLevel,
  run: (a: unknown) => Effect.Effect<unknown, unknown, unknown>
): ((a: unknown) => Effect.Effect<unknown, unknown, Capability | unknown>) => {
  const key = capabilityKeys[trust] as Context.Key<Capability, unknown>
  return (a) => Effect.flatMap(key, () => run(a))
}

export const makePure = (options: {
  readonly name: string
  readonly description: string
  readonly input: AnySchema
  readonly output: AnySchema
  readonly f: (a: unknown) => unknown
}): ToolImpl =>
  makePrimitive({
    name: options.name,
    description: options.description,
    input: options.input,
    output: options.output,
    failure: Schema.Never,
    trust: 0,
    effects: noEffects,
    kind: "pure",
    pure: options.f,
    run: (a) => Effect.sync(() => options.f(a))
  })

export const makeIdentity = (schema: AnySchema): ToolImpl =>
  makePrimitive({
    name: "identity",
    description: "Returns its input unchanged.",
    input: schema,
    output: schema,
    failure: Schema.Never,
    trust: 0,
    effects: noEffects,
    kind: "identity",
    pure: (a) => a,
    run: Effect.succeed
  })

// ---------------------------------------------------------------------------
// Composition
// ---------------------------------------------------------------------------

interface Composed extends ToolImpl {
  readonly left: ToolImpl
  readonly right: ToolImpl
  flat?: ReadonlyArray<ToolImpl>
  runFlat?: (a: unknown) => Effect.Effect<unknown, unknown, unknown>
  nameCache?: string
  failureCache?: AnySchema
}

/** The leaves of a composition tree, left to right, identities removed. Iterative: no recursion. */
export const flatten = (tool: ToolImpl): ReadonlyArray<ToolImpl> => {
  if (tool.kind !== "composed") return [tool]
  const composed = tool as Composed
  if (composed.flat !== undefined) return composed.flat
  const out: Array<ToolImpl> = []
  const stack: Array<ToolImpl> = [composed]
  while (stack.length > 0) {
    const t = stack.pop()!
    if (t.kind === "composed") {
      const c = t as Composed
      if (c.flat !== undefined) {
        for (const s of c.flat) out.push(s)
      } else {
        stack.push(c.right, c.left)
      }
    } else if (t.kind !== "identity") {
      out.push(t)
    }
  }
  composed.flat = out
  return out
}

type Segment = ((a: unknown) => Effect.Effect<unknown, unknown, unknown>) | { readonly fused: (a: unknown) => unknown }

const fuse = (fs: ReadonlyArray<(a: unknown) => unknown>): ((a: unknown) => unknown) => {
  if (fs.length === 1) return fs[0]!
  return (a) => {
    let x = a
    for (let i = 0; i < fs.length; i++) x = fs[i]!(x)
    return x
  }
}

const segmentsOf = (
  steps: ReadonlyArray<ToolImpl>
): { readonly segments: ReadonlyArray<Segment>; readonly levels: ReadonlySet<TrustLevel> } => {
  const segments: Array<Segment> = []
  const levels = new Set<TrustLevel>()
  let pending: Array<(a: unknown) => unknown> = []
  for (const step of steps) {
    if (step.pure !== undefined) {
      pending.push(step.pure)
    } else {
      if (pending.length > 0) segments.push({ fused: fuse(pending) })
      pending = []
      if (step.unchecked !== undefined) {
        levels.add(step.trust)
        segments.push(step.unchecked)
      } else {
        segments.push(step.run)
      }
    }
  }
  if (pending.length > 0) segments.push({ fused: fuse(pending) })
  return { segments, levels }
}

const compileRun = (steps: ReadonlyArray<ToolImpl>): ((a: unknown) => Effect.Effect<unknown, unknown, unknown>) => {
  const { segments, levels } = segmentsOf(steps)
  const chain = (a: unknown): Effect.Effect<unknown, unknown, unknown> => {
    const first = segments[0]!
    let eff: Effect.Effect<unknown, unknown, unknown> =
      typeof first === "function" ? first(a) : Effect.sync(() => first.fused(a))
    for (let i = 1; i < segments.length; i++) {
      const seg = segments[i]!
      eff = typeof seg === "function" ? Effect.flatMap(eff, seg) : Effect.map(eff, seg.fused)
    }
    return eff
  }
  // Each capability the steps need is looked up once per call, before the first step runs.
  const keys = [...levels].map((level) => capabilityKeys[level] as Context.Key<Capability, unknown>)
  if (keys.length === 0) return chain
  if (keys.length === 1) {
    const key = keys[0]!
    return (a) => Effect.flatMap(key, () => chain(a))
  }
  return (a) => {
    let eff = Effect.suspend(() => chain(a))
    for (const key of keys) {
      const next = eff
      eff = Effect.flatMap(key, () => next)
    }
    return eff
  }
}

const unionOf = (schemas: ReadonlyArray<AnySchema>): AnySchema => {
  const distinct: Array<AnySchema> = []
  for (const s of schemas) {
    if (s === Schema.Never || distinct.includes(s)) continue
    distinct.push(s)
  }
  if (distinct.length === 0) return Schema.Never
  if (distinct.length === 1) return distinct[0]!
  return Schema.Union(distinct)
}

export const failureUnion = unionOf

const ComposedProto = Object.create(BaseProto, {
  name: {
    get(this: Composed) {
      if (this.nameCache === undefined)
        this.nameCache = flatten(this)
          .map((s) => s.name)
          .join(" >> ")
      return this.nameCache
    }
  },
  description: {
    get(this: Composed) {
      const steps = flatten(this)
      return `A pipeline of ${steps.length} steps: ${steps.map((s) => s.name).join(" >> ")}.`
    }
  },
  failure: {
    get(this: Composed) {
      if (this.failureCache === undefined) this.failureCache = unionOf(flatten(this).map((s) => s.failure))
      return this.failureCache
    }
  },
  run: {
    get(this: Composed) {
      if (this.runFlat === undefined) {
        const steps = flatten(this)
        this.runFlat = steps.length === 0 ? Effect.succeed : compileRun(steps)
      }
      return this.runFlat
    }
  }
})

/** `left >> right`, normalized: identities absorbed, the tree flattened lazily. */
export const andThen = (left: ToolImpl, right: ToolImpl): ToolImpl => {
  if (left.kind === "identity") return right
  if (right.kind === "identity") return left
  const self = Object.create(ComposedProto)
  self.left = left
  self.right = right
  self.kind = "composed"
  self.version = "1"
  self.input = left.input
  self.output = right.output
  self.trust = Math.max(left.trust, right.trust) as TrustLevel
  self.effects = mergeEffects(left.effects, right.effects)
  return self
}

/** Composes a whole list at once (balanced, so the tree stays shallow even before flattening). */
export const composeAll = (steps: ReadonlyArray<ToolImpl>): ToolImpl => {
  if (steps.length === 0) throw new Error("Tool.pipeline needs at least one step")
  let level: Array<ToolImpl> = steps.slice()
  while (level.length > 1) {
    const next: Array<ToolImpl> = []
    for (let i = 0; i < level.length; i += 2) {
      next.push(i + 1 < level.length ? andThen(level[i]!, level[i + 1]!) : level[i]!)
    }
    level = next
  }
  return level[0]!
}

/** Copies a tool's metadata onto a new primitive tool with a new `run` and overrides. */
export const derive = (self: ToolImpl, overrides: Partial<PrimitiveOptions>): ToolImpl =>
  makePrimitive({
    name: self.name,
    description: self.description,
    version: self.version,
    input: self.input,
    output: self.output,
    failure: self.failure,
    trust: self.trust,
    effects: self.effects,
    run: self.run,
    ...overrides
  })
