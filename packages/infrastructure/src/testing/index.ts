export { TEST_SERVER_URL_VARIABLE, testDatabase } from "./test-database.js"
