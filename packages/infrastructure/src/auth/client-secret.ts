import { randomBytes } from "node:crypto"
import { type Algorithm, hash as argon2Hash, verify as argon2Verify } from "@node-rs/argon2"
import { ClientCredential } from "@points/domain"
import { Effect, Metric } from "effect"

/** What every client secret starts with, so a leaked one is recognisable (secret scanners, logs). */
export const CLIENT_SECRET_PREFIX = "pos_cs_"

/**
 * Argon2id at OWASP's minimum recommendation (Password Storage Cheat Sheet): 19 MiB of memory, 2 iterations,
 * 1 lane; ~40-100 ms per hash on this machine. @node-rs/argon2 (the reference implementation, native) runs it
 * on libuv's thread pool: the event loop goes on serving requests meanwhile. (hash-wasm, used before, ran it
 * on the event loop itself: a dozen token requests with made-up client ids a second stalled every request.)
 * It is done outside any transaction.
 */
export const ARGON2_PARAMETERS = {
  // `Algorithm.Argon2id`: the package's enum is an ambient const enum, which isolated modules cannot read.
  algorithm: 2 satisfies Algorithm.Argon2id as Algorithm,
  memoryCost: 19_456, // KiB = 19 MiB
  timeCost: 2,
  parallelism: 1,
  outputLen: 32,
} as const

/** A fresh client secret: the prefix and 32 random bytes, base64url (256 bits of entropy). */
export const newClientSecret = (): string => `${CLIENT_SECRET_PREFIX}${randomBytes(32).toString("base64url")}`

/**
 * The encoded Argon2id hash (`$argon2id$v=19$m=19456,t=2,p=1$salt$hash`, a 16-byte random salt as RFC 9106
 * recommends) of a secret, the only form stored.
 */
export const hashClientSecret = (secret: string): Effect.Effect<ClientCredential.SecretHash> =>
  Effect.map(
    Effect.promise(() => argon2Hash(secret, ARGON2_PARAMETERS)),
    (encoded) => ClientCredential.SecretHash.make(encoded),
  )

/**
 * True when the secret is the one hashed (an empty one never is); the parameters are read from the encoded
 * hash, so every check costs what the hash's parameters cost.
 */
export const verifyClientSecret = (secret: string, hash: string): Effect.Effect<boolean> =>
  Effect.zipLeft(
    Effect.promise(() => argon2Verify(hash, secret)),
    Metric.increment(clientSecretChecks),
  )

/**
 * Argon2id checks of client secrets made (`client_secret_checks_total` on /metrics): one per token or
 * revocation request, whatever its client id or secret (an unknown client's against UNKNOWN_CLIENT_HASH);
 * two when a secret is checked against the replaced one too, during a rotation's grace period.
 */
export const clientSecretChecks = Metric.counter("client_secret_checks_total", {
  description:
    "Argon2id checks of client secrets: one per token or revocation request, known client or not (two during a rotation's grace period).",
  incremental: true,
})

/**
 * A hash, with the same parameters as every real one, of a random secret that was thrown away. Checking a
 * secret against it when the client id is unknown (or revoked) costs what a real check costs, so the time of
 * an answer does not tell which client ids exist; its result is ignored.
 */
export const UNKNOWN_CLIENT_HASH =
  "$argon2id$v=19$m=19456,t=2,p=1$Q9kc+V188X2issP9iRNx1w$BV337srKDomS9FyyZv6jM3/jil9D8ec/9601ropAHxU"
