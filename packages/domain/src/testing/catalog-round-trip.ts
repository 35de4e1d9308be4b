import { Arbitrary, Effect, FastCheck } from "effect"
import type { EventCatalog } from "../shared/event-catalog.js"
import { SpecificationFailure } from "./specification-failure.js"
import { structurallyEqual } from "./structural-equality.js"

/**
 * Property: every event the catalog's schema can describe survives `encode` then `decode` unchanged, so
 * nothing an aggregate records is lost in the store. Events are generated from the schemas themselves.
 */
export const checkCatalogRoundTrip = <Event>(
  catalog: EventCatalog<Event>,
  options: { readonly numRuns?: number } = {},
): Effect.Effect<void> =>
  Effect.sync(() => {
    const events = Arbitrary.make(catalog.schema)
    FastCheck.assert(
      FastCheck.property(events, (event) => {
        const stored = catalog.encode(event)
        const decoded = Effect.runSync(Effect.either(catalog.decode(JSON.parse(JSON.stringify(stored)))))
        if (decoded._tag === "Left" || !structurallyEqual(decoded.right, event)) {
          throw new SpecificationFailure("an event did not survive the store's round trip", decoded, event)
        }
      }),
      { numRuns: options.numRuns ?? 200 },
    )
  })
