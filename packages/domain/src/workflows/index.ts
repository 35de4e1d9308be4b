export * from "./cancel-order.js"
export * from "./close-user.js"
export * from "./fail-order.js"
export * from "./place-order.js"
