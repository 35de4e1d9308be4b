export * from "./housekeeping.js"
