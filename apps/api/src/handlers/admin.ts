import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { PointsApi } from "@points/http-api"
import {
  BearerTokens,
  createPartner,
  getPartnerResource,
  issueCredential,
  listCredentialResources,
  listPartnerResources,
  revokeCredential,
  rotateCredentialSecret,
} from "@points/infrastructure"
import { Effect } from "effect"
import { answer } from "../http/answer.js"
import { writeOptions } from "../http/write-options.js"

// A secret is shown once: no cache may keep the answer that carries it.
const noStore = { "Cache-Control": "no-store", Pragma: "no-cache" }

/** Partners and their client credentials, for operators (Bearer ADMIN_TOKEN). */
export const AdminLive = HttpApiBuilder.group(PointsApi, "admin", (handlers) =>
  handlers
    .handle("createPartner", ({ payload }) => answer(createPartner(payload)), writeOptions)
    .handle("listPartners", ({ urlParams }) => answer(listPartnerResources(urlParams)))
    .handle("getPartner", ({ path }) => answer(getPartnerResource(path.partner_id)))
    .handle(
      "createCredential",
      ({ path, payload }) =>
        answer(
          Effect.map(issueCredential(path.partner_id, payload), (issued) =>
            HttpServerResponse.unsafeJson(issued, { status: 201, headers: noStore }),
          ),
        ),
      writeOptions,
    )
    .handle("listCredentials", ({ path, urlParams }) =>
      answer(listCredentialResources(path.partner_id, urlParams)),
    )
    .handle(
      "rotateCredentialSecret",
      ({ path, urlParams }) =>
        answer(
          Effect.map(
            rotateCredentialSecret(path.partner_id, path.client_id, {
              gracePeriodSeconds: urlParams.grace_seconds,
            }),
            (issued) => HttpServerResponse.unsafeJson(issued, { status: 200, headers: noStore }),
          ),
        ),
      writeOptions,
    )
    .handle(
      "revokeCredential",
      ({ path }) =>
        answer(
          Effect.tap(revokeCredential(path.partner_id, path.client_id), () =>
            // Its tokens are not known by value here: this process forgets every token it remembered.
            Effect.flatMap(BearerTokens, (tokens) => tokens.forgetAll),
          ),
        ),
      writeOptions,
    ),
)
