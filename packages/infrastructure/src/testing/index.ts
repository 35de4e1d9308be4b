export { eventually } from "./eventually.js"
export { lockWaiters } from "./lock-waiters.js"
export { TEST_SERVER_URL_VARIABLE, testDatabase } from "./test-database.js"
