/**
 * The channel a revocation NOTIFYs with each revoked token's hash (sent at its commit), so that every API
 * process forgets the token at once instead of honouring it until its cache entry ends.
 */
export const REVOKED_TOKENS_CHANNEL = "points_tokens_revoked"
