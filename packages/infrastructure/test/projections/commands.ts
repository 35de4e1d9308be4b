// The commands of the API as units of work, the way the HTTP handlers will run them: each loads the streams it
// needs, decides with the domain (workflows where several streams change), and appends through
// decideAndAppend, which projects the read models inline.
import {
  AccountId,
  ClientCredential,
  ClientId,
  Email,
  Ledger,
  Order,
  OrderId,
  Partner,
  PartnerId,
  PartnerUserId,
  Points,
  Reference,
  ReferenceId,
  SigningSecretId,
  Sku,
  TransactionId,
  User,
  UserId,
  WebhookEndpoint,
  WebhookEndpointId,
  Workflows,
} from "@points/domain"
import { Effect, Layer } from "effect"
import {
  credentialStream,
  decideAndAppend,
  InlineProjectionLive,
  LogNotifier,
  ledgerStream,
  orderStream,
  partnerStream,
  referenceStream,
  userStream,
  webhookStream,
} from "../../src/index.js"
import { testDatabase } from "../../src/testing/index.js"
import { contextFor, newId } from "../fixtures.js"

/** A fresh migrated database with the inline read models and no NOTIFY. */
export const projectionDatabase = (options: { readonly poolSize?: number } = {}) =>
  Layer.mergeAll(InlineProjectionLive, LogNotifier.none).pipe(Layer.provideMerge(testDatabase(options)))

/** Registers a partner (the admin API's create). */
export const registerPartner = (name = "Acme") => {
  const partnerId = PartnerId.make(newId())
  return decideAndAppend(
    { partner: partnerStream(partnerId) },
    (s) =>
      Effect.map(Partner.decide(Partner.RegisterPartner.make({ partnerId, name }), s.partner), (partner) => ({
        partner,
      })),
    contextFor(partnerId),
  ).pipe(Effect.as(partnerId))
}

/** Registers a user of the partner (status processing). */
export const registerUser = (
  partnerId: PartnerId,
  options: { readonly partnerUserId?: string; readonly name?: string | null } = {},
) => {
  const userId = UserId.make(newId())
  const command = User.RegisterUser.make({
    userId,
    partnerId,
    partnerUserId: PartnerUserId.make(options.partnerUserId ?? `pu-${newId()}`),
    email: Email.make(`${userId}@example.com`),
    name: options.name === undefined ? "Ada" : options.name,
  })
  return decideAndAppend(
    { user: userStream(userId) },
    (s) => Effect.map(User.decide(command, s.user), (user) => ({ user })),
    contextFor(partnerId),
  ).pipe(Effect.as(userId))
}

const onUser = (partnerId: PartnerId, userId: UserId, command: User.UserCommand) =>
  decideAndAppend(
    { user: userStream(userId) },
    (s) => Effect.map(User.decide(command, s.user), (user) => ({ user })),
    contextFor(partnerId),
  )

/** Finishes processing a user (the consumer's job). */
export const activateUser = (partnerId: PartnerId, userId: UserId) =>
  onUser(partnerId, userId, User.ActivateUser.make({ userId }))

/** Registers and activates a user. */
export const activeUser = (partnerId: PartnerId, options: { readonly partnerUserId?: string } = {}) =>
  Effect.tap(registerUser(partnerId, options), (userId) => activateUser(partnerId, userId))

/** Changes a user's e-mail and name. */
export const updateUser = (partnerId: PartnerId, userId: UserId, email: string, name: string | null) =>
  onUser(partnerId, userId, User.UpdateUser.make({ userId, email: Email.make(email), name }))

/** Closes a user, and their account with them. */
export const closeUser = (partnerId: PartnerId, userId: UserId) =>
  decideAndAppend(
    { user: userStream(userId), ledger: ledgerStream(userId) },
    (s) => Workflows.closeUser({ user: s.user, ledger: s.ledger }, { userId }),
    contextFor(partnerId),
  )

/** Opens a user's points account explicitly. */
export const openAccount = (partnerId: PartnerId, userId: UserId) =>
  decideAndAppend(
    { user: userStream(userId), ledger: ledgerStream(userId) },
    (s) =>
      Workflows.openAccountForUser(s, { _tag: "OpenAccount", userId, accountId: AccountId.make(newId()) }),
    contextFor(partnerId),
  )

