/** The answer of the Alertmanager webhook (its payload schema lives beside the server's adapter). */
import { Type, type Static } from 'typebox';

export const WebhookAcceptedSchema = Type.Object({
  status: Type.Literal('accepted'),
  incident_id: Type.Optional(
    Type.Integer({ description: "the group's open incident after this notification" }),
  ),
});
export type WebhookAccepted = Static<typeof WebhookAcceptedSchema>;
