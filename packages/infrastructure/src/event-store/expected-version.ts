import { Data } from "effect"

/**
 * What an append expects of the stream: that it does not exist yet, that it is exactly at a version (the
 * version the decision was made on), or anything (for streams only ever appended to, never decided on).
 */
export type ExpectedVersion = Data.TaggedEnum<{
  NoStream: {}
  Exact: { readonly version: bigint }
  Any: {}
}>

/** Constructors and matchers for expected versions. */
export const ExpectedVersion = Data.taggedEnum<ExpectedVersion>()

/** The expected version after loading a stream at `version` (0: it does not exist). */
export const expectVersion = (version: bigint): ExpectedVersion =>
  version === 0n ? ExpectedVersion.NoStream() : ExpectedVersion.Exact({ version })
