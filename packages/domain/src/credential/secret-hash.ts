import { Schema } from "effect"
import { boundedText } from "../shared/text.js"

/**
 * A client secret as the platform keeps it: the encoded slow hash (e.g. an Argon2id string), made outside
 * the domain. Opaque here; the secret itself is never stored.
 */
export const SecretHash = boundedText(1024, "SecretHash").pipe(Schema.brand("SecretHash"))
export type SecretHash = typeof SecretHash.Type
