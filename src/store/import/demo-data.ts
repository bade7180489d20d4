/**
 * The demo dataset, loaded on the first start of an empty database: the reference service's
 * schools and devices (examples/dataset.json holds the same records). Non-ASCII is escaped so the
 * exact code points (precomposed ë, Å, ö) survive editors and normalisation.
 */
import type { Dataset } from '../store.js';

export const DEMO_DATASET: Dataset = {
  students: [
    {
      id_student: '1',
      fullName: "O'Brien & <Sons>",
      id_device: 'dev-001',
      ShowActive: '1',
      school_base_url: 'http://school-a.example',
    },
    {
      id_student: '2',
      fullName: 'Zo\u00eb \u00c5ngstr\u00f6m',
      id_device: 'dev-002',
      ShowActive: '1',
      school_base_url: 'http://school-a.example',
    },
    {
      id_student: '3',
      fullName: '\u0639\u0644\u064a',
      id_device: 'dev-003',
      ShowActive: '0',
      school_base_url: 'http://school-a.example',
    },
    // A null id_device (left out of answers) and empty strings (written as empty elements).
    {
      id_student: '10',
      fullName: 'Plain Name',
      id_device: null,
      ShowActive: '1',
      school_base_url: 'http://school-b.example',
    },
    { id_student: '11', fullName: '', id_device: '', ShowActive: '0', school_base_url: 'http://school-b.example' },
  ],
  devices: [
    { id: '1', token: 'tok-AAA-111' },
    { id: '2', token: 'tok-BBB-222' },
    { id: 'esc', token: 'a<b & c>"d" \'e\' \u00e9\u00e8 \u0639\u0644\u064a' },
    { id: 'empty', token: '' },
    { id: 'ws', token: '  padded  \r\n  text\t' },
  ],
};
