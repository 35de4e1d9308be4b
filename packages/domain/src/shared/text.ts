import { Schema } from "effect"

/** The field limits of DESIGN.md section 2. Each is a 400 GH1006 naming the field when broken. */
export const Limits = {
  partnerUserId: 255,
  referenceId: 255,
  email: 320,
  name: 200,
  description: 1000,
  sku: 100,
  itemsMin: 1,
  itemsMax: 100,
  quantityMin: 1,
  quantityMax: 1000,
  webhookUrl: 2048,
  // Bounds on the lists of a request, so that one body costs a bounded amount of work to check.
  eventTypesMax: 100,
  replayEventIdsMax: 1000,
} as const

// An unpaired UTF-16 surrogate: JSON can carry one (`"\ud800"`), PostgreSQL refuses it in jsonb.
const unpairedSurrogate = /\p{Surrogate}/u

/** True when the text has at most `max` characters (code points), without counting past the limit. */
const hasAtMostCharacters = (text: string, max: number): boolean => {
  // A code point takes one or two code units: a text of at most `max` units is short enough.
  if (text.length <= max) return true
  let count = 0
  for (const _ of text) if (++count > max) return false
  return true
}

// A filter on strings that keeps the type of the schema it refines, as Effect's own `maxLength` does.
const stringFilter =
  (
    predicate: (text: string) => boolean,
    annotations: Pick<Schema.Annotations.Filter<string>, "title" | "description" | "jsonSchema" | "message">,
  ) =>
  <S extends Schema.Schema.Any, A extends string>(
    self: S & Schema.Schema<A, Schema.Schema.Encoded<S>, Schema.Schema.Context<S>>,
  ): Schema.filter<S> =>
    self.pipe(Schema.filter((text) => predicate(text), annotations))

/**
 * A filter for strings of at most `max` characters (code points, not UTF-16 code units: 100 emoji are 100
 * characters); documented as JSON Schema `maxLength`, which also counts code points.
 */
export const maxCharacters = (max: number) =>
  stringFilter((text) => hasAtMostCharacters(text, max), {
    title: `maxLength(${max})`,
    description: `a string at most ${max} character(s) long`,
    jsonSchema: { maxLength: max },
    message: () => `must be at most ${max} characters`,
  })

const NUL_PROBLEM = "must not contain NUL characters"
const SURROGATE_PROBLEM = "must be valid Unicode text"

/** Refuses a NUL character: PostgreSQL refuses it in text and jsonb, DESIGN.md section 2 anywhere. */
export const withoutNul = stringFilter((text) => !text.includes("\u0000"), {
  message: () => NUL_PROBLEM,
})

/** Refuses an unpaired UTF-16 surrogate (a lone `\ud800`), which PostgreSQL refuses in jsonb. */
export const wellFormed = stringFilter((text) => !unpairedSurrogate.test(text), {
  message: () => SURROGATE_PROBLEM,
})

/** Why PostgreSQL could not store this text as it is (as withoutNul and wellFormed say it), or null. */
export const unstorableTextProblem = (text: string): string | null => {
  if (text.includes("\u0000")) return NUL_PROBLEM
  return unpairedSurrogate.test(text) ? SURROGATE_PROBLEM : null
}

/**
 * A string PostgreSQL stores as it is: no NUL character and no unpaired surrogate. Every text a request
 * carries (ids, filters and cursors included) is at least this.
 */
export const Text = Schema.String.pipe(withoutNul, wellFormed)

/** A Text of 1..max characters: an identifier or a label, which names nothing when empty. */
export const boundedText = (max: number, identifier: string) =>
  Schema.String.pipe(
    Schema.minLength(1, { message: () => "must not be empty" }),
    maxCharacters(max),
    withoutNul,
    wellFormed,
    Schema.annotations({ identifier }),
  )

/**
 * A Text of 0..max characters: free text, where an empty text is a value (DESIGN.md section 2 bounds names
 * and descriptions only above; a partner sending a blank field as "" is not refused).
 */
export const freeText = (max: number, identifier: string) =>
  Schema.String.pipe(maxCharacters(max), withoutNul, wellFormed, Schema.annotations({ identifier }))

/** The partner's own id for its user. */
export const PartnerUserId = boundedText(Limits.partnerUserId, "PartnerUserId").pipe(
  Schema.brand("PartnerUserId"),
)
export type PartnerUserId = typeof PartnerUserId.Type

/** The client-supplied id used to reconcile a transaction or an order; unique per partner and kind. */
export const ReferenceId = boundedText(Limits.referenceId, "ReferenceId").pipe(Schema.brand("ReferenceId"))
export type ReferenceId = typeof ReferenceId.Type

/** An e-mail address: only its rough shape is checked; deliverability is the partner's business. */
export const Email = boundedText(Limits.email, "Email").pipe(
  Schema.pattern(/^[^\s@]+@[^\s@]+$/, { message: () => "must be an e-mail address" }),
  Schema.brand("Email"),
)
export type Email = typeof Email.Type

/** A display name (a user's, an order item's): free text, possibly empty. */
export const DisplayName = freeText(Limits.name, "DisplayName")

/** A free-text description, possibly empty. */
export const Description = freeText(Limits.description, "Description")

// A control character (C0, DEL, C1), a line or paragraph separator, or a mark that reorders text (bidi
// embeddings, overrides and isolates): in a name it would forge lines, colours or the order of what is shown
// wherever the name is printed (the admin CLI's tables, logs, terminals).
/** The characters a Label refuses (see Label), as a RegExp character class (with the `u` flag). */
export const CONTROL_CHARACTER_CLASS = "[\\p{Cc}\\u2028\\u2029\\u202a-\\u202e\\u2066-\\u2069]"
const controlCharacter = new RegExp(CONTROL_CHARACTER_CLASS, "u")
const CONTROL_RANGES = "\\u0000-\\u001f\\u007f-\\u009f\\u2028\\u2029\\u202a-\\u202e\\u2066-\\u2069"

// Something a reader sees: not white space, nor a character that shows nothing (a zero-width space, a filler).
const visibleCharacter = /[^\p{White_Space}\p{Default_Ignorable_Code_Point}]/u

/**
 * A name as the events of partners and credentials recorded it: 1..200 characters. The rules for a new name
 * (Label) may tighten; a name recorded under older ones still reads back.
 */
export const RecordedLabel = boundedText(Limits.name, "RecordedLabel")

/**
 * The name an operator gives a partner or a client credential: 1..200 characters, something visible in it
 * (never blank, so every listing shows one) and no control character (no line, tab, escape or direction mark
 * of its own).
 */
export const Label = Schema.String.pipe(
  Schema.minLength(1, { message: () => "must not be empty" }),
  maxCharacters(Limits.name),
  withoutNul,
  wellFormed,
  stringFilter((text) => !controlCharacter.test(text), {
    message: () => "must not contain control characters (line breaks, tabs, escapes, direction marks)",
    // Documented as one pattern: no control character, and one that is not white space.
    jsonSchema: { pattern: `^[^${CONTROL_RANGES}]*[^\\s${CONTROL_RANGES}][^${CONTROL_RANGES}]*$` },
  }),
  stringFilter((text) => visibleCharacter.test(text), { message: () => "must not be blank" }),
  Schema.annotations({ identifier: "Label" }),
)

/** A catalogue item's stock keeping unit. */
export const Sku = boundedText(Limits.sku, "Sku").pipe(Schema.brand("Sku"))
export type Sku = typeof Sku.Type
