import { DateTime, Effect } from "effect"
import type { IdempotencyKeyInProgress, IdempotencyKeyReused } from "../errors/idempotency-errors.js"
import { InvariantViolation, unknownCommand, validatedElsewhere } from "../shared/decider.js"
import { ClaimDecision, claimDecision } from "./claim-decision.js"
import type { ClaimKey, IdempotencyKeyCommand } from "./commands.js"
import { type IdempotencyKeyEvent, KeyClaimed, KeyExpired, KeyReleased, ResponseRecorded } from "./events.js"
import { isRecordable, sameResponse } from "./response.js"
import { type IdempotencyKeyState, isLive } from "./state.js"

/** The errors a key command can be refused with: IK1001 and IK1002. */
export type IdempotencyKeyError = IdempotencyKeyReused | IdempotencyKeyInProgress

const claim = (
  command: ClaimKey,
  state: IdempotencyKeyState,
  at: DateTime.Utc,
): Effect.Effect<ReadonlyArray<IdempotencyKeyEvent>, IdempotencyKeyError> =>
  Effect.map(claimDecision(state, command, at), (decision) => {
    const { partnerId, key, fingerprint } = command
    const leaseExpiresAt = DateTime.add(at, { seconds: command.leaseSeconds })
    const fresh = { firstReceivedAt: at, expiresAt: DateTime.add(at, { seconds: command.lifetimeSeconds }) }
    // A taken-over key keeps its lifetime: it counts from the first receipt, not from this one. A released
    // one is free again, as if never used (a rolled-back claim leaves nothing behind either).
    const lifetime = isLive(state)
      ? { firstReceivedAt: state.firstReceivedAt, expiresAt: state.expiresAt }
      : fresh
    const claimed = (takeover: boolean, times: typeof fresh) =>
      KeyClaimed.make(
        { partnerId, key, fingerprint, ...times, leaseExpiresAt, takeover, at },
        validatedElsewhere,
      )
    return ClaimDecision.$match(decision, {
      Execute: () => [claimed(false, fresh)],
      ExecuteAnew: () => [KeyExpired.make({ partnerId, key, at }, validatedElsewhere), claimed(false, fresh)],
      TakeOver: () => [claimed(true, lifetime)],
      // The caller answers with the recorded response; the key does not change.
      Replay: () => [],
    })
  })

/** Decides an idempotency key command against the key's current state. */
export const decide = (
  command: IdempotencyKeyCommand,
  state: IdempotencyKeyState,
): Effect.Effect<ReadonlyArray<IdempotencyKeyEvent>, IdempotencyKeyError> =>
  Effect.gen(function* () {
    const { partnerId, key } = command
    // The stream is one partner's key; a command for another key (or another partner's) is a routing bug.
    if (state._tag !== "Unclaimed" && (state.partnerId !== partnerId || state.key !== key)) {
      return yield* Effect.die(new InvariantViolation(`${command._tag} for another key`))
    }
    const at = yield* DateTime.now
    switch (command._tag) {
      case "ClaimKey":
        return yield* claim(command, state, at)
      case "RecordResponse": {
        // Only the claiming request records, once; a redelivered identical record is harmless, another is a bug.
        if (state._tag === "Completed") {
          if (sameResponse(state.response, command.response)) return []
          return yield* Effect.die(new InvariantViolation("a key records at most one response per lifetime"))
        }
        if (state._tag !== "Claimed") {
          return yield* Effect.die(new InvariantViolation(`RecordResponse while the key is ${state._tag}`))
        }
        const { status } = command.response
        return isRecordable(status)
          ? [ResponseRecorded.make({ partnerId, key, response: command.response, at }, validatedElsewhere)]
          : [KeyReleased.make({ partnerId, key, status, at }, validatedElsewhere)]
      }
      case "ReleaseKey":
        if (state._tag !== "Claimed") {
          return yield* Effect.die(new InvariantViolation(`ReleaseKey while the key is ${state._tag}`))
        }
        return [KeyReleased.make({ partnerId, key, status: null, at }, validatedElsewhere)]
      case "ExpireKey": {
        if (!isLive(state) || DateTime.lessThan(at, state.expiresAt)) return []
        // A request still within its lease may be executing; its key lives until it finishes or the lease ends.
        if (state._tag === "Claimed" && DateTime.lessThan(at, state.leaseExpiresAt)) return []
        return [KeyExpired.make({ partnerId, key, at }, validatedElsewhere)]
      }
      default:
        return yield* unknownCommand(command)
    }
  })
