import type { GitBackendShape } from "../GitBackend.ts"
export const makeIsomorphic = (): GitBackendShape => {
  throw new Error("todo")
}
