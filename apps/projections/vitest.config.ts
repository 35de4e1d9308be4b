import { defineConfig, mergeConfig } from "vitest/config"
import { sharedConfig } from "../../vitest.shared.js"

export default mergeConfig(
  sharedConfig,
  defineConfig({
    test: {
      globalSetup: ["../../packages/infrastructure/src/testing/global-setup.ts"],
      testTimeout: 60_000,
      hookTimeout: 120_000,
    },
  }),
)
