import type { PartnerId } from "@points/domain"
import type { AppendContext } from "../event-store/recorded-event.js"

/** Who is asking, for every partner-scoped operation. */
export interface RequestContext {
  readonly partnerId: PartnerId
  /** The request's `X-Request-Id`, recorded with every event it causes. */
  readonly requestId: string
  /** The `Idempotency-Key` (or the random one used in its place), recorded with every event it causes. */
  readonly idempotencyKey: string | null
}

/** The metadata a request's events carry: a request is the start of its conversation, caused by no message. */
export const appendContextOf = (context: RequestContext): AppendContext => ({
  partnerId: context.partnerId,
  requestId: context.requestId,
  idempotencyKey: context.idempotencyKey,
  causationId: null,
  correlationId: null,
})
