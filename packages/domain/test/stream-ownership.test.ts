import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, Option } from "effect"
import {
  ClientCredential,
  ClientId,
  Email,
  IdempotencyKey,
  InvariantViolation,
  Ledger,
  Order,
  Partner,
  PartnerUserId,
  Points,
  Reference,
  SigningSecretId,
  User,
  WebhookEndpoint,
  WebhookEndpointId,
} from "../src/index.js"
import { DeciderSpecification } from "../src/testing/index.js"
import { epoch, otherPartnerId, partnerId, userId } from "./fixtures.js"
import { claimKey, created, key, keyClaimed } from "./idempotency-fixtures.js"
import {
  accountId,
  debitTransactionId,
  orderId,
  orderReferenceId,
  otherOrderId,
  otherUserId,
  referenceId,
  sku,
} from "./ledger-fixtures.js"

const registered = User.UserRegistered.make({
  userId,
  partnerId,
  partnerUserId: PartnerUserId.make("p-1"),
  email: Email.make("ada@example.com"),
  name: "Ada",
  at: epoch,
})
const activated = User.UserActivated.make({ userId, at: epoch })
const placed = Order.OrderPlaced.make({
  orderId,
  userId,
  referenceId: orderReferenceId,
  items: [{ sku, name: null, quantity: 1, points: Points.make(10) }],
  totalPoints: Points.make(10),
  debitTransactionId,
  at: epoch,
})
const reserved = Reference.ReferenceReserved.make({
  partnerId,
  kind: "order",
  referenceId: orderReferenceId,
  recordId: orderId,
  at: epoch,
})

