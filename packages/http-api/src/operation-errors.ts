import type { ErrorCode } from "@points/domain"
import type { ErrorStatus } from "./api-error.js"

/** The codes an operation answers with one status, each with when it does. */
export type CodesAt = Readonly<Partial<Record<ErrorCode, string>>>

/** An operation's own error codes, by status. */
export type OperationErrors = Readonly<Partial<Record<ErrorStatus, CodesAt>>>

const unknown = (what: string): CodesAt => ({ LE0002: `${what} is unknown, or another partner's` })
const processing = "the user is still being processed, not yet active"

/**
 * Every operation's own error codes, by operationId (`group.endpoint`): those of its rules, beyond the ones
 * every operation of its kind answers (GH1006 and NN1002 anywhere; GH1003 or GH1001 where it authenticates;
 * GH1010 where it takes a body; IK1001 and IK1002 where it takes an Idempotency-Key; GH1008, GH1009, SV5000,
 * SV5003), which errorCodesInDocument adds. The OpenAPI document lists exactly these codes per response, and
 * the server's test of every route's codes (apps/api/test/error-codes.test.ts) holds them to what it answers.
 */
export const operationErrors: Readonly<Record<string, OperationErrors>> = {
  "oauth.createToken": { 400: { GH1007: "the grant type is not client_credentials" } },
  "oauth.revokeToken": {},
  "users.createUser": {},
  "users.findUsers": {},
  "users.getUser": { 404: unknown("the user") },
  "users.updateUser": {
    404: unknown("the user"),
    409: { LE0001: processing, LE0004: "the user is closed" },
  },
  "users.closeUser": {
    404: unknown("the user"),
    409: { LE0001: processing, LE0004: "the user is closed already" },
  },
  "users.openPointsAccount": {
    404: unknown("the user"),
    409: {
      LE1001: "the user has a points account already",
      LE0001: processing,
      LE0004: "the user is closed",
    },
  },
  "users.getPointsAccount": {
    404: {
      LE0002: "the user is unknown or another partner's, or has no points account (the message says which)",
    },
  },
  "points.addPoints": {
    400: { LE1001: "`transaction.user_id` is not a string" },
    404: unknown("the user"),
    409: {
      LE0001: processing,
      LE0004: "the user is closed",
      LE0006: "another points movement of the partner has the `reference_id`",
    },
  },
  "points.subtractPoints": {
    400: { LE1001: "`transaction.user_id` is not a string" },
    404: unknown("the user"),
    409: { LE0001: processing, LE0006: "another points movement of the partner has the `reference_id`" },
    422: {
      LE2001: "the user has no points account (or it closed with the user)",
      LE2002: "the balance is short of the amount",
    },
  },
  "points.getTransaction": { 404: unknown("the transaction") },
  "points.findTransactions": {},
  "orders.createOrder": {
    400: { IK1003: "there is no Idempotency-Key" },
    404: unknown("the user"),
    409: { LE0001: processing, LE0006: "another order of the partner has the `reference_id`" },
    422: {
      LE2001: "the user has no points account (or it closed with the user)",
      LE2002: "the balance is short of the order's total",
    },
  },
  "orders.findOrders": {},
  "orders.getOrder": { 404: unknown("the order") },
  "orders.cancelOrder": {
    404: unknown("the order"),
    409: { LE3001: "the order is no longer pending" },
  },
  "webhookDeliveries.listDeliveries": { 404: unknown("the endpoint") },
  "webhookDeliveries.replay": {
    404: { LE0002: "the endpoint, or an event named, is unknown or another partner's" },
    409: { LE0008: "the endpoint is disabled" },
  },
  "webhookEndpoints.createWebhookEndpoint": {
    409: { LE0007: "the partner has 20 endpoints already" },
  },
  "webhookEndpoints.listWebhookEndpoints": {},
  "webhookEndpoints.getWebhookEndpoint": { 404: unknown("the endpoint") },
  "webhookEndpoints.updateWebhookEndpoint": { 404: unknown("the endpoint") },
  "webhookEndpoints.deleteWebhookEndpoint": {
    404: { LE0002: "the endpoint is unknown or another partner's, or deleted already" },
  },
  "webhookEndpoints.rotateWebhookEndpointSecret": { 404: unknown("the endpoint") },
  "events.listEvents": {},
  "events.getEvent": { 404: unknown("the event") },
  "admin.createPartner": {},
  "admin.listPartners": {},
  "admin.getPartner": { 404: { LE0002: "the partner is unknown" } },
  "admin.createCredential": { 404: { LE0002: "the partner is unknown" } },
  "admin.listCredentials": { 404: { LE0002: "the partner is unknown" } },
  "admin.rotateCredentialSecret": {
    404: { LE0002: "the partner or the client credential is unknown" },
    409: { LE0004: "the client credential is revoked" },
  },
  "admin.revokeCredential": {
    404: { LE0002: "the partner or the client credential is unknown" },
    409: { LE0004: "the client credential is revoked already" },
  },
  "health.live": {},
  "health.ready": {},
  "health.metrics": {},
}
