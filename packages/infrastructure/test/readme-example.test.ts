// The example of README.md, kept here so that it compiles and runs: readme.test.ts checks that the README
// shows the region verbatim, so the documentation cannot drift from what works.
// #region services-in-a-test
import { expect, layer } from "@effect/vitest"
import { Email, PartnerId, PartnerUserId, Points, ReferenceId } from "@points/domain"
import {
  addPoints,
  createPartner,
  getPointsAccountResource,
  registerUser,
  USER_ACTIVATION_CONSUMER,
  UserActivationLive,
  WriteSideLive,
  waitUntilCaughtUp,
} from "@points/infrastructure"
import { testDatabase } from "@points/infrastructure/testing"
import { Effect, Layer } from "effect"

// A fresh database for this file, the write side (inline read models, NOTIFY after commits, the write
// batcher, the process's LISTEN connection) and the consumer that activates new users.
const services = UserActivationLive.pipe(
  Layer.provideMerge(WriteSideLive),
  Layer.provideMerge(testDatabase()),
)

// The real clock (excludeTestServices): the consumer and the write batcher wait in real time.
layer(services, { excludeTestServices: true })("a welcome bonus", (it) => {
  it.effect("credits a new user once the activation consumer has made it active", () =>
    Effect.gen(function* () {
      const partner = yield* createPartner({ name: "Acme" })
      // Resources carry plain strings: a service's context takes the branded id.
      const context = { partnerId: PartnerId.make(partner.id), requestId: "req-1", idempotencyKey: null }
      const user = yield* registerUser(context, {
        partner_user_id: PartnerUserId.make("crm-1"),
        email: Email.make("ada@example.com"),
      })
      expect(user.status).toBe("processing") // it takes no points yet (LE0001)
      yield* waitUntilCaughtUp(USER_ACTIVATION_CONSUMER, "head", "10 seconds")
      const added = yield* addPoints(context, {
        user_id: user.id,
        amount: Points.make(500),
        reference_id: ReferenceId.make("welcome-bonus"),
      })
      expect(added.balance_after).toBe(500)
      expect((yield* getPointsAccountResource(context, user.id)).balance).toBe(500)
    }),
  )
})
// #endregion services-in-a-test
