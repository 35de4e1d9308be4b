/** The value of the `Api-Version` header on every response. */
export const API_VERSION = "2025-01-01"
