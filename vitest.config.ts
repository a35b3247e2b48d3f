import { defineConfig } from "vitest/config"

/**
 * Inside the repository every package runs from its TypeScript sources: the
 * `@ugent/source` export condition points each package at `src/`, for the
 * tests (Vite's resolver) and for the processes they start (Node, through
 * NODE_OPTIONS, which children inherit).
 */
const source = "@ugent/source"
if (!(process.env.NODE_OPTIONS ?? "").includes(`--conditions=${source}`)) {
  process.env.NODE_OPTIONS = `${process.env.NODE_OPTIONS ?? ""} --conditions=${source}`.trim()
}

export default defineConfig({
  ssr: { resolve: { conditions: [source, "module", "node", "development|production"] } },
  test: {
    include: ["packages/*/test/**/*.test.ts", "laws/test/**/*.test.ts", "test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000
  }
})
