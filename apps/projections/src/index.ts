export * from "./config.js"
export * from "./projections.js"
