-- Revocable access tokens (issue 15): a token is refused once `revoked_at` is set, by the
-- partner (RFC 7009 POST /channel/v1/oauth/revoke), by `secret:rotate` or by `app:suspend`.
-- Revoked rows stay until the housekeeping of the token endpoint deletes them a day after expiry.

-- AlterTable
ALTER TABLE "access_tokens" ADD COLUMN "revoked_at" TIMESTAMPTZ(3);
