/**
 * Trust levels and their capability services. Kept apart from `Trust.ts` so
 * that `Tool.ts` can attach a capability without importing the gate.
 *
 * @internal
 */
import { Context } from "effect"

/** L0 read-only · L1 bounded writes · L2 suggestion (each write confirmed) · L3 autonomous. */
export type TrustLevel = 0 | 1 | 2 | 3

export const levels: ReadonlyArray<TrustLevel> = [0, 1, 2, 3]

export const isTrustLevel = (u: unknown): u is TrustLevel => u === 0 || u === 1 || u === 2 || u === 3

export const levelName = (level: TrustLevel): string => `L${level}`

export const levelMeaning: Record<TrustLevel, string> = {
  0: "read-only",
  1: "bounded writes (allowed paths only)",
  2: "suggestion (writes anywhere, each confirmed)",
  3: "autonomous (everything, logged)"
}

/** The capability to run a read-only tool. */
export class L0 extends Context.Service<L0, { readonly level: 0 }>()("ugent/Trust/L0") {}
/** The capability to run a tool that writes inside the writable globs. */
export class L1 extends Context.Service<L1, { readonly level: 1 }>()("ugent/Trust/L1") {}
/** The capability to run a tool that writes anywhere, each call confirmed. */
export class L2 extends Context.Service<L2, { readonly level: 2 }>()("ugent/Trust/L2") {}
/** The capability to run any tool without confirmation. */
export class L3 extends Context.Service<L3, { readonly level: 3 }>()("ugent/Trust/L3") {}

export type Capability = L0 | L1 | L2 | L3
export type WriteCapability = L1 | L2 | L3

/** The capability service of a level, as a type. */
export type CapabilityOf<L extends TrustLevel> = L extends 0 ? L0 : L extends 1 ? L1 : L extends 2 ? L2 : L3

export const capabilityKeys = [L0, L1, L2, L3] as const

/** The capabilities of levels `0..level`, as a context. */
export const contextUpTo = (level: TrustLevel): Context.Context<never> => {
  let ctx = Context.make(L0, L0.of({ level: 0 })) as Context.Context<Capability>
  if (level >= 1) ctx = Context.add(ctx, L1, L1.of({ level: 1 }))
  if (level >= 2) ctx = Context.add(ctx, L2, L2.of({ level: 2 }))
  if (level >= 3) ctx = Context.add(ctx, L3, L3.of({ level: 3 }))
  // The context holds capabilities only; callers type it by the level they asked for.
  return ctx as Context.Context<never>
}
