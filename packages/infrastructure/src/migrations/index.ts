import { Migrator } from "@effect/sql"
import eventStore from "./0001_event_store.js"
import idempotencyKeys from "./0002_idempotency_keys.js"
import readModels from "./0003_read_models.js"
import consumerCheckpoints from "./0004_consumer_checkpoints.js"
import rateLimits from "./0005_rate_limits.js"
import appendFunction from "./0006_append_function.js"
import accessTokens from "./0007_access_tokens.js"
import webhooks from "./0008_webhooks.js"
import fulfilment from "./0009_fulfilment.js"
import webhookDeliveries from "./0010_webhook_deliveries.js"
import writePath from "./0011_write_path.js"
import appendToStreams from "./0012_append_to_streams.js"
import dropAppendToStreams from "./0013_drop_append_to_streams.js"
import transactionsInLedgerOrder from "./0014_transactions_in_ledger_order.js"
import webhookPreviousSecrets from "./0015_webhook_previous_secrets.js"
import rateLimitClock from "./0016_rate_limit_clock.js"
import webhookFairDispatch from "./0017_webhook_fair_dispatch.js"
import publicEventsTransaction from "./0018_public_events_transaction.js"
import transactionsTransaction from "./0019_transactions_transaction.js"
import ordersUsersTransaction from "./0020_orders_users_transaction.js"
import cursorSecrets from "./0021_cursor_secrets.js"
import webhookDisabledInFlight from "./0022_webhook_disabled_in_flight.js"
import webhookEndpointTurns from "./0023_webhook_endpoint_turns.js"
import webhookOnePreviousSecret from "./0024_webhook_one_previous_secret.js"
import webhookScheduleStep from "./0025_webhook_schedule_step.js"
import webhookEndpointTurnsTaken from "./0026_webhook_endpoint_turns_taken.js"

/** Every migration, in order; the key's number is its id in `effect_sql_migrations`. Never edit a landed one. */
export const migrations = Migrator.fromRecord({
  "0001_event_store": eventStore,
  "0002_idempotency_keys": idempotencyKeys,
  "0003_read_models": readModels,
  "0004_consumer_checkpoints": consumerCheckpoints,
  "0005_rate_limits": rateLimits,
  "0006_append_function": appendFunction,
  "0007_access_tokens": accessTokens,
  "0008_webhooks": webhooks,
  "0009_fulfilment": fulfilment,
  "0010_webhook_deliveries": webhookDeliveries,
  "0011_write_path": writePath,
  "0012_append_to_streams": appendToStreams,
  "0013_drop_append_to_streams": dropAppendToStreams,
  "0014_transactions_in_ledger_order": transactionsInLedgerOrder,
  "0015_webhook_previous_secrets": webhookPreviousSecrets,
  "0016_rate_limit_clock": rateLimitClock,
  "0017_webhook_fair_dispatch": webhookFairDispatch,
  "0018_public_events_transaction": publicEventsTransaction,
  "0019_transactions_transaction": transactionsTransaction,
  "0020_orders_users_transaction": ordersUsersTransaction,
  "0021_cursor_secrets": cursorSecrets,
  "0022_webhook_disabled_in_flight": webhookDisabledInFlight,
  "0023_webhook_endpoint_turns": webhookEndpointTurns,
  "0024_webhook_one_previous_secret": webhookOnePreviousSecret,
  "0025_webhook_schedule_step": webhookScheduleStep,
  "0026_webhook_endpoint_turns_taken": webhookEndpointTurnsTaken,
})