describe("A stream belongs to one aggregate: a command or event of another is a bug, made loud", () => {
  it.effect("a user's stream refuses another user's command, and its fold another user's event", () =>
    Effect.gen(function* () {
      const spec = DeciderSpecification.for(User.decider)
      yield* spec
        .given([registered, activated])
        .when(User.CloseUser.make({ userId: otherUserId }))
        .thenBreaksInvariant("for another user")
      yield* spec
        .given([registered, User.UserActivated.make({ userId: otherUserId, at: epoch })])
        .when(User.CloseUser.make({ userId }))
        .thenBreaksInvariant("of another user")
    }),
  )

  it.effect("an order's stream refuses another order's command", () =>
    DeciderSpecification.for(Order.decider)
      .given([placed])
      .when(Order.CancelOrder.make({ orderId: otherOrderId }))
      .thenBreaksInvariant("for another order"),
  )

  it.effect("a reference id's stream refuses a reservation of another reference id, not as a duplicate", () =>
    Effect.gen(function* () {
      const spec = DeciderSpecification.for(Reference.decider)
      const reserve = {
        partnerId,
        kind: "order",
        referenceId: orderReferenceId,
        recordId: otherOrderId,
      } as const
      for (const other of [
        { ...reserve, partnerId: otherPartnerId },
        { ...reserve, kind: "transaction" as const },
        { ...reserve, referenceId },
      ]) {
        yield* spec
          .given([reserved])
          .when(Reference.ReserveReference.make(other))
          .thenBreaksInvariant("another reference id")
      }
    }),
  )

  it.effect("a credential's stream refuses another credential's command, and its fold another's event", () =>
    Effect.gen(function* () {
      const clientId = ClientId.make("01936b2e-0000-7000-8000-0000000000c1")
      const otherClientId = ClientId.make("01936b2e-0000-7000-8000-0000000000c2")
      const issued = ClientCredential.CredentialIssued.make({
        clientId,
        partnerId,
        name: null,
        secretHash: ClientCredential.SecretHash.make("$argon2id$v=19$m=19456,t=2,p=1$c2FsdA$aGFzaA"),
        at: epoch,
      })
      const spec = DeciderSpecification.for(ClientCredential.decider)
      yield* spec
        .given([issued])
        .when(ClientCredential.RevokeCredential.make({ clientId: otherClientId }))
        .thenBreaksInvariant("for another credential")
      yield* spec
        .given([issued, ClientCredential.CredentialRevoked.make({ clientId: otherClientId, at: epoch })])
        .when(ClientCredential.RevokeCredential.make({ clientId }))
        .thenBreaksInvariant("of another credential")
    }),
  )

  it.effect("an endpoint's stream refuses another endpoint's command, and its fold another's event", () =>
    Effect.gen(function* () {
      const endpointId = WebhookEndpointId.make("01936b2e-0000-7000-8000-0000000000e1")
      const otherEndpointId = WebhookEndpointId.make("01936b2e-0000-7000-8000-0000000000e2")
      const endpointCreated = WebhookEndpoint.WebhookEndpointCreated.make({
        endpointId,
        partnerId,
        url: WebhookEndpoint.WebhookUrl.make("https://hooks.acme.example/points"),
        eventTypes: [],
        description: null,
        enabled: true,
        secretId: SigningSecretId.make("01936b2e-0000-7000-8000-0000000000f1"),
        at: epoch,
      })
      const spec = DeciderSpecification.for(WebhookEndpoint.decider)
      yield* spec
        .given([endpointCreated])
        .when(WebhookEndpoint.DeleteEndpoint.make({ endpointId: otherEndpointId }))
        .thenBreaksInvariant("for another endpoint")
      yield* spec
        .given([
          endpointCreated,
          WebhookEndpoint.WebhookEndpointDeleted.make({ endpointId: otherEndpointId, at: epoch }),
        ])
        .when(WebhookEndpoint.DeleteEndpoint.make({ endpointId }))
        .thenBreaksInvariant("of another endpoint")
    }),
  )

  it.effect(
    "a key's stream refuses another key's command or another partner's, and its fold their events",
    () =>
      Effect.gen(function* () {
        const spec = DeciderSpecification.for(IdempotencyKey.decider)
        const otherKey = IdempotencyKey.IdempotencyKeyValue.make("cart-2024-0043")
        const record = { partnerId, key, response: created }
        for (const other of [
          { ...record, key: otherKey },
          { ...record, partnerId: otherPartnerId },
        ]) {
          yield* spec
            .given([keyClaimed({ at: 0 })])
            .when(IdempotencyKey.RecordResponse.make(other))
            .thenBreaksInvariant("for another key")
          yield* spec
            .given([keyClaimed({ at: 0 }), IdempotencyKey.ResponseRecorded.make({ ...other, at: epoch })])
            .when(claimKey())
            .thenBreaksInvariant("of another key")
        }
      }),
  )

  it("every fold refuses an event of another stream type instead of folding it into nonsense", () => {
    const foreign = (
      decider: { readonly initialState: unknown; readonly evolve: (s: never, e: never) => unknown },
      event: unknown,
    ) => {
      try {
        decider.evolve(decider.initialState as never, event as never)
        return "folded"
      } catch (error) {
        return error instanceof InvariantViolation ? error.message : `threw ${String(error)}`
      }
    }
    const accountOpened = Ledger.AccountOpened.make({ accountId, userId, at: epoch })
    for (const [name, decider, event] of [
      ["Ledger", Ledger.decider, registered],
      ["User", User.decider, accountOpened],
      ["Order", Order.decider, accountOpened],
      ["Reference", Reference.decider, accountOpened],
      ["Partner", Partner.decider, accountOpened],
      ["ClientCredential", ClientCredential.decider, accountOpened],
      ["IdempotencyKey", IdempotencyKey.decider, accountOpened],
      ["WebhookEndpoint", WebhookEndpoint.decider, accountOpened],
    ] as const) {
      expect(foreign(decider, event), name).toMatch(
        /^an event this stream cannot have: (UserRegistered|AccountOpened)$/,
      )
    }
  })

  it.effect("every decide refuses a command of another stream type instead of deciding nothing", () =>
    Effect.gen(function* () {
      const registerPartner = Partner.RegisterPartner.make({ partnerId, name: "Acme" })
      const closeUser = User.CloseUser.make({ userId })
      for (const [name, decider, command] of [
        ["Ledger", Ledger.decider, registerPartner],
        ["User", User.decider, registerPartner],
        ["Order", Order.decider, registerPartner],
        ["Reference", Reference.decider, registerPartner],
        ["Partner", Partner.decider, closeUser],
        ["ClientCredential", ClientCredential.decider, registerPartner],
        ["IdempotencyKey", IdempotencyKey.decider, registerPartner],
        ["WebhookEndpoint", WebhookEndpoint.decider, registerPartner],
      ] as const) {
        const decide = decider.decide as (command: unknown, state: unknown) => Effect.Effect<unknown, unknown>
        const exit = yield* Effect.exit(decide(command, decider.initialState))
        const defect = Exit.isFailure(exit) ? Cause.dieOption(exit.cause) : Option.none()
        expect(Option.getOrUndefined(defect), name).toBeInstanceOf(InvariantViolation)
        expect((Option.getOrUndefined(defect) as Error).message, name).toMatch(
          /^a command this stream cannot take: (RegisterPartner|CloseUser)$/,
        )
      }
    }),
  )
})
