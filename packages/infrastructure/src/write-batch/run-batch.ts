import { IdempotencyKey, InvariantViolation } from "@points/domain"
import { Effect, Either, Schema } from "effect"
import type { AppendRequest } from "../event-store/append-to-stream.js"
import { appendToStreams } from "../event-store/append-to-streams.js"
import { loadState } from "../event-store/decide-and-append.js"
import { expectVersion } from "../event-store/expected-version.js"
import { InlineProjection } from "../event-store/inline-projection.js"
import { lockStreams } from "../event-store/lock-streams.js"
import type { AppendContext, RecordedEvent } from "../event-store/recorded-event.js"
import type { AnyStreamHandle } from "../event-store/stream-handle.js"
import type { StreamId } from "../event-store/stream-id.js"
import type { ClaimKeyRequest } from "../idempotency/claim-key.js"
import type { AnyUnitPlan } from "../services/unit-plan.js"
import { completedKeysOf, insertCompletedKeys, keyIdOf, keysWithRows, lockKeys } from "./batch-keys.js"

/** One request in a batch: its write as a plan, its key's claim, and how its answer is recorded. */
export interface BatchEntry {
  readonly plan: AnyUnitPlan
  readonly claim: ClaimKeyRequest
  /** The response the request answers (and its key records) for the plan's answer. */
  readonly respond: (answer: unknown) => IdempotencyKey.RecordedResponse
}

/**
 * What became of a request in a batch: committed with its response; in progress (its key is the key of an
 * earlier request of the same batch, which runs it: IK1002, as for any request that arrives while its key's
 * request runs); or left to run alone (its key was held or known, its decision refused, or the batch rolled
 * back). Nothing of a request in progress or left to run alone was written.
 */
export type BatchResult =
  | { readonly _tag: "Committed"; readonly response: IdempotencyKey.RecordedResponse }
  | { readonly _tag: "InProgress" }
  | { readonly _tag: "RunAlone" }

/** The result of a request the batch did not write. */
export const runAlone: BatchResult = { _tag: "RunAlone" }

/** The result of a request whose key an earlier request of its batch holds. */
export const inProgress: BatchResult = { _tag: "InProgress" }

// A stream of the batch: as locked and loaded, as the decisions so far left it, and the appends they made.
interface BatchStream {
  readonly handle: AnyStreamHandle
  readonly partnerId: string
  readonly loadedVersion: bigint
  readonly loadedState: unknown
  state: unknown
  readonly appends: Array<{
    readonly member: number
    readonly events: ReadonlyArray<unknown>
    readonly context: AppendContext
  }>
}

const streamKeyOf = (partnerId: string, streamId: StreamId) => `${partnerId} ${streamId}`

const handlesOf = (plan: AnyUnitPlan) => Object.entries(plan.streams)

/**
 * Runs the plans of many idempotent requests in the caller's transaction, as one unit of work: the keys are
 * try-locked and must be new, the streams of every plan are locked and loaded once, each plan is decided in
 * order on the states the plans before it left (so two movements of one account see each other), every
 * stream's events are appended in one statement, each changed stream's read models written once, and each
 * key inserted completed with its response. A request whose key is held or known, whose decision refuses,
 * or that reads a stream that does not exist is not written here (RunAlone): it runs alone afterwards, where
 * claims, refusals and replays are answered as usual. Any failure (a version conflict, a database error)
 * fails the whole batch, and the caller's rollback leaves every request to run alone.
 */
