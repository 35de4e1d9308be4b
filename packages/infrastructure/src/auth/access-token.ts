import { createHash, randomBytes } from "node:crypto"

/** What every access token starts with, so a leaked one is recognisable (secret scanners, logs). */
export const ACCESS_TOKEN_PREFIX = "pos_at_"

/** The shape of a token this platform issues: the prefix and 32 random bytes, base64url without padding. */
const tokenShape = /^pos_at_[A-Za-z0-9_-]{43}$/

/** A fresh opaque access token (256 bits of entropy). */
export const newAccessToken = (): string => `${ACCESS_TOKEN_PREFIX}${randomBytes(32).toString("base64url")}`

/** True when the text has the shape of a token we issue; anything else is refused without a lookup. */
export const isAccessTokenShaped = (text: string): boolean => tokenShape.test(text)

/**
 * The SHA-256 (hex) under which a token is stored and looked up. A fast hash suffices: the token is 256
 * random bits, not a password, so the table leaks nothing usable and no slow hash is needed on every request.
 */
export const accessTokenHash = (token: string): string =>
  createHash("sha256").update(token, "utf8").digest("hex")
