import { SqlClient } from "@effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { ResourceNotFound } from "@points/domain"
import { DateTime, Effect, Option, TestClock } from "effect"
import {
  findCredentialForAuthentication,
  findOrders,
  findTransactions,
  findUsers,
  getOrder,
  getPartner,
  getPointsAccount,
  getTransaction,
  getUser,
  getWebhookEndpoint,
  listCredentials,
  listPartners,
  listWebhookEndpoints,
  type PartnerResource,
} from "../../src/index.js"
import onePreviousSecret from "../../src/migrations/0024_webhook_one_previous_secret.js"
import {
  activateUser,
  activeUser,
  addPoints,
  cancelOrder,
  closeUser,
  completeOrder,
  createEndpoint,
  deleteEndpoint,
  disableEndpoint,
  failOrder,
  issueCredential,
  item,
  movePoints,
  openAccount,
  placeOrder,
  projectionDatabase,
  registerPartner,
  registerUser,
  revokeCredential,
  rotateEndpointSecret,
  rotateSecret,
  startProcessing,
  subtractPoints,
  updateEndpoint,
  updateUser,
} from "./commands.js"

// The test clock is shared by the tests of a layer, so times are taken relative to each test's start.
const timestamps = Effect.map(
  DateTime.now,
  (start) => (seconds: number) => DateTime.formatIso(DateTime.add(start, { seconds })),
)

const notFound = (resource: string) => (error: unknown) => {
  expect(error).toBeInstanceOf(ResourceNotFound)
  expect((error as ResourceNotFound).resource).toBe(resource)
  expect((error as ResourceNotFound).code).toBe("LE0002")
}

