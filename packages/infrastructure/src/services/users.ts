import { type Email, type PartnerUserId, User, UserId, Workflows } from "@points/domain"
import { Effect } from "effect"
import { ledgerStream, userStream } from "../event-store/stream-handle.js"
import { uuidV7 } from "../ids/uuid-v7.js"
import { findUsers, getUser } from "../projections/users.js"
import { appendContextOf, type RequestContext } from "./request-context.js"
import { userIdOf } from "./resource-ids.js"
import { runUnitOfWork } from "./run-unit-of-work.js"
import { writeThenRead } from "./write-then-read.js"

/** Create user: registers a partner's user as `processing`; a consumer activates it shortly after. */
export const registerUser = (
  context: RequestContext,
  input: {
    readonly partner_user_id: PartnerUserId
    readonly email: Email
    readonly name?: string | null | undefined
  },
) => {
  const userId = UserId.make(uuidV7())
  const command = User.RegisterUser.make({
    userId,
    partnerId: context.partnerId,
    partnerUserId: input.partner_user_id,
    email: input.email,
    name: input.name ?? null,
  })
  return writeThenRead(
    runUnitOfWork(
      { user: userStream(userId) },
      (s) => Effect.map(User.decide(command, s.user), (user) => ({ user })),
      appendContextOf(context),
    ),
    () => getUser(context.partnerId, userId),
  ).pipe(Effect.withSpan("users.register"))
}

/** Get user; LE0002 when the partner has no such user. */
export const getUserResource = (context: RequestContext, userId: string) =>
  getUser(context.partnerId, userId).pipe(Effect.withSpan("users.get"))

/** Find users: a page of the partner's users, oldest first, optionally those with a `partner_user_id`. */
export const listUsers = (
  context: RequestContext,
  query: {
    readonly partner_user_id?: string | undefined
    readonly limit?: number | undefined
    readonly cursor?: string | undefined
  },
) => findUsers(context.partnerId, query).pipe(Effect.withSpan("users.list"))

/**
 * Update user: a new e-mail and/or name (a `null` name clears it; an absent field keeps its value).
 * LE0002 unknown, LE0001 while processing, LE0004 when closed.
 */
export const updateUser = (
  context: RequestContext,
  userId: string,
  input: { readonly email?: Email | undefined; readonly name?: string | null | undefined },
) =>
  Effect.gen(function* () {
    const id = yield* userIdOf(userId)
    const command = User.UpdateUser.make({
      userId: id,
      ...(input.email === undefined ? {} : { email: input.email }),
      ...(input.name === undefined ? {} : { name: input.name }),
    })
    return yield* writeThenRead(
      runUnitOfWork(
        { user: userStream(id) },
        (s) => Effect.map(User.decide(command, s.user), (user) => ({ user })),
        appendContextOf(context),
      ),
      () => getUser(context.partnerId, id),
    )
  }).pipe(Effect.withSpan("users.update"))

/**
 * Close user: the user and, if it has one, its points account, in one unit of work. A repeat is LE0004;
 * LE0002 unknown, LE0001 while processing.
 */
export const closeUser = (context: RequestContext, userId: string) =>
  Effect.gen(function* () {
    const id = yield* userIdOf(userId)
    return yield* writeThenRead(
      runUnitOfWork(
        { user: userStream(id), ledger: ledgerStream(id) },
        (s) => Workflows.closeUser({ user: s.user, ledger: s.ledger }, { userId: id }),
        appendContextOf(context),
      ),
      () => getUser(context.partnerId, id),
    )
  }).pipe(Effect.withSpan("users.close"))
