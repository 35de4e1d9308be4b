import { mergeConfig } from "vitest/config"
import { sharedConfig } from "../../vitest.shared.js"

// The domain is pure: its test files share one module graph (loading Effect once per worker, not per file),
// which about halves the suite's CPU. Nothing of one file can reach another's: no process-wide state here.
export default mergeConfig(sharedConfig, { test: { isolate: false } })
