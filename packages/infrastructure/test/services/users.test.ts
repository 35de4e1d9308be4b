import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { AlreadyClosed, Email, InvalidParams, PartnerUserId, UserBeingProcessed } from "@points/domain"
import { Effect } from "effect"
import { uuidv4 as uuidV4 } from "uuidv7"
import {
  activateUsersHandler,
  addPoints,
  closeUser,
  getPointsAccountResource,
  getUserResource,
  listUsers,
  openPointsAccount,
  readStream,
  registerUser,
  runConsumer,
  USER_ACTIVATION_CONSUMER,
  updateUser,
  userStream,
  waitUntilCaughtUp,
} from "../../src/index.js"
import { newId } from "../fixtures.js"
import {
  activeUser,
  movement,
  newPartner,
  notFound,
  processingUser,
  refusedWith,
  serviceDatabase,
} from "./service-fixtures.js"

layer(serviceDatabase(), { excludeTestServices: true })("user services", (it) => {
  describe("registerUser", () => {
    it.effect("answers the user as processing, exactly as the GET does, and records who asked", () =>
      Effect.gen(function* () {
        const context = yield* newPartner()
        const user = yield* registerUser(context, {
          partner_user_id: PartnerUserId.make("crm-1"),
          email: Email.make("ada@example.com"),
        })
        expect(user).toMatchObject({
          partner_user_id: "crm-1",
          email: "ada@example.com",
          name: null,
          status: "processing",
          points_account_id: null,
          version: 1,
        })
        expect(yield* getUserResource(context, user.id)).toEqual(user)
        const read = yield* readStream(userStream(user.id).streamId, context.partnerId)
        expect(read.events.map((event) => event.context)).toEqual([
          {
            partnerId: context.partnerId,
            requestId: context.requestId,
            idempotencyKey: context.idempotencyKey,
            causationId: null,
            correlationId: null,
          },
        ])
      }),
    )

    it.effect("inside a caller's transaction: committed with it, or rolled back with it", () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const context = yield* newPartner()
        const input = { partner_user_id: PartnerUserId.make("tx"), email: Email.make("tx@example.com") }
        const kept = yield* sql.withTransaction(registerUser(context, input))
        expect(yield* getUserResource(context, kept.id)).toEqual(kept)
        let rolledBackId = ""
        const failure = yield* sql
          .withTransaction(
            Effect.flatMap(registerUser(context, input), (user) => {
              rolledBackId = user.id
              return Effect.fail("roll back" as const)
            }),
          )
          .pipe(Effect.flip)
        expect(failure).toBe("roll back")
        notFound("user")(yield* Effect.flip(getUserResource(context, rolledBackId)))
      }),
    )
  })

  describe("activation", () => {
    it.scoped("the user-activation consumer makes registered users active, once", () =>
      Effect.gen(function* () {
        const context = yield* newPartner()
        const first = yield* processingUser(context)
        const second = yield* processingUser(context)
        // Checked before the consumer starts: once it runs, it may activate them at any moment.
        expect((yield* getUserResource(context, first)).status).toBe("processing")
        yield* Effect.forkScoped(
          runConsumer({
            name: USER_ACTIVATION_CONSUMER,
            handle: activateUsersHandler,
            batchSize: 100,
            pollInterval: "500 millis",
          }),
        )
        yield* waitUntilCaughtUp(USER_ACTIVATION_CONSUMER, "head", "10 seconds")
        for (const userId of [first, second]) {
          expect(yield* getUserResource(context, userId)).toMatchObject({ status: "active", version: 2 })
        }
        // Redelivery: the same events again change nothing.
        const read = yield* readStream(userStream(first).streamId, context.partnerId)
        yield* activateUsersHandler(read.events)
        const again = yield* readStream(userStream(first).streamId, context.partnerId)
        expect(again.version).toBe(2n)
        expect(again.events[1]?.context.causationId).toBe(read.events[0]?.eventId)
      }),
    )

    it.effect("a processing user takes no writes (LE0001) but reads answer", () =>
      Effect.gen(function* () {
        const context = yield* newPartner()
        const userId = yield* processingUser(context)
        const processing = refusedWith(UserBeingProcessed, "LE0001")
        processing(yield* Effect.flip(updateUser(context, userId, { name: "Grace" })))
        processing(yield* Effect.flip(closeUser(context, userId)))
        processing(yield* Effect.flip(openPointsAccount(context, userId)))
        processing(yield* Effect.flip(addPoints(context, movement(userId, 10))))
        expect((yield* getUserResource(context, userId)).status).toBe("processing")
      }),
    )
  })

  describe("listUsers", () => {
    it.effect("pages the partner's users, filters by partner_user_id, and never shows another's", () =>
      Effect.gen(function* () {
        const a = yield* newPartner("A")
        const b = yield* newPartner("B")
        const shared = `crm-${newId()}`
        const mine = [yield* processingUser(a, shared), yield* processingUser(a), yield* processingUser(a)]
        const theirs = yield* processingUser(b, shared)
        const first = yield* listUsers(a, { limit: 2 })
        expect(first.data.map((user) => user.id)).toEqual(mine.slice(0, 2))
        expect(first.next_cursor).not.toBeNull()
        const second = yield* listUsers(a, { limit: 2, cursor: first.next_cursor ?? "" })
        expect(second.data.map((user) => user.id)).toEqual(mine.slice(2))
        expect(second.next_cursor).toBeNull()
        expect((yield* listUsers(a, { partner_user_id: shared })).data.map((user) => user.id)).toEqual([
          mine[0],
        ])
        expect((yield* listUsers(b, { partner_user_id: shared })).data.map((user) => user.id)).toEqual([
          theirs,
        ])
        const bad = yield* Effect.flip(listUsers(a, { limit: 0 }))
        refusedWith(InvalidParams, "GH1006")(bad)
      }),
    )
  })

  describe("updateUser", () => {
    it.effect("changes what is given, keeps what is absent, clears a null name", () =>
      Effect.gen(function* () {
        const context = yield* newPartner()
        const userId = yield* activeUser(context)
        const renamed = yield* updateUser(context, userId, { name: "Grace" })
        expect(renamed).toMatchObject({ name: "Grace", status: "active", version: 3 })
        const moved = yield* updateUser(context, userId, { email: Email.make("grace@example.com") })
        expect(moved).toMatchObject({ name: "Grace", email: "grace@example.com", version: 4 })
        const cleared = yield* updateUser(context, userId, { name: null })
        expect(cleared).toMatchObject({ name: null, email: "grace@example.com", version: 5 })
        expect(yield* getUserResource(context, userId)).toEqual(cleared)
        // Nothing to change: nothing appended.
        expect((yield* updateUser(context, userId, {})).version).toBe(5)
      }),
    )

    it.effect("LE0002 for an unknown id, an id that is no UUID v7, and another partner's user", () =>
      Effect.gen(function* () {
        const a = yield* newPartner("A")
        const b = yield* newPartner("B")
        const userId = yield* activeUser(a)
        for (const id of [newId(), "not-a-uuid", uuidV4(), userId.toUpperCase()]) {
          notFound("user")(yield* Effect.flip(updateUser(a, id, { name: "X" })))
        }
        notFound("user")(yield* Effect.flip(updateUser(b, userId, { name: "X" })))
        notFound("user")(yield* Effect.flip(getUserResource(b, userId)))
        notFound("user")(yield* Effect.flip(closeUser(b, userId)))
        expect((yield* getUserResource(a, userId)).name).toBe("Ada")
      }),
    )
  })

  describe("closeUser", () => {
    it.effect("closes the user and its account; a repeat, an update or an add is LE0004", () =>
      Effect.gen(function* () {
        const context = yield* newPartner()
        const userId = yield* activeUser(context)
        yield* addPoints(context, movement(userId, 50))
        const closed = yield* closeUser(context, userId)
        // Registered, activated, account linked by the first add, closed.
        expect(closed).toMatchObject({ status: "closed", version: 4 })
        expect(yield* getUserResource(context, userId)).toEqual(closed)
        expect(yield* getPointsAccountResource(context, userId)).toMatchObject({
          status: "closed",
          balance: 50,
        })
        const alreadyClosed = refusedWith(AlreadyClosed, "LE0004")
        alreadyClosed(yield* Effect.flip(closeUser(context, userId)))
        alreadyClosed(yield* Effect.flip(updateUser(context, userId, { name: "X" })))
        alreadyClosed(yield* Effect.flip(addPoints(context, movement(userId, 1))))
        alreadyClosed(yield* Effect.flip(openPointsAccount(context, userId)))
      }),
    )

    it.effect("closes a user who never had an account", () =>
      Effect.gen(function* () {
        const context = yield* newPartner()
        const userId = yield* activeUser(context)
        expect((yield* closeUser(context, userId)).status).toBe("closed")
        notFound("points account")(yield* Effect.flip(getPointsAccountResource(context, userId)))
      }),
    )
  })
})
