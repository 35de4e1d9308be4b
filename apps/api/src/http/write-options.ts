/**
 * Handler options of every write: it runs to completion even if the client disconnects. Cancelling a write
 * half-way helps no one, and the client's retry (with its Idempotency-Key) must find the recorded outcome.
 */
export const writeOptions = { uninterruptible: true } as const
