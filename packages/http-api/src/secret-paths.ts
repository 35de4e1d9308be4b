// Create (whose list shares the path) and rotate-secret; `[^/]+` also matches the document's `{endpoint_id}`.
const signingSecretPaths = /^\/api\/webhooks\/endpoints(?:\/[^/]+\/rotate-secret)?$/

/**
 * True for the webhook endpoint paths whose answers may show a signing secret: every answer there, first or
 * replayed, carries `Cache-Control: no-store` and `Pragma: no-cache`, as the token endpoints' do.
 */
export const answersSigningSecret = (path: string): boolean => signingSecretPaths.test(path)
