/**
 * The gateways SIS_SMS_GATEWAY names, built from their settings, in the order they are tried
 * (src/outbox/gateways/: one file per gateway).
 */
import type { Config } from '../config/config-types.js';
import type { GatewayName } from '../config/gateway-settings.js';
import type { Gateway } from './gateways/gateway.js';
import { kannelGateway } from './gateways/kannel.js';
import { smppGateway } from './gateways/smpp.js';
import { twilioGateway } from './gateways/twilio.js';
import { unifonicGateway } from './gateways/unifonic.js';
import { vonageGateway } from './gateways/vonage.js';
import { webhookGateway } from './gateways/webhook-gateway.js';

export function buildGateways(config: Config): Gateway[] {
  const g = config.smsGateways;
  const build = (name: GatewayName): Gateway | null => {
    switch (name) {
      case 'webhook':
        return config.smsWebhook === null ? null : webhookGateway(config.smsWebhook);
      case 'kannel':
        return g.kannel === null ? null : kannelGateway(g.kannel, g.senderId, g.callbackUrl, g.timeoutMs);
      case 'smpp':
        return g.smpp === null ? null : smppGateway(g.smpp, g.senderId, g.timeoutMs);
      case 'twilio':
        return g.twilio === null ? null : twilioGateway(g.twilio, g.senderId, g.callbackUrl, g.timeoutMs);
      case 'vonage':
        return g.vonage === null ? null : vonageGateway(g.vonage, g.senderId, g.callbackUrl, g.timeoutMs);
      case 'unifonic':
        return g.unifonic === null ? null : unifonicGateway(g.unifonic, g.senderId, g.timeoutMs);
    }
  };
  return g.names.map(build).filter((x): x is Gateway => x !== null);
}
