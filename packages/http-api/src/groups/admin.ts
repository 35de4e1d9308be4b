import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import { CredentialResource, IsoTimestamp, Label, PageOf, PartnerResource } from "@points/domain"
import { Schema } from "effect"
import { ErrorAt } from "../api-error.js"
import { jsonBody } from "../body.js"
import { GraceSeconds, PathId, pagingQuery, queryParams } from "../query.js"
import { AdminAuthentication } from "../security.js"

/** A client credential with its secret: answered once, on creation and rotation. */
export const IssuedCredentialResource = Schema.Struct({
  client_id: Schema.String,
  client_secret: Schema.String,
  created_at: IsoTimestamp,
}).pipe(Schema.annotations({ identifier: "IssuedClientCredential" }))

/**
 * A rotation's answer: the new secret, shown once, with the time it was made (`created_at`: the rotation's),
 * and until when the replaced one keeps working.
 */
export const RotatedCredentialResource = Schema.Struct({
  ...IssuedCredentialResource.fields,
  previous_secret_valid_until: IsoTimestamp,
}).pipe(Schema.annotations({ identifier: "RotatedClientCredential" }))

const partnerPath = Schema.Struct({ partner_id: PathId })
const clientPath = Schema.Struct({ partner_id: PathId, client_id: PathId })

/** The admin API: partners and their client credentials (Bearer ADMIN_TOKEN; off when it is unset). */
export class AdminGroup extends HttpApiGroup.make("admin")
  .add(
    HttpApiEndpoint.post("createPartner", "/admin/api/partners")
      .setPayload(jsonBody(Schema.Struct({ name: Label })))
      .addSuccess(PartnerResource, { status: 201 })
      .addError(ErrorAt[400]),
  )
  .add(
    HttpApiEndpoint.get("listPartners", "/admin/api/partners")
      .setUrlParams(queryParams(pagingQuery("partners")))
      .addSuccess(PageOf(PartnerResource))
      .addError(ErrorAt[400]),
  )
  .add(
    HttpApiEndpoint.get("getPartner", "/admin/api/partners/:partner_id")
      .setPath(partnerPath)
      .addSuccess(PartnerResource)
      .addError(ErrorAt[404]),
  )
  .add(
    HttpApiEndpoint.post("createCredential", "/admin/api/partners/:partner_id/clients")
      .setPath(partnerPath)
      .setPayload(jsonBody(Schema.Struct({ name: Schema.optional(Schema.NullOr(Label)) })))
      .addSuccess(IssuedCredentialResource, { status: 201 })
      .addError(ErrorAt[400])
      .addError(ErrorAt[404]),
  )
  .add(
    HttpApiEndpoint.get("listCredentials", "/admin/api/partners/:partner_id/clients")
      .setPath(partnerPath)
      .setUrlParams(queryParams(pagingQuery("clients")))
      .addSuccess(PageOf(CredentialResource))
      .addError(ErrorAt[400])
      .addError(ErrorAt[404]),
  )
  .add(
    HttpApiEndpoint.post(
      "rotateCredentialSecret",
      "/admin/api/partners/:partner_id/clients/:client_id/rotate-secret",
    )
      .setPath(clientPath)
      .setUrlParams(queryParams(Schema.Struct({ grace_seconds: Schema.optional(GraceSeconds) })))
      .addSuccess(RotatedCredentialResource)
      .addError(ErrorAt[400])
      .addError(ErrorAt[404])
      .addError(ErrorAt[409]),
  )
  .add(
    HttpApiEndpoint.del("revokeCredential", "/admin/api/partners/:partner_id/clients/:client_id")
      .setPath(clientPath)
      .addSuccess(CredentialResource)
      .addError(ErrorAt[404])
      .addError(ErrorAt[409]),
  )
  .middleware(AdminAuthentication) {}
