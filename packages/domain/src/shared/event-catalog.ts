import { Data, Effect, type ParseResult, Schema } from "effect"

/** An event as the store keeps it: its type, the version of its payload's schema, and the encoded payload. */
export interface StoredEvent {
  readonly type: string
  readonly version: number
  readonly data: Readonly<Record<string, unknown>>
}

/** Turns an encoded payload of version n into version n + 1. Written once per schema change, never edited. */
export type Upcaster = (data: Readonly<Record<string, unknown>>) => Record<string, unknown>

/** A stored event whose type no catalog of this release knows. */
export class UnknownEventType extends Data.TaggedError("UnknownEventType")<{ readonly type: string }> {}

/** A stored event written by a newer release than this one (its version is ahead of ours). */
export class EventVersionNotSupported extends Data.TaggedError("EventVersionNotSupported")<{
  readonly type: string
  readonly version: number
  readonly current: number
}> {}

type TaggedSchema = Schema.Schema.AnyNoContext & { readonly _tag: string }

/** The events of one aggregate, with what it takes to store them and to read back any older version. */
export interface EventCatalog<Event> {
  /** The union of the aggregate's event schemas. */
  readonly schema: Schema.Schema<Event, { readonly _tag: string }>
  /** The event types of this catalog. */
  readonly types: ReadonlyArray<string>
  /** The current payload version of an event type (1 + the number of its upcasters). */
  readonly versionOf: (type: string) => number
  /** Encodes an event for the store at its current version. */
  readonly encode: (event: Event) => StoredEvent
  /** Reads a stored event of any version up to the current one, upcasting older payloads step by step. */
  readonly decode: (
    stored: StoredEvent,
  ) => Effect.Effect<Event, ParseResult.ParseError | UnknownEventType | EventVersionNotSupported>
}

/**
 * Builds the catalog of an aggregate's events. `upcasters[type][n]` turns version n of that type into n + 1,
 * so the current version of a type is one more than its highest upcaster; a type without upcasters is at 1.
 */
export const eventCatalog = <const Members extends ReadonlyArray<TaggedSchema>>(
  members: Members,
  upcasters: { readonly [Tag in Members[number]["_tag"]]?: Readonly<Record<number, Upcaster>> } = {},
): EventCatalog<Schema.Schema.Type<Members[number]>> => {
  type Event = Schema.Schema.Type<Members[number]>
  const schema = Schema.Union(...members) as unknown as Schema.Schema<Event, { readonly _tag: string }>
  const types = members.map((member) => member._tag)
  const chains = upcasters as Readonly<Record<string, Readonly<Record<number, Upcaster>> | undefined>>
  const current = new Map(
    types.map((type) => [type, 1 + Math.max(0, ...Object.keys(chains[type] ?? {}).map(Number))] as const),
  )
  const encodeEvent = Schema.encodeSync(schema)
  const decodeEvent = Schema.decodeUnknown(schema)

  const versionOf = (type: string) => current.get(type) ?? 0

  const encode = (event: Event): StoredEvent => {
    const { _tag, ...data } = encodeEvent(event)
    return { type: _tag, version: versionOf(_tag), data }
  }

  const decode = (stored: StoredEvent) =>
    Effect.gen(function* () {
      const latest = current.get(stored.type)
      if (latest === undefined) return yield* new UnknownEventType({ type: stored.type })
      if (stored.version > latest || stored.version < 1) {
        return yield* new EventVersionNotSupported({
          type: stored.type,
          version: stored.version,
          current: latest,
        })
      }
      let data = stored.data
      for (let version = stored.version; version < latest; version++) {
        const step = chains[stored.type]?.[version]
        if (step === undefined) {
          return yield* new EventVersionNotSupported({ type: stored.type, version, current: latest })
        }
        data = step(data)
      }
      return yield* decodeEvent({ ...data, _tag: stored.type })
    })

  return { schema, types, versionOf, encode, decode }
}
