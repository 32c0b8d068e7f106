import { Type, type Static } from 'typebox';

const Param = (description: string) => Type.Optional(Type.String({ maxLength: 4096, description }));

/**
 * RFC 6749 §4.4.2 / §6 token request, form-encoded or JSON. Every parameter is optional here so
 * that a missing or unsupported one gets its RFC error (`invalid_request`,
 * `unsupported_grant_type`) from the handler rather than a generic validation failure. A parameter
 * sent twice arrives as a list and fails validation: RFC 6749 §3.2 forbids repeating parameters.
 */
export const TokenRequest = Type.Object({
  grant_type: Param('client_credentials or refresh_token'),
  client_id: Param('client id, when not sent with HTTP Basic'),
  client_secret: Param('client secret, when not sent with HTTP Basic'),
  scope: Param('space-separated scopes; default: all'),
  refresh_token: Param('grant_type=refresh_token: the refresh token to rotate'),
});
export type TokenRequest = Static<typeof TokenRequest>;

export const TokenResponse = Type.Object({
  access_token: Type.String(),
  token_type: Type.Literal('Bearer'),
  expires_in: Type.Integer({ description: 'seconds' }),
  refresh_token: Type.String(),
  scope: Type.String(),
});

export const OAuthErrorBody = Type.Object({ error: Type.String(), error_description: Type.String() });
