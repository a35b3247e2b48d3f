// Optional peer dependencies (PostgreSQL, Redis) are imported on first use:
// a deployment that does not use them neither loads them nor needs them
// installed, and one that needs a missing one is told which package to add.
import { Effect } from "effect"

const isMissing = (error: unknown, pkg: string): boolean => {
  const e = error as { code?: unknown; message?: unknown }
  return (
    (e.code === "ERR_MODULE_NOT_FOUND" || e.code === "MODULE_NOT_FOUND") &&
    typeof e.message === "string" &&
    e.message.includes(`'${pkg}'`)
  )
}

/**
 * Runs `load` (a dynamic `import()` written at the call site, so bundlers
 * see it); a missing `pkg` fails with one line that names it.
 */
export const importOptional = <M>(pkg: string, feature: string, load: () => Promise<M>): Effect.Effect<M, Error> =>
  Effect.tryPromise({
    try: load,
    catch: (error) =>
      isMissing(error, pkg)
        ? new Error(`${feature} needs the optional package ${pkg}: install it with npm install ${pkg}`)
        : error instanceof Error
          ? error
          : new Error(String(error))
  })
