import { Data } from "effect"

/** Another writer changed the stream since it was read: the decision was made on an old state. */
export class StreamVersionConflict extends Data.TaggedError("StreamVersionConflict")<{
  readonly streamId: string
  readonly expected: string
}> {
  override get message() {
    return `stream ${this.streamId} is no longer at ${this.expected}`
  }
}