/** Adds or subtracts points, reserving the reference id in the same unit of work (as the API does). */
export const movePoints = (
  kind: "add" | "subtract",
  partnerId: PartnerId,
  userId: UserId,
  amount: number,
  referenceId = `ref-${newId()}`,
  description: string | null = null,
) => {
  const transactionId = TransactionId.make(newId())
  const reference = ReferenceId.make(referenceId)
  return decideAndAppend(
    {
      reference: referenceStream(partnerId, "transaction", referenceId),
      user: userStream(userId),
      ledger: ledgerStream(userId),
    },
    (s) => {
      const movement = {
        userId,
        transactionId,
        amount: Points.make(amount),
        referenceId: reference,
        description,
      }
      return Workflows.reservingReference(
        Reference.ReserveReference.make({
          partnerId,
          kind: "transaction",
          referenceId: reference,
          recordId: transactionId,
        }),
        s.reference,
        kind === "subtract"
          ? Effect.map(
              Ledger.decide(
                Ledger.SubtractPoints.make({ ...movement, holder: User.standingOf(s.user) }),
                s.ledger,
              ),
              (ledger) => ({ ledger }),
            )
          : Workflows.openAccountForUser(s, {
              _tag: "AddPoints",
              ...movement,
              accountId: AccountId.make(newId()),
            }),
      )
    },
    contextFor(partnerId),
  ).pipe(Effect.as(transactionId))
}

/** Adds points with the reference id's reservation. */
export const addPoints = (partnerId: PartnerId, userId: UserId, amount: number, referenceId?: string) =>
  movePoints("add", partnerId, userId, amount, referenceId)

/** Subtracts points with the reference id's reservation. */
export const subtractPoints = (partnerId: PartnerId, userId: UserId, amount: number, referenceId?: string) =>
  movePoints("subtract", partnerId, userId, amount, referenceId)

/** Adds points without reserving the reference id: only the database's unique index stands in the way. */
export const addPointsUnreserved = (
  partnerId: PartnerId,
  userId: UserId,
  amount: number,
  referenceId: string,
) =>
  decideAndAppend(
    { user: userStream(userId), ledger: ledgerStream(userId) },
    (s) =>
      Workflows.openAccountForUser(s, {
        _tag: "AddPoints",
        userId,
        accountId: AccountId.make(newId()),
        transactionId: TransactionId.make(newId()),
        amount: Points.make(amount),
        referenceId: ReferenceId.make(referenceId),
        description: null,
      }),
    contextFor(partnerId),
  )

/** One order line. */
export const item = (sku: string, quantity: number, points: number) => ({
  sku: Sku.make(sku),
  name: `Item ${sku}`,
  quantity,
  points: Points.make(points),
})

/** Places an order and debits it, reserving its reference id (`reserve: false` leaves that to the index). */
export const placeOrder = (
  partnerId: PartnerId,
  userId: UserId,
  items: ReadonlyArray<Order.OrderItem>,
  options: { readonly referenceId?: string; readonly reserve?: boolean } = {},
) => {
  const orderId = OrderId.make(newId())
  const referenceId = ReferenceId.make(options.referenceId ?? `order-${newId()}`)
  const command = Order.PlaceOrder.make({
    orderId,
    userId,
    referenceId,
    items,
    debitTransactionId: TransactionId.make(newId()),
  })
  const place = (s: { user: User.UserState; ledger: Ledger.LedgerState; order: Order.OrderState }) =>
    Workflows.placeOrder({ holder: User.standingOf(s.user), ledger: s.ledger, order: s.order }, command)
  const streams = { user: userStream(userId), ledger: ledgerStream(userId), order: orderStream(orderId) }
  const context = contextFor(partnerId)
  const placed =
    options.reserve === false
      ? decideAndAppend(streams, place, context)
      : decideAndAppend(
          { ...streams, reference: referenceStream(partnerId, "order", referenceId) },
          (s) =>
            Workflows.reservingReference(
              Reference.ReserveReference.make({ partnerId, kind: "order", referenceId, recordId: orderId }),
              s.reference,
              place(s),
            ),
          context,
        )
  return Effect.as(placed, orderId)
}

/** Cancels a pending order and refunds it. */
export const cancelOrder = (partnerId: PartnerId, userId: UserId, orderId: OrderId) =>
  decideAndAppend(
    { order: orderStream(orderId), ledger: ledgerStream(userId) },
    (s) =>
      Workflows.cancelOrder(
        { order: s.order, ledger: s.ledger },
        { orderId, refundTransactionId: TransactionId.make(newId()) },
      ),
    contextFor(partnerId),
  )

const onOrder = (partnerId: PartnerId, orderId: OrderId, command: Order.OrderCommand) =>
  decideAndAppend(
    { order: orderStream(orderId) },
    (s) => Effect.map(Order.decide(command, s.order), (order) => ({ order })),
    contextFor(partnerId),
  )

/** Fulfilment picks an order up. */
export const startProcessing = (partnerId: PartnerId, orderId: OrderId) =>
  onOrder(partnerId, orderId, Order.StartProcessing.make({ orderId }))

/** Fulfilment delivers an order. */
export const completeOrder = (partnerId: PartnerId, orderId: OrderId) =>
  onOrder(partnerId, orderId, Order.CompleteOrder.make({ orderId }))

