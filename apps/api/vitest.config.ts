import { defineConfig, mergeConfig } from "vitest/config"
import { sharedConfig } from "../../vitest.shared.js"

export default mergeConfig(
  sharedConfig,
  defineConfig({
    test: {
      globalSetup: ["../../packages/infrastructure/src/testing/global-setup.ts"],
      testTimeout: 60_000,
      hookTimeout: 120_000,
      // Each file serves its own API over a fresh database of its own, so its files can share one module graph
      // per worker (Effect, the platform and the sources loaded once, not per file): the suite 271 s -> 197 s
      // alone. The metric registry is the process's: tests read it as deltas.
      isolate: false,
    },
  }),
)
