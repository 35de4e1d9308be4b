import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto"
import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"

/**
 * What a cursor carries of its page's read is sealed (AES-256-GCM, bound to the cursor's list and row): the
 * database's transaction numbers in it count every write of the platform, every partner's, which a partner
 * must not read off its cursors; and a cursor edited by hand is refused instead of read. The key is the
 * database's (`cursor_secrets`, made by migration 0021), so every process of the platform opens every cursor.
 */
const IV_BYTES = 12
const TAG_BYTES = 16

// One key per database, read once per SqlClient (a process may serve more than one database: tests do).
const keys = new WeakMap<object, Buffer>()

/** The database's cursor key. */
export const cursorSecret = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const known = keys.get(sql)
  if (known !== undefined) return known
  const rows = yield* sql<{ readonly secret: Buffer }>`SELECT secret FROM cursor_secrets WHERE id = 1`
  const secret = rows[0]?.secret
  if (secret === undefined || secret.length !== 32)
    return yield* Effect.dieMessage("cursor_secrets holds no key")
  keys.set(sql, secret)
  return secret
})

/** `text` sealed for a cursor of `context` (its list and row): base64url of nonce, ciphertext and tag. */
export const sealForCursor = (secret: Buffer, context: string, text: string): string => {
  const iv = randomBytes(IV_BYTES)
  const cipher = createCipheriv("aes-256-gcm", secret, iv)
  cipher.setAAD(Buffer.from(context, "utf8"))
  const sealed = Buffer.concat([cipher.update(text, "utf8"), cipher.final()])
  return Buffer.concat([iv, sealed, cipher.getAuthTag()]).toString("base64url")
}

/** What a cursor of `context` sealed, when the token is one this database sealed for it (none otherwise). */
export const openCursorSeal = (secret: Buffer, context: string, token: string): Option.Option<string> => {
  const bytes = Buffer.from(token, "base64url")
  if (bytes.length < IV_BYTES + TAG_BYTES) return Option.none()
  try {
    const decipher = createDecipheriv("aes-256-gcm", secret, bytes.subarray(0, IV_BYTES))
    decipher.setAAD(Buffer.from(context, "utf8"))
    decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES))
    const text = Buffer.concat([
      decipher.update(bytes.subarray(IV_BYTES, bytes.length - TAG_BYTES)),
      decipher.final(),
    ])
    return Option.some(text.toString("utf8"))
  } catch {
    return Option.none()
  }
}

/** A new cursor key, for the migration that stores it. */
export const newCursorSecret = (): Buffer => randomBytes(32)
