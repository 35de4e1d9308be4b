export * from "./log-level.js"
export * from "./run-service.js"
