import { routedPath } from "./routed-path.js"

// Create (whose list shares the path) and rotate-secret; `[^/]+` also matches the document's `{endpoint_id}`
// (`%7Bendpoint_id%7D` once routed).
const signingSecretPaths = /^\/api\/webhooks\/endpoints(?:\/[^/]+\/rotate-secret)?$/

/**
 * True for the webhook endpoint paths whose answers may show a signing secret: every answer there, first or
 * replayed, carries `Cache-Control: no-store` and `Pragma: no-cache`, as the token endpoints' do. Read as the
 * router reads the path: `/api/webhooks/%65ndpoints` is Create too.
 */
export const answersSigningSecret = (path: string): boolean => signingSecretPaths.test(routedPath(path))
