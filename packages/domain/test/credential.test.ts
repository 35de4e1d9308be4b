import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, TestClock } from "effect"
import { AlreadyClosed, ClientCredential, ClientId, ResourceNotFound } from "../src/index.js"
import { checkCatalogRoundTrip, DeciderSpecification, replay } from "../src/testing/index.js"
import { epoch, partnerId } from "./fixtures.js"
import { second } from "./idempotency-fixtures.js"

const { decider, SecretHash } = ClientCredential
const spec = DeciderSpecification.for(decider)
const clientId = ClientId.make("01936b2e-0000-7000-8000-0000000000c1")
const first = SecretHash.make("$argon2id$v=19$m=19456,t=2,p=1$c2FsdC1vbmU$aGFzaC1vbmU")
const second_ = SecretHash.make("$argon2id$v=19$m=19456,t=2,p=1$c2FsdC10d28$aGFzaC10d28")
const third = SecretHash.make("$argon2id$v=19$m=19456,t=2,p=1$c2FsdC10aHJlZQ$aGFzaC10aHJlZQ")
const DAY = 86_400

const issued = ClientCredential.CredentialIssued.make({
  clientId,
  partnerId,
  name: "checkout service",
  secretHash: first,
  at: epoch,
})
const rotated = (at: number, secretHash = second_, previousSecretHash = first, grace = DAY) =>
  ClientCredential.SecretRotated.make({
    clientId,
    secretHash,
    previousSecretHash,
    previousValidUntil: second(at + grace),
    at: second(at),
  })
const revoked = ClientCredential.CredentialRevoked.make({ clientId, at: epoch })
const rotate = (secretHash = second_, gracePeriodSeconds = DAY) =>
  ClientCredential.RotateSecret.make({ clientId, secretHash, gracePeriodSeconds })
const revoke = ClientCredential.RevokeCredential.make({ clientId })
const wait = (seconds: number) => TestClock.adjust(Duration.seconds(seconds))

describe("Client credential", () => {
  it.effect("issues a credential with the hash of its first secret", () =>
    spec
      .given([])
      .when(
        ClientCredential.IssueCredential.make({
          clientId,
          partnerId,
          name: "checkout service",
          secretHash: first,
        }),
      )
      .then([issued]),
  )

  it.effect("a second issue of one client id is a bug, not a retry", () =>
    Effect.gen(function* () {
      const issue = ClientCredential.IssueCredential.make({
        clientId,
        partnerId,
        name: null,
        secretHash: third,
      })
      yield* spec.given([issued]).when(issue).thenBreaksInvariant()
    }),
  )

  it.effect("rotates the secret; the old one stays accepted for the grace period only", () =>
    Effect.gen(function* () {
      yield* wait(60)
      yield* spec
        .given([issued])
        .when(rotate())
        .then([rotated(60)])
      const state = replay(decider, [issued, rotated(60)])
      expect(ClientCredential.acceptedSecretHashes(state, second(60))).toEqual([second_, first])
      expect(ClientCredential.acceptedSecretHashes(state, second(60 + DAY - 1))).toEqual([second_, first])
      expect(ClientCredential.acceptedSecretHashes(state, second(60 + DAY))).toEqual([second_])
    }),
  )

  it.effect(
    "a rotation within a grace period drops the oldest secret; a zero grace drops the old one at once",
    () =>
      Effect.gen(function* () {
        yield* wait(120)
        yield* spec
          .given([issued, rotated(60)])
          .when(rotate(third))
          .then([rotated(120, third, second_)])
        const state = replay(decider, [issued, rotated(60), rotated(120, third, second_)])
        expect(ClientCredential.acceptedSecretHashes(state, second(121))).toEqual([third, second_])
        const immediate = replay(decider, [issued, rotated(60, second_, first, 0)])
        expect(ClientCredential.acceptedSecretHashes(immediate, second(60))).toEqual([second_])
      }),
  )

  it.effect("revokes a credential; none of its secrets is accepted any more", () =>
    Effect.gen(function* () {
      yield* spec
        .given([issued, rotated(0)])
        .when(revoke)
        .then([revoked])
      const state = replay(decider, [issued, rotated(0), revoked])
      expect(ClientCredential.acceptedSecretHashes(state, epoch)).toEqual([])
      expect(ClientCredential.acceptedSecretHashes(decider.initialState, epoch)).toEqual([])
    }),
  )

  it.effect("a revoked credential takes no rotation and no second revocation (LE0004)", () =>
    Effect.gen(function* () {
      const closed = new AlreadyClosed({ resource: "client", id: clientId })
      yield* spec.given([issued, revoked]).when(rotate()).thenFails(closed)
      yield* spec.given([issued, revoked]).when(revoke).thenFails(closed)
      expect(closed.code).toBe("LE0004")
      expect(closed.message).toBe("client is already closed")
    }),
  )

  it.effect("an unknown credential is LE0002", () =>
    Effect.gen(function* () {
      const notFound = new ResourceNotFound({ resource: "client", id: clientId })
      yield* spec.given([]).when(rotate()).thenFails(notFound)
      yield* spec.given([]).when(revoke).thenFails(notFound)
      expect(notFound.code).toBe("LE0002")
      expect(notFound.message).toBe("client not found")
    }),
  )

  it("refuses an impossible stream while replaying it", () => {
    expect(() => replay(decider, [rotated(0)])).toThrow("SecretRotated before CredentialIssued")
    expect(() => replay(decider, [issued, revoked, rotated(0)])).toThrow("on a revoked credential")
  })

  it.effect("events round-trip through the store", () =>
    checkCatalogRoundTrip(ClientCredential.credentialEvents),
  )
})