/** Fulfilment fails a processing order, refunding it. */
export const failOrder = (partnerId: PartnerId, userId: UserId, orderId: OrderId, reason: string) =>
  decideAndAppend(
    { order: orderStream(orderId), ledger: ledgerStream(userId) },
    (s) =>
      Workflows.failOrder(
        { order: s.order, ledger: s.ledger },
        { orderId, reason, refundTransactionId: TransactionId.make(newId()) },
      ),
    contextFor(partnerId),
  )

const onEndpoint = (
  partnerId: PartnerId,
  endpointId: WebhookEndpointId,
  command: WebhookEndpoint.WebhookEndpointCommand,
) =>
  decideAndAppend(
    { endpoint: webhookStream(endpointId) },
    (s) => Effect.map(WebhookEndpoint.decide(command, s.endpoint), (endpoint) => ({ endpoint })),
    contextFor(partnerId),
  )

/** Registers a webhook endpoint. */
export const createEndpoint = (
  partnerId: PartnerId,
  url = "https://example.com/hooks",
  eventTypes: ReadonlyArray<WebhookEndpoint.PublicEventType> = [],
) => {
  const endpointId = WebhookEndpointId.make(newId())
  return onEndpoint(
    partnerId,
    endpointId,
    WebhookEndpoint.CreateEndpoint.make({
      endpointId,
      partnerId,
      url: url as WebhookEndpoint.WebhookUrl,
      eventTypes,
      description: "orders",
      enabled: true,
      secretId: SigningSecretId.make(newId()),
      allowPrivateTargets: false,
      // Made directly, not through the service that counts a partner's endpoints.
      endpointsOfPartner: 0,
    }),
  ).pipe(Effect.as(endpointId))
}

/** Changes an endpoint's url and event types. */
export const updateEndpoint = (
  partnerId: PartnerId,
  endpointId: WebhookEndpointId,
  url: string,
  eventTypes: ReadonlyArray<WebhookEndpoint.PublicEventType>,
) =>
  onEndpoint(
    partnerId,
    endpointId,
    WebhookEndpoint.UpdateEndpoint.make({
      endpointId,
      url: url as WebhookEndpoint.WebhookUrl,
      eventTypes,
      allowPrivateTargets: false,
    }),
  )

/** Gives an endpoint a new signing secret. */
export const rotateEndpointSecret = (partnerId: PartnerId, endpointId: WebhookEndpointId) =>
  onEndpoint(
    partnerId,
    endpointId,
    WebhookEndpoint.RotateEndpointSecret.make({
      endpointId,
      secretId: SigningSecretId.make(newId()),
      gracePeriodSeconds: 86_400,
    }),
  )

/** The platform disables an endpoint that answered 410. */
export const disableEndpoint = (partnerId: PartnerId, endpointId: WebhookEndpointId) =>
  onEndpoint(partnerId, endpointId, WebhookEndpoint.DisableEndpoint.make({ endpointId, reason: "gone" }))

/** Deletes an endpoint. */
export const deleteEndpoint = (partnerId: PartnerId, endpointId: WebhookEndpointId) =>
  onEndpoint(partnerId, endpointId, WebhookEndpoint.DeleteEndpoint.make({ endpointId }))

const onCredential = (
  partnerId: PartnerId,
  clientId: ClientId,
  command: ClientCredential.CredentialCommand,
) =>
  decideAndAppend(
    { credential: credentialStream(clientId) },
    (s) => Effect.map(ClientCredential.decide(command, s.credential), (credential) => ({ credential })),
    contextFor(partnerId),
  )

/** Issues a client credential to a partner. */
export const issueCredential = (partnerId: PartnerId, name: string | null = "backend") => {
  const clientId = ClientId.make(newId())
  return onCredential(
    partnerId,
    clientId,
    ClientCredential.IssueCredential.make({
      clientId,
      partnerId,
      name,
      secretHash: ClientCredential.SecretHash.make(`$argon2id$first-${clientId}`),
    }),
  ).pipe(Effect.as(clientId))
}

/** Rotates a credential's secret with a day's grace for the old one. */
export const rotateSecret = (partnerId: PartnerId, clientId: ClientId) =>
  onCredential(
    partnerId,
    clientId,
    ClientCredential.RotateSecret.make({
      clientId,
      secretHash: ClientCredential.SecretHash.make(`$argon2id$second-${clientId}`),
      gracePeriodSeconds: 86_400,
    }),
  )

/** Revokes a credential. */
export const revokeCredential = (partnerId: PartnerId, clientId: ClientId) =>
  onCredential(partnerId, clientId, ClientCredential.RevokeCredential.make({ clientId }))
