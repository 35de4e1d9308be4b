export * from "./consume-rate-limit.js"
export * from "./rate-limit-policy.js"
