/**
 * Which wrappers have taken a call id. The claims are kept per `Option` value
 * that `Traced.CallId` holds (each `Option.some` is a fresh object), so every
 * fiber under one provision of the id, children and siblings alike, shares
 * them: the first traced call to start takes the id as its trace id, the
 * first audited call as its call id, and every later one makes its own. Ids
 * stay unique however the wrappers nest, run in parallel or retry.
 *
 * @internal
 */
import { Option } from "effect"

interface Claims {
  traced: boolean
  audited: boolean
}

const claims = new WeakMap<Option.Option<string>, Claims>()

/** The call id, if it is set and `by` has not taken it yet (and now takes it). */
export const claim = (callId: Option.Option<string>, by: keyof Claims): string | undefined => {
  if (Option.isNone(callId)) return undefined
  let found = claims.get(callId)
  if (found === undefined) {
    found = { traced: false, audited: false }
    claims.set(callId, found)
  }
  if (found[by]) return undefined
  found[by] = true
  return callId.value
}
