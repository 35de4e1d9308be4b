import { describe, expect, it } from "@effect/vitest"
import { DateTime, Duration, Effect, TestClock } from "effect"
import {
  AlreadyClosed,
  Email,
  PartnerUserId,
  ResourceNotFound,
  User,
  UserBeingProcessed,
} from "../src/index.js"
import { DeciderSpecification, replay } from "../src/testing/index.js"
import { epoch, partnerId, userId } from "./fixtures.js"
import { accountId } from "./ledger-fixtures.js"

const spec = DeciderSpecification.for(User.decider)
const email = Email.make("ada@example.com")
const registered = User.UserRegistered.make({
  userId,
  partnerId,
  partnerUserId: PartnerUserId.make("p-1"),
  email,
  name: "Ada",
  at: epoch,
})
const activated = User.UserActivated.make({ userId, at: epoch })
const closed = User.UserClosed.make({ userId, at: epoch })
const linked = User.PointsAccountLinked.make({ userId, accountId, at: epoch })

describe("User", () => {
  it.effect("registers a user as processing, stamped with the clock", () =>
    Effect.gen(function* () {
      yield* TestClock.adjust(Duration.seconds(5))
      yield* spec
        .given([])
        .when(
          User.RegisterUser.make({
            userId,
            partnerId,
            partnerUserId: PartnerUserId.make("p-1"),
            email,
            name: "Ada",
          }),
        )
        .then([User.UserRegistered.make({ ...registered, at: DateTime.unsafeMake(5000) })])
    }),
  )

  it.effect("activates a processing user once; a redelivered activation changes nothing", () =>
    Effect.gen(function* () {
      yield* spec.given([registered]).when(User.ActivateUser.make({ userId })).then([activated])
      yield* spec.given([registered, activated]).when(User.ActivateUser.make({ userId })).thenNothingHappens()
    }),
  )

  it.effect("refuses writes while the user is being processed (LE0001)", () =>
    Effect.gen(function* () {
      yield* spec
        .given([registered])
        .when(User.UpdateUser.make({ userId, name: "Grace" }))
        .thenFails(new UserBeingProcessed({ userId }))
      yield* spec
        .given([registered])
        .when(User.CloseUser.make({ userId }))
        .thenFails(new UserBeingProcessed({ userId }))
    }),
  )

  it.effect("updates only what changed, and nothing when nothing changed", () =>
    Effect.gen(function* () {
      yield* spec
        .given([registered, activated])
        .when(User.UpdateUser.make({ userId, name: null }))
        .then([User.UserDetailsChanged.make({ userId, email, name: null, at: epoch })])
      yield* spec
        .given([registered, activated])
        .when(User.UpdateUser.make({ userId, email, name: "Ada" }))
        .thenNothingHappens()
    }),
  )

  it.effect("closes an active user; a second close is LE0004, as is an update", () =>
    Effect.gen(function* () {
      yield* spec.given([registered, activated]).when(User.CloseUser.make({ userId })).then([closed])
      yield* spec
        .given([registered, activated, closed])
        .when(User.CloseUser.make({ userId }))
        .thenFails(new AlreadyClosed({ resource: "user", id: userId }))
      yield* spec
        .given([registered, activated, closed])
        .when(User.UpdateUser.make({ userId, name: "x" }))
        .thenFails(new AlreadyClosed({ resource: "user", id: userId }))
    }),
  )

  it.effect("names the user's new points account once, as a change of the user (its version grows)", () =>
    Effect.gen(function* () {
      const openedAt = DateTime.unsafeMake(9000)
      yield* spec
        .given([registered, activated])
        .when(User.LinkPointsAccount.make({ userId, accountId, openedAt }))
        .then([User.PointsAccountLinked.make({ userId, accountId, at: openedAt })])
      const before = replay(User.decider, [registered, activated])
      const after = replay(User.decider, [registered, activated, linked])
      expect(before._tag === "Registered" && before.pointsAccountId).toBeNull()
      expect(after).toMatchObject({ pointsAccountId: accountId, version: 3, updatedAt: epoch })
      // A second link (a concurrent opening read the user after the first committed) changes nothing.
      yield* spec
        .given([registered, activated, linked])
        .when(User.LinkPointsAccount.make({ userId, accountId, openedAt: epoch }))
        .thenNothingHappens()
      yield* spec
        .given([registered])
        .when(User.LinkPointsAccount.make({ userId, accountId, openedAt: epoch }))
        .thenFails(new UserBeingProcessed({ userId }))
    }),
  )

  it.effect("answers LE0002 for a user that does not exist", () =>
    spec
      .given([])
      .when(User.CloseUser.make({ userId }))
      .thenFails(new ResourceNotFound({ resource: "user", id: userId })),
  )
})
