export * from "./batch-metrics.js"
export { type BatchEntry, type BatchResult, inProgress, runAlone, runBatch } from "./run-batch.js"
export * from "./write-batcher.js"
