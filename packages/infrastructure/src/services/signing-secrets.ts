import { randomBytes } from "node:crypto"
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * A fresh webhook signing secret as Standard Webhooks defines it: `whsec_` and the base64 of 32 random bytes
 * (the form the `standardwebhooks` libraries take). Shown to the partner on create and rotate only.
 */
export const newSigningSecret = (): string => `whsec_${randomBytes(32).toString("base64")}`

/**
 * Stores a signing secret under its id, in the caller's transaction: the only place the value lives (events
 * and read models carry its id). Kept after a rotation (the old one signs during its grace period).
 */
export const storeSigningSecret = (row: {
  readonly id: string
  readonly partnerId: string
  readonly endpointId: string
  readonly secret: string
}) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql`INSERT INTO webhook_signing_secrets (id, partner_id, endpoint_id, secret)
                 VALUES (${row.id}, ${row.partnerId}, ${row.endpointId}, ${row.secret})`,
  ).pipe(Effect.asVoid)
