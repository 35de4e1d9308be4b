import { FiberRef } from "effect"

/** The request id of the current request (its `X-Request-ID`, or a fresh UUID), echoed as `X-Request-Id`. */
export const currentRequestId: FiberRef.FiberRef<string> = FiberRef.unsafeMake("")
