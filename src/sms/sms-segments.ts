/**
 * What a text costs: its alphabet (GSM 7-bit, or UCS-2 for anything GSM cannot write, Arabic
 * among it) and its segments (160 or 70 characters alone, 153 or 67 each when split), counted by
 * Twilio's message-segment-calculator (`sms-segments-calculator`), the way carriers bill them.
 */
import { SegmentedMessage } from 'sms-segments-calculator';

export interface SmsSize {
  readonly encoding: 'GSM-7' | 'UCS-2';
  readonly segments: number;
  /** Characters as the alphabet counts them (a GSM escape such as € counts two). */
  readonly characters: number;
}

export function smsSize(text: string): SmsSize {
  const m = new SegmentedMessage(text, 'auto');
  return { encoding: m.encodingName, segments: m.segmentsCount, characters: m.numberOfCharacters };
}