export const runBatch = (
  entries: ReadonlyArray<BatchEntry>,
  /** Told which entries execute (their keys are new and theirs), once the batch has checked its keys. */
  onExecuting: (executing: ReadonlyArray<BatchEntry>) => void = () => {},
) =>
  Effect.gen(function* () {
    const projection = yield* InlineProjection
    const results: Array<BatchResult> = entries.map(() => runAlone)
    const entryAt = (index: number) => {
      const entry = entries[index]
      if (entry === undefined) throw new InvariantViolation(`no batch entry ${index}`)
      return entry
    }

    // One request per key; the others with the key wait below for what becomes of the first.
    const firstOf = new Map<string, number>()
    const repeats: Array<{ readonly index: number; readonly first: number }> = []
    let members: Array<number> = []
    entries.forEach((entry, index) => {
      const id = keyIdOf(entry.claim.partnerId, entry.claim.key)
      const first = firstOf.get(id)
      if (first === undefined) {
        firstOf.set(id, index)
        members.push(index)
      } else {
        repeats.push({ index, first })
      }
    })
    if (members.length === 0) return results
    const leaseSeconds = Math.min(...members.map((index) => entryAt(index).claim.leaseSeconds))
    const keys = yield* lockKeys(
      members.map((index) => entryAt(index).claim),
      leaseSeconds,
    )
    members = members.filter((_, n) => keys.locked[n] === true)
    if (members.length === 0) return results
    const known = yield* keysWithRows(members.map((index) => entryAt(index).claim))
    members = members.filter((index) => {
      const { partnerId, key } = entryAt(index).claim
      return !known.has(keyIdOf(partnerId, key))
    })
    if (members.length === 0) return results
    // A repeat of a key whose first request runs here arrived while it runs: IK1002, as DESIGN.md section 4
    // says, whatever becomes of the first; unless it is another request (another fingerprint), which runs
    // alone and is refused IK1001 there, as the key's claim decides. A repeat of a held or known key runs
    // alone, as a retry would (replayed once the key is recorded).
    onExecuting(members.map(entryAt))
    const running = new Set(members)
    for (const { index, first } of repeats) {
      if (!running.has(first)) continue
      if (IdempotencyKey.sameRequest(entryAt(first).claim.fingerprint, entryAt(index).claim.fingerprint)) {
        results[index] = inProgress
      }
    }

    // Every stream of every plan, locked per partner (FOR UPDATE when any plan may write it) and loaded once.
    const streams = new Map<string, BatchStream>()
    const locks = new Map<string, { write: Set<StreamId>; read: Set<StreamId> }>()
    for (const index of members) {
      const plan = entryAt(index).plan
      const sets = locks.get(plan.context.partnerId) ?? { write: new Set(), read: new Set() }
      locks.set(plan.context.partnerId, sets)
      for (const [, handle] of handlesOf(plan)) {
        ;(handle.access === "read" ? sets.read : sets.write).add(handle.streamId)
      }
    }
    for (const [partnerId, sets] of locks) {
      const locked = yield* lockStreams({
        partnerId,
        write: [...sets.write],
        read: [...sets.read].filter((id) => !sets.write.has(id)),
      })
      for (const index of members) {
        const plan = entryAt(index).plan
        if (plan.context.partnerId !== partnerId) continue
        for (const [, handle] of handlesOf(plan)) {
          const key = streamKeyOf(partnerId, handle.streamId)
          if (streams.has(key)) continue
          const loaded = yield* loadState(handle, partnerId, locked.get(handle.streamId))
          streams.set(key, {
            handle,
            partnerId,
            loadedVersion: loaded.version,
            loadedState: loaded.state,
            state: loaded.state,
            appends: [],
          })
        }
      }
    }
    const streamOf = (plan: AnyUnitPlan, handle: AnyStreamHandle) => {
      const stream = streams.get(streamKeyOf(plan.context.partnerId, handle.streamId))
      if (stream === undefined) throw new InvariantViolation(`stream ${handle.streamId} was not loaded`)
      return stream
    }

    // Each plan decided on the states the plans before it left.
    const decided: Array<{ readonly member: number; readonly states: Record<string, unknown> }> = []
    for (const member of members) {
      const plan = entryAt(member).plan
      const handles = handlesOf(plan)
      const states = Object.fromEntries(handles.map(([name, handle]) => [name, streamOf(plan, handle).state]))
      const decision = yield* Effect.either(plan.decide(states))
      if (Either.isLeft(decision)) continue
      const changes = handles.map(([name, handle]) => {
        const events: ReadonlyArray<unknown> = decision.right[name] ?? []
        return { name, handle, stream: streamOf(plan, handle), events }
      })
      // A stream that does not exist and is only read must still not exist at commit: the unit of work
      // alone checks that.
      if (changes.some(({ stream, events }) => events.length === 0 && stream.loadedVersion === 0n)) continue
      const after: Record<string, unknown> = {}
      for (const { name, handle, stream, events } of changes) {
        after[name] = events.reduce(handle.decider.evolve, stream.state)
        if (events.length === 0) continue
        stream.state = after[name]
        stream.appends.push({ member, events, context: plan.context })
      }
      decided.push({ member, states: after })
    }
    if (decided.length === 0) return results

    // Every append of every stream in one statement, a stream's appends in decision order, each at the
    // version the one before it left; the last one keeps the stream's snapshot.
    const requests: Array<AppendRequest<unknown>> = []
    const owners: Array<{ readonly member: number; readonly stream: BatchStream }> = []
    for (const stream of streams.values()) {
      let version = stream.loadedVersion
      stream.appends.forEach((append, n) => {
        const snapshot = stream.handle.snapshot
        const last = n === stream.appends.length - 1
        requests.push({
          streamId: stream.handle.streamId,
          expected: expectVersion(version),
          events: append.events,
          catalog: stream.handle.catalog,
          context: append.context,
          ...(snapshot !== undefined && last
            ? { snapshot: { name: snapshot.name, state: Schema.encodeSync(snapshot.schema)(stream.state) } }
            : {}),
        })
        owners.push({ member: append.member, stream })
        version += BigInt(append.events.length)
      })
    }
    const appended = yield* appendToStreams(requests)
    const recordedOf = new Map<BatchStream, Array<RecordedEvent>>()
    const recordedBy = new Map<string, ReadonlyArray<RecordedEvent>>()
    appended.forEach((result, n) => {
      const owner = owners[n]
      if (owner === undefined) return
      recordedOf.set(owner.stream, [...(recordedOf.get(owner.stream) ?? []), ...result.recorded])
      recordedBy.set(`${owner.member} ${owner.stream.handle.streamId}`, result.recorded)
    })

    // The read models of each changed stream, once, from its state after every decision.
    for (const [stream, recorded] of recordedOf) {
      yield* projection.apply({
        streamId: stream.handle.streamId,
        partnerId: stream.partnerId,
        stateBefore: stream.loadedState,
        events: recorded,
        state: stream.state,
      })
    }

    // Each request's answer from what its own decision recorded, and its key, completed with it.
    const answered = []
    for (const { member, states } of decided) {
      const entry = entryAt(member)
      const appendedByName = Object.fromEntries(
        handlesOf(entry.plan).map(([name, handle]) => [
          name,
          recordedBy.get(`${member} ${handle.streamId}`) ?? [],
        ]),
      )
      const answer = yield* entry.plan.answer({ states, appended: appendedByName })
      const response = entry.respond(answer)
      answered.push({ claim: entry.claim, response })
      results[member] = { _tag: "Committed", response }
    }
    const completed = yield* Effect.orDie(completedKeysOf(answered, keys.now))
    yield* insertCompletedKeys(completed, keys.now)
    return results
  })
