// RFC 6750 2.1: `Bearer` (any case), one or more spaces, then a b64token. The platform's own bearer decoding
// only drops the first seven characters, whatever they are, so `Token: <token>` would pass as a bearer.
const BEARER = /^bearer +([A-Za-z0-9\-._~+/]+=*) *$/i

/** What an Authorization header holds, as RFC 6750 reads it. */
export type BearerCredentials =
  | { readonly _tag: "Absent" }
  | { readonly _tag: "Malformed" }
  | { readonly _tag: "Token"; readonly token: string }

/** Reads a request's Authorization header as bearer credentials. */
export const bearerCredentialsOf = (authorization: string | undefined): BearerCredentials => {
  if (authorization === undefined || authorization.trim() === "") return { _tag: "Absent" }
  const token = BEARER.exec(authorization)?.[1]
  return token === undefined ? { _tag: "Malformed" } : { _tag: "Token", token }
}

/**
 * The `WWW-Authenticate` challenge of a refusal: no error code when the request carried no credentials
 * (RFC 6750 3.1), `invalid_token` when it carried bad ones.
 */
export const bearerChallenge = (credentials: BearerCredentials) =>
  credentials._tag === "Absent" ? 'Bearer realm="points"' : 'Bearer realm="points", error="invalid_token"'
