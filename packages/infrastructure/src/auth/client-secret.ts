import { randomBytes } from "node:crypto"
import { ClientCredential } from "@points/domain"
import { Effect } from "effect"
import { argon2id, argon2Verify } from "hash-wasm"

/** What every client secret starts with, so a leaked one is recognisable (secret scanners, logs). */
export const CLIENT_SECRET_PREFIX = "pos_cs_"

/**
 * Argon2id at OWASP's minimum recommendation (Password Storage Cheat Sheet): 19 MiB of memory, 2 iterations,
 * 1 lane. About 85-100 ms per hash on this machine, and it runs on the calling thread (hash-wasm is
 * WebAssembly), so it is done outside any transaction.
 */
export const ARGON2_PARAMETERS = {
  memorySize: 19_456, // KiB = 19 MiB
  iterations: 2,
  parallelism: 1,
  hashLength: 32,
} as const

/** The salt of each hash: 16 random bytes, as RFC 9106 recommends. */
const SALT_BYTES = 16

/** A fresh client secret: the prefix and 32 random bytes, base64url (256 bits of entropy). */
export const newClientSecret = (): string => `${CLIENT_SECRET_PREFIX}${randomBytes(32).toString("base64url")}`

/** The encoded Argon2id hash (`$argon2id$v=19$m=19456,t=2,p=1$salt$hash`) of a secret, the only form stored. */
export const hashClientSecret = (secret: string): Effect.Effect<ClientCredential.SecretHash> =>
  Effect.map(
    Effect.promise(() =>
      argon2id({
        ...ARGON2_PARAMETERS,
        password: secret,
        salt: randomBytes(SALT_BYTES),
        outputType: "encoded",
      }),
    ),
    (encoded) => ClientCredential.SecretHash.make(encoded),
  )

/**
 * True when the secret is the one hashed; the parameters are read from the encoded hash. An empty secret is
 * never the one: Argon2 (hash-wasm) refuses an empty password, so the bare prefix is checked in its place,
 * that it costs what any wrong secret costs (no secret we issue is empty or the bare prefix), and is refused.
 */
export const verifyClientSecret = (secret: string, hash: string): Effect.Effect<boolean> =>
  secret === ""
    ? Effect.as(
        Effect.promise(() => argon2Verify({ password: CLIENT_SECRET_PREFIX, hash })),
        false,
      )
    : Effect.promise(() => argon2Verify({ password: secret, hash }))

/**
 * A hash, with the same parameters as every real one, of a random secret that was thrown away. Checking a
 * secret against it when the client id is unknown (or revoked) costs what a real check costs, so the time of
 * an answer does not tell which client ids exist; its result is ignored.
 */
export const UNKNOWN_CLIENT_HASH =
  "$argon2id$v=19$m=19456,t=2,p=1$Q9kc+V188X2issP9iRNx1w$BV337srKDomS9FyyZv6jM3/jil9D8ec/9601ropAHxU"
