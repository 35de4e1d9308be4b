// The published resource shapes live in the domain (shared with the HTTP contract and the client SDK);
// the read models return exactly these.
export {
  CredentialResource,
  IsoTimestamp,
  OrderItemResource,
  OrderResource,
  type Page,
  PageOf,
  PartnerResource,
  PointsAccountResource,
  StatusChangeResource,
  TransactionResource,
  UserResource,
  WebhookEndpointResource,
} from "@points/domain"
