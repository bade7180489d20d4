/**
 * AuthCode's SMS protection switched off (docs/sms.md), for the tests that hold other behaviour
 * (the wire, the outbox, the stores) with made-up numbers such as +1 555 …, which the default
 * rules refuse as not valid, and with more codes from one address than a real school sends.
 * test/sms/ holds the protection itself, with its defaults.
 */
export const SMS_PROTECTION_OFF: Readonly<Record<string, string>> = {
  SIS_SMS_REFUSE_TYPES: 'none',
  SIS_AUTH_CODE_BACKOFF: 'off',
  SIS_AUTH_CODES_PER_ADDRESS_HOUR: '0',
  SIS_AUTH_CODES_PER_IPV6_48_HOUR: '0',
  SIS_AUTH_CODES_PER_RANGE_HOUR: '0',
  SIS_SMS_COUNTRY_DAILY_LIMITS: 'none',
};
