import { expect } from "@effect/vitest"
import {
  Email,
  type Order,
  PartnerUserId,
  Points,
  ReferenceId,
  ResourceNotFound,
  Sku,
  type UserId,
} from "@points/domain"
import { Effect, Layer } from "effect"
import {
  activateUsersHandler,
  createPartner,
  InlineProjectionLive,
  LogListener,
  LogNotifier,
  type RequestContext,
  readStream,
  registerUser,
  userStream,
} from "../../src/index.js"
import { testDatabase } from "../../src/testing/index.js"
import { newId } from "../fixtures.js"

/** A fresh migrated database with the inline read models, NOTIFY after commits and a LISTEN connection. */
export const serviceDatabase = (options: { readonly poolSize?: number } = {}) =>
  Layer.mergeAll(InlineProjectionLive, LogNotifier.layer, LogListener.layer).pipe(
    Layer.provideMerge(testDatabase(options)),
  )

/** A new partner (through the admin service) and the context of one of its requests. */
export const newPartner = (name = "Acme") =>
  Effect.map(createPartner({ name }), (partner) => contextOf(partner.id))

/** The context of a request of a partner, with a fresh request id and idempotency key. */
export const contextOf = (partnerId: string): RequestContext => ({
  partnerId: partnerId as RequestContext["partnerId"],
  requestId: `req-${newId()}`,
  idempotencyKey: `key-${newId()}`,
})

/** Registers a user (status processing) and returns its id. */
export const processingUser = (context: RequestContext, partnerUserId = `crm-${newId()}`) =>
  Effect.map(
    registerUser(context, {
      partner_user_id: PartnerUserId.make(partnerUserId),
      email: Email.make(`${partnerUserId}@example.com`),
      name: "Ada",
    }),
    (user) => user.id as UserId,
  ).pipe(Effect.orDie)

/** Activates a user as the consumer would: its stream's events through `activateUsersHandler`. */
export const activate = (context: RequestContext, userId: string) =>
  Effect.flatMap(readStream(userStream(userId).streamId, context.partnerId), (read) =>
    activateUsersHandler(read.events),
  ).pipe(Effect.orDie)

/** Registers and activates a user, returning its id. */
export const activeUser = (context: RequestContext, partnerUserId?: string) =>
  Effect.tap(processingUser(context, partnerUserId), (userId) => activate(context, userId))

/** A fresh reference id. */
export const newReference = (prefix = "ref") => ReferenceId.make(`${prefix}-${newId()}`)

/** The body of an add or subtract. */
export const movement = (userId: string, amount: number, referenceId = newReference()) => ({
  user_id: userId,
  amount: Points.make(amount),
  reference_id: referenceId,
})

/** One order line. */
export const item = (sku: string, quantity: number, points: number): Order.OrderItem => ({
  sku: Sku.make(sku),
  name: `Item ${sku}`,
  quantity,
  points: Points.make(points),
})

/** Asserts a refusal: its class and its published code. */
export const refusedWith =
  (errorClass: abstract new (...args: never) => { readonly code: string }, code: string) =>
  (error: unknown) => {
    expect(error).toBeInstanceOf(errorClass)
    expect((error as { code: string }).code).toBe(code)
  }

/** Asserts LE0002 naming the resource. */
export const notFound = (resource: string) => (error: unknown) => {
  refusedWith(ResourceNotFound, "LE0002")(error)
  expect((error as ResourceNotFound).resource).toBe(resource)
}
