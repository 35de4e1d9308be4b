import { Migrator } from "@effect/sql"
import eventStore from "./0001_event_store.js"

/** Every migration, in order; the key's number is its id in `effect_sql_migrations`. Never edit a landed one. */
export const migrations = Migrator.fromRecord({
  "0001_event_store": eventStore,
})
