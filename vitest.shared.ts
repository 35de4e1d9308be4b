import { defineConfig } from "vitest/config"

/** Shared vitest settings: resolve workspace packages to their TypeScript sources. */
export const sharedConfig = defineConfig({
  // vitest 3.2 on vite 7 runs node tests in the SSR environment, so the condition must be set there,
  // and setting it replaces vite's defaults, which are re-added here.
  ssr: { resolve: { conditions: ["@points/source", "module", "node", "development|production"] } },
  resolve: { conditions: ["@points/source"] },
  // Logs of passing tests (access-log lines, consumers) are noise; a failing test still shows its own.
  test: { include: ["test/**/*.test.ts", "*.test.ts"], testTimeout: 30_000, silent: "passed-only" },
})
