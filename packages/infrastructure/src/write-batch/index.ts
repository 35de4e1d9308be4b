export * from "./batch-metrics.js"
export { type BatchEntry, type BatchResult, runAlone, runBatch } from "./run-batch.js"
export * from "./write-batcher.js"
