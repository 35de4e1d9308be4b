import type { SqlClient, SqlError } from "@effect/sql"
import { expect } from "@effect/vitest"
import { InvalidClientCredentials, InvalidToken, type InvalidTokenReason } from "@points/domain"
import { Context, Effect, Layer, Option } from "effect"
import {
  type BearerLookup,
  type BearerTokenCacheOptions,
  BearerTokens,
  createPartner,
  type InlineProjection,
  type IssuedCredential,
  issueCredential,
  type LogNotifier,
} from "../../src/index.js"
import { refusedWith } from "../services/service-fixtures.js"

/** The token lifetime of the auth tests: long enough never to expire during one. */
export const ttl = { ttlSeconds: 3600 }

/** The client id and secret of an issued credential, as a token request sends them. */
export const credentialsOf = (issued: IssuedCredential) => ({
  client_id: issued.client_id,
  client_secret: issued.client_secret,
})

/** A new partner with one client credential. */
export const newClient: Effect.Effect<
  {
    readonly partnerId: string
    readonly issued: IssuedCredential
    readonly credentials: ReturnType<typeof credentialsOf>
  },
  unknown,
  SqlClient.SqlClient | InlineProjection | LogNotifier
> = Effect.gen(function* () {
  const partner = yield* createPartner({ name: "Acme" })
  const issued = yield* issueCredential(partner.id, { name: "backend" })
  return { partnerId: partner.id, issued, credentials: credentialsOf(issued) }
})

/** Asserts a refusal is GH1001 (bad client credentials). */
export const invalidClient = refusedWith(InvalidClientCredentials, "GH1001")

/** Asserts a refusal is GH1003 for this reason. */
export const invalidToken = (reason: InvalidTokenReason) => (error: unknown) => {
  refusedWith(InvalidToken, "GH1003")(error)
  expect((error as InvalidToken).reason).toBe(reason)
}

/**
 * A process's bearer tokens: a cache of its own with these options, on the test's database, its tokens looked
 * up as `lookupBy` says (the database's lookup unless given).
 */
export const bearerTokensWith = (
  options: BearerTokenCacheOptions,
  lookupBy?: (
    tokenHash: string,
  ) => Effect.Effect<BearerLookup, InvalidToken | SqlError.SqlError, SqlClient.SqlClient>,
) => Effect.map(Layer.build(BearerTokens.layer(options, lookupBy)), Context.get(BearerTokens))

/** The principal a process holds its token as valid for now, if any (nothing looked up). */
export const heldPrincipal = (tokens: BearerTokens["Type"], token: string) =>
  Effect.map(tokens.held(token), (held) =>
    held._tag === "Held" ? Option.some(held.principal) : Option.none(),
  )
