import { defineConfig, mergeConfig } from "vitest/config"
import { sharedConfig } from "../../vitest.shared.js"

export default mergeConfig(
  sharedConfig,
  defineConfig({
    test: {
      globalSetup: ["./src/testing/global-setup.ts"],
      testTimeout: 60_000,
      hookTimeout: 120_000,
      // Each file builds its own layers over a fresh database of its own, so its files can share one module
      // graph per worker (Effect, pg and the sources loaded once, not per file): ~3x less time collecting, the
      // suite 226 s -> 76 s alone. What is process-wide (metric registries) tests read as deltas.
      isolate: false,
    },
  }),
)
