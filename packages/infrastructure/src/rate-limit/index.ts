export * from "./coalesced-rate-limit.js"
export * from "./consume-rate-limit.js"
export * from "./rate-limit-policy.js"
export * from "./reap-idle-rate-limits.js"
