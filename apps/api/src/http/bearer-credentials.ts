// RFC 6750 2.1: `Bearer` (any case), one or more spaces, then a b64token. The platform's own bearer decoding
// only drops the first seven characters, whatever they are, so `Token: <token>` would pass as a bearer.
const BEARER = /^bearer +([A-Za-z0-9\-._~+/]+=*) *$/i

/** What an Authorization header holds, as RFC 6750 reads it. */
export type BearerCredentials =
  | { readonly _tag: "Absent" }
  | { readonly _tag: "OtherScheme" }
  | { readonly _tag: "Malformed" }
  | { readonly _tag: "Token"; readonly token: string }

/** Reads a request's Authorization header as bearer credentials. */
export const bearerCredentialsOf = (authorization: string | undefined): BearerCredentials => {
  if (authorization === undefined || authorization.trim() === "") return { _tag: "Absent" }
  const token = BEARER.exec(authorization)?.[1]
  if (token !== undefined) return { _tag: "Token", token }
  const scheme = authorization.trim().split(/[ \t]/, 1)[0] ?? ""
  return scheme.toLowerCase() === "bearer" ? { _tag: "Malformed" } : { _tag: "OtherScheme" }
}

/**
 * The `WWW-Authenticate` challenge of a refusal: `invalid_token` when the request carried a bearer token that
 * is bad, no error code when it carried none, not even under another scheme (RFC 6750 3.1: a request that
 * "attempted using an unsupported authentication method" lacks authentication information).
 */
export const bearerChallenge = (credentials: BearerCredentials) =>
  credentials._tag === "Token" || credentials._tag === "Malformed"
    ? 'Bearer realm="points", error="invalid_token"'
    : 'Bearer realm="points"'