layer(projectionDatabase())("inline read models", (it) => {
  describe("users and points accounts", () => {
    it.effect("a user row follows registration, activation, update and closing", () =>
      Effect.gen(function* () {
        const at = yield* timestamps
        const partnerId = yield* registerPartner()
        const userId = yield* registerUser(partnerId, { partnerUserId: "crm-1", name: "Ada" })
        expect(yield* getUser(partnerId, userId)).toEqual({
          id: userId,
          partner_user_id: "crm-1",
          email: `${userId}@example.com`,
          name: "Ada",
          status: "processing",
          points_account_id: null,
          created_at: at(0),
          updated_at: at(0),
          version: 1,
        })
        yield* TestClock.adjust("1 second")
        yield* activateUser(partnerId, userId)
        yield* TestClock.adjust("1 second")
        yield* updateUser(partnerId, userId, "grace@example.com", null)
        const updated = yield* getUser(partnerId, userId)
        expect(updated).toMatchObject({
          status: "active",
          email: "grace@example.com",
          name: null,
          created_at: at(0),
          updated_at: at(2),
          version: 3,
        })
        yield* TestClock.adjust("1 second")
        yield* closeUser(partnerId, userId)
        expect(yield* getUser(partnerId, userId)).toMatchObject({
          status: "closed",
          updated_at: at(3),
          version: 4,
        })
      }),
    )

    it.effect("the first points added open the account, linked from the user row; closing closes it", () =>
      Effect.gen(function* () {
        const partnerId = yield* registerPartner()
        const userId = yield* activeUser(partnerId)
        const noAccount = yield* Effect.flip(getPointsAccount(partnerId, userId))
        notFound("points account")(noAccount)
        yield* addPoints(partnerId, userId, 100)
        const account = yield* getPointsAccount(partnerId, userId)
        expect(account).toMatchObject({ user_id: userId, balance: 100, status: "open", version: 2 })
        expect((yield* getUser(partnerId, userId)).points_account_id).toBe(account.id)
        yield* subtractPoints(partnerId, userId, 30)
        expect((yield* getPointsAccount(partnerId, userId)).balance).toBe(70)
        yield* closeUser(partnerId, userId)
        expect(yield* getPointsAccount(partnerId, userId)).toMatchObject({
          id: account.id,
          balance: 70,
          status: "closed",
          version: 4,
        })
      }),
    )

    it.effect("an account opened explicitly starts at zero; an unknown user is LE0002 naming the user", () =>
      Effect.gen(function* () {
        const partnerId = yield* registerPartner()
        const userId = yield* activeUser(partnerId)
        yield* openAccount(partnerId, userId)
        const account = yield* getPointsAccount(partnerId, userId)
        expect(account).toMatchObject({ balance: 0, status: "open", version: 1 })
        expect((yield* getUser(partnerId, userId)).points_account_id).toBe(account.id)
        notFound("user")(
          yield* Effect.flip(getPointsAccount(partnerId, "01936b2e-0000-7000-8000-000000000001")),
        )
        notFound("user")(yield* Effect.flip(getUser(partnerId, "not-a-uuid")))
      }),
    )
  })

  describe("transactions and orders", () => {
    it.effect("every movement is a transaction row: add, subtract, order debit and refund", () =>
      Effect.gen(function* () {
        const at = yield* timestamps
        const partnerId = yield* registerPartner()
        const userId = yield* activeUser(partnerId)
        const added = yield* movePoints("add", partnerId, userId, 500, "ref-add", "welcome bonus")
        const subtracted = yield* subtractPoints(partnerId, userId, 200, "ref-sub")
        const orderId = yield* placeOrder(partnerId, userId, [item("A", 2, 50), item("B", 1, 100)], {
          referenceId: "cart-1",
        })
        const order = yield* getOrder(partnerId, orderId)
        expect(order).toMatchObject({
          user_id: userId,
          reference_id: "cart-1",
          status: "pending",
          items: [
            { sku: "A", name: "Item A", quantity: 2, points: 50 },
            { sku: "B", name: "Item B", quantity: 1, points: 100 },
          ],
          total_points: 200,
          failure_reason: null,
          status_history: [{ status: "pending", at: at(0) }],
          version: 1,
        })
        yield* TestClock.adjust("5 seconds")
        yield* cancelOrder(partnerId, userId, orderId)
        expect(yield* getOrder(partnerId, orderId)).toMatchObject({
          status: "cancelled",
          status_history: [
            { status: "pending", at: at(0) },
            { status: "cancelled", at: at(5) },
          ],
          updated_at: at(5),
          version: 2,
        })
        const account = yield* getPointsAccount(partnerId, userId)
        expect(yield* getTransaction(partnerId, added)).toEqual({
          id: added,
          account_id: account.id,
          user_id: userId,
          type: "add",
          amount: 500,
          balance_after: 500,
          reference_id: "ref-add",
          description: "welcome bonus",
          order_id: null,
          created_at: at(0),
          version: 1,
        })
        const page = yield* findTransactions(partnerId, { user_id: userId })
        expect(page.next_cursor).toBeNull()
        expect(page.data.map((t) => [t.type, t.amount, t.balance_after, t.reference_id, t.order_id])).toEqual(
          [
            ["add", 500, 500, "ref-add", null],
            ["subtract", 200, 300, "ref-sub", null],
            ["order_debit", 200, 100, "cart-1", orderId],
            ["order_refund", 200, 300, "cart-1", orderId],
          ],
        )
        expect(page.data[1]?.id).toBe(subtracted)
        expect(page.data[2]?.id).toBe(order.debit_transaction_id)
        expect(account.balance).toBe(300)
        // Each row keeps the place of its event in the log.
        const sql = yield* SqlClient.SqlClient
        const positions = yield* sql<{ global_position: string; event_type: string }>`
          SELECT t.global_position::text AS global_position, e.event_type FROM points_transactions t
          JOIN events e ON e.global_position = t.global_position
          WHERE t.user_id = ${userId} ORDER BY t.id`
        expect(positions.map((p) => p.event_type)).toEqual([
          "PointsAdded",
          "PointsSubtracted",
          "OrderDebited",
          "OrderRefunded",
        ])
      }),
    )

    it.effect("fulfilment moves an order through its statuses; a failure keeps its reason and refunds", () =>
      Effect.gen(function* () {
        const partnerId = yield* registerPartner()
        const userId = yield* activeUser(partnerId)
        yield* addPoints(partnerId, userId, 1_000)
        const delivered = yield* placeOrder(partnerId, userId, [item("BOOK", 1, 300)])
        yield* startProcessing(partnerId, delivered)
        yield* completeOrder(partnerId, delivered)
        const failed = yield* placeOrder(partnerId, userId, [item("FAIL-1", 2, 100)], {
          referenceId: "cart-f",
        })
        yield* startProcessing(partnerId, failed)
        yield* failOrder(partnerId, userId, failed, "out of stock")
        expect(yield* getOrder(partnerId, delivered)).toMatchObject({
          status: "completed",
          version: 3,
          status_history: [{ status: "pending" }, { status: "processing" }, { status: "completed" }],
        })
        expect(yield* getOrder(partnerId, failed)).toMatchObject({
          status: "failed",
          failure_reason: "out of stock",
          version: 3,
        })
        expect((yield* getPointsAccount(partnerId, userId)).balance).toBe(700)
        const completed = yield* findOrders(partnerId, { status: "completed" })
        expect(completed.data.map((o) => o.id)).toEqual([delivered])
        const byReference = yield* findOrders(partnerId, { reference_id: "cart-f" })
        expect(byReference.data.map((o) => o.id)).toEqual([failed])
        const byUser = yield* findOrders(partnerId, { user_id: userId })
        expect(byUser.data.map((o) => o.id)).toEqual([delivered, failed])
        const refunds = yield* findTransactions(partnerId, { reference_id: "cart-f" })
        expect(refunds.data.map((t) => t.type)).toEqual(["order_debit", "order_refund"])
        notFound("order")(yield* Effect.flip(getOrder(partnerId, "nope")))
        expect((yield* findOrders(partnerId, { user_id: "nope" })).data).toEqual([])
      }),
    )
  })

  describe("webhook endpoints, partners, credentials", () => {
    it.effect("an endpoint row follows its settings, never holds a secret, and goes with deletion", () =>
      Effect.gen(function* () {
        const at = yield* timestamps
        const partnerId = yield* registerPartner()
        const endpointId = yield* createEndpoint(partnerId)
        expect(yield* getWebhookEndpoint(partnerId, endpointId)).toEqual({
          id: endpointId,
          url: "https://example.com/hooks",
          event_types: [],
          description: "orders",
          enabled: true,
          disabled_reason: null,
          created_at: at(0),
          updated_at: at(0),
          version: 1,
        })
        yield* updateEndpoint(partnerId, endpointId, "https://example.com/v2", [
          "order.status_changed",
          "user.created",
        ])
        yield* rotateEndpointSecret(partnerId, endpointId)
        yield* disableEndpoint(partnerId, endpointId)
        expect(yield* getWebhookEndpoint(partnerId, endpointId)).toMatchObject({
          url: "https://example.com/v2",
          event_types: ["user.created", "order.status_changed"],
          enabled: false,
          disabled_reason: "gone",
          version: 4,
        })
        const sql = yield* SqlClient.SqlClient
        const columns = yield* sql<{ column_name: string }>`
          SELECT column_name FROM information_schema.columns WHERE table_name = 'webhook_endpoints'
          ORDER BY ordinal_position`
        // Only references to the secrets table: the secrets themselves never reach a read model.
        expect(columns.map((c) => c.column_name).filter((name) => name.includes("secret"))).toEqual([
          "secret_id",
          "previous_secrets",
        ])
        const [references] = yield* sql<{
          secret_id: string
          previous_secrets: ReadonlyArray<{ id: string; valid_until: string }>
        }>`SELECT secret_id::text, previous_secrets FROM webhook_endpoints WHERE id = ${endpointId}`
        expect(references?.previous_secrets).toHaveLength(1)
        expect(references?.previous_secrets[0]?.id).toMatch(/^[0-9a-f-]{36}$/)
        expect(references?.secret_id).not.toEqual(references?.previous_secrets[0]?.id)
        expect((yield* listWebhookEndpoints(partnerId, {})).data.map((e) => e.id)).toEqual([endpointId])
        yield* deleteEndpoint(partnerId, endpointId)
        notFound("webhook endpoint")(yield* Effect.flip(getWebhookEndpoint(partnerId, endpointId)))
        expect((yield* listWebhookEndpoints(partnerId, {})).data).toEqual([])
      }),
    )

    it.effect(
      "migration 0024 keeps of the replaced secrets only the last rotation's, as the log replays",
      () =>
        Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          const partnerId = yield* registerPartner()
          const endpointId = yield* createEndpoint(partnerId)
          for (let n = 0; n < 3; n++) yield* rotateEndpointSecret(partnerId, endpointId)
          const previousOf = Effect.map(
            sql<{ previous_secrets: ReadonlyArray<{ id: string; valid_until: string }> }>`
            SELECT previous_secrets FROM webhook_endpoints WHERE id = ${endpointId}`,
            (rows) => rows[0]?.previous_secrets,
          )
          const projected = yield* previousOf
          expect(projected).toHaveLength(1)
          const older = [0, 1].map(() => ({ id: crypto.randomUUID(), valid_until: "2999-01-01T00:00:00Z" }))
          // A row as the projection wrote it before the cap (every replaced secret in grace, newest first), put
          // back without the CHECK, migrated, then rolled back with the CHECK.
          const migrated = yield* sql
            .withTransaction(
              Effect.gen(function* () {
                yield* sql`ALTER TABLE webhook_endpoints DROP CONSTRAINT webhook_endpoints_one_previous_secret`
                yield* sql`UPDATE webhook_endpoints SET previous_secrets = ${JSON.stringify([...(projected ?? []), ...older])}::jsonb
                         WHERE id = ${endpointId}`
                expect(yield* previousOf).toHaveLength(3)
                yield* onePreviousSecret
                return yield* Effect.fail({ rollBack: yield* previousOf })
              }),
            )
            .pipe(Effect.flip)
          expect(migrated).toEqual({ rollBack: projected })
          expect(yield* previousOf).toEqual(projected)
          const refused = yield* Effect.flip(
            sql`UPDATE webhook_endpoints SET previous_secrets = ${JSON.stringify(older)}::jsonb
              WHERE id = ${endpointId}`,
          )
          expect(String(refused.cause)).toContain("webhook_endpoints_one_previous_secret")
        }),
    )

    it.effect("partners are listed for administrators; credentials without secrets, hashes for auth", () =>
      Effect.gen(function* () {
        const at = yield* timestamps
        const partnerId = yield* registerPartner("Globex")
        expect(yield* getPartner(partnerId)).toEqual({
          id: partnerId,
          name: "Globex",
          created_at: at(0),
        })
        notFound("partner")(yield* Effect.flip(getPartner("01936b2e-0000-7000-8000-000000000009")))
        const listed: Array<PartnerResource> = []
        let cursor: string | undefined
        for (let page = 0; page < 50; page++) {
          const result = yield* listPartners({ limit: 2, cursor })
          listed.push(...result.data)
          if (result.next_cursor === null) break
          cursor = result.next_cursor
        }
        expect(listed.filter((p) => p.id === partnerId)).toHaveLength(1)

        const kept = yield* issueCredential(partnerId, "backend")
        const revoked = yield* issueCredential(partnerId, null)
        yield* TestClock.adjust("10 seconds")
        yield* rotateSecret(partnerId, kept)
        yield* revokeCredential(partnerId, revoked)
        const credentials = yield* listCredentials(partnerId)
        expect(credentials).toEqual({
          data: [
            {
              client_id: kept,
              name: "backend",
              status: "active",
              // The replaced secret still gets tokens for the default day after the rotation.
              previous_secret_valid_until: at(86_410),
              created_at: at(0),
              updated_at: at(10),
            },
            {
              client_id: revoked,
              name: null,
              status: "revoked",
              previous_secret_valid_until: null,
              created_at: at(0),
              updated_at: at(10),
            },
          ],
          next_cursor: null,
        })
        const auth = yield* findCredentialForAuthentication(kept)
        expect(Option.getOrThrow(auth)).toEqual({
          client_id: kept,
          partner_id: partnerId,
          status: "active",
          secret_hash: `$argon2id$second-${kept}`,
          previous_secret_hash: `$argon2id$first-${kept}`,
          previous_valid_until: new Date(at(86_410)),
        })
        expect(Option.isNone(yield* findCredentialForAuthentication("unknown"))).toBe(true)
        // Once the grace period is over, the list no longer shows a replaced secret as working.
        yield* TestClock.adjust("86400 seconds")
        const later = yield* listCredentials(partnerId)
        expect(later.data.map((credential) => credential.previous_secret_valid_until)).toEqual([null, null])
      }),
    )
  })

  it.effect("partner scoping: partner B sees nothing of partner A's", () =>
    Effect.gen(function* () {
      const a = yield* registerPartner("A")
      const b = yield* registerPartner("B")
      const userId = yield* activeUser(a, { partnerUserId: "shared-crm-id" })
      const transactionId = yield* addPoints(a, userId, 50, "shared-ref")
      const orderId = yield* placeOrder(a, userId, [item("A", 1, 10)], { referenceId: "shared-order" })
      const endpointId = yield* createEndpoint(a)
      yield* issueCredential(a)

      notFound("user")(yield* Effect.flip(getUser(b, userId)))
      notFound("user")(yield* Effect.flip(getPointsAccount(b, userId)))
      notFound("transaction")(yield* Effect.flip(getTransaction(b, transactionId)))
      notFound("order")(yield* Effect.flip(getOrder(b, orderId)))
      notFound("webhook endpoint")(yield* Effect.flip(getWebhookEndpoint(b, endpointId)))
      const empty = { data: [], next_cursor: null }
      expect(yield* findUsers(b, {})).toEqual(empty)
      expect(yield* findUsers(b, { partner_user_id: "shared-crm-id" })).toEqual(empty)
      expect(yield* findTransactions(b, {})).toEqual(empty)
      expect(yield* findTransactions(b, { reference_id: "shared-ref" })).toEqual(empty)
      expect(yield* findTransactions(b, { user_id: userId })).toEqual(empty)
      expect(yield* findOrders(b, {})).toEqual(empty)
      expect(yield* findOrders(b, { reference_id: "shared-order" })).toEqual(empty)
      expect(yield* listWebhookEndpoints(b, {})).toEqual(empty)
      expect(yield* listCredentials(b)).toEqual(empty)
      // ...while A sees all of it.
      expect((yield* findUsers(a, { partner_user_id: "shared-crm-id" })).data.map((u) => u.id)).toEqual([
        userId,
      ])
      expect((yield* findTransactions(a, { reference_id: "shared-ref" })).data.map((t) => t.id)).toEqual([
        transactionId,
      ])
      expect((yield* getOrder(a, orderId)).id).toBe(orderId)
      // Text that PostgreSQL cannot hold names nothing, rather than failing the query.
      expect(yield* findUsers(a, { partner_user_id: "a\u0000b" })).toEqual(empty)
    }),
  )
})
