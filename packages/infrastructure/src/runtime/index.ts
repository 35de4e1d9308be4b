export * from "./log-level.js"
export * from "./round-queue.js"
export * from "./run-service.js"
export * from "./write-side.js"
