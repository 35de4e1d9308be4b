import { Schema } from "effect"

// The field limits of DESIGN.md section 2. Each is a 400 GH1006 naming the field when broken.
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
} as const

/** A string of 1..max characters without NUL characters. */
export const boundedText = (max: number, identifier: string) =>
  Schema.String.pipe(
    Schema.minLength(1, { message: () => "must not be empty" }),
    Schema.maxLength(max, { message: () => `must be at most ${max} characters` }),
    Schema.filter((text) => !text.includes("\u0000"), { message: () => "must not contain NUL characters" }),
    Schema.annotations({ identifier }),
  )

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

/** A display name. */
export const DisplayName = boundedText(Limits.name, "DisplayName")

/** A free-text description. */
export const Description = boundedText(Limits.description, "Description")

/** A catalogue item's stock keeping unit. */
export const Sku = boundedText(Limits.sku, "Sku").pipe(Schema.brand("Sku"))
export type Sku = typeof Sku.Type
