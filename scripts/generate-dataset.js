#!/usr/bin/env node
// Writes a large, deterministic dataset for measuring imports: DIR/dataset.json (both tables, the
// format `sis import` reads by default), DIR/students.csv and DIR/devices.csv. Streamed, so it can
// write millions of rows in little memory.
//
//   node scripts/generate-dataset.js [--students N] [--devices N] [--schools N] [--out DIR]
//
// Defaults: 1,000,000 students spread evenly over 100 schools (10,000 each:
// http://school-0000.example ... http://school-0099.example), 1,000,000 devices, DIR ./data/generated.
// Every 1000th student has a name with a comma, quotes and non-ASCII text; every 10th is inactive.
import { createWriteStream, mkdirSync } from 'node:fs';
import { once } from 'node:events';
import { join } from 'node:path';

const options = { students: 1_000_000, devices: 1_000_000, schools: 100, out: 'data/generated' };
const args = process.argv.slice(2);
for (let i = 0; i < args.length; i += 2) {
  const name = args[i]?.replace(/^--/, '');
  const value = args[i + 1];
  if (!(name in options) || value === undefined) {
    console.error(`usage: node scripts/generate-dataset.js [--students N] [--devices N] [--schools N] [--out DIR]`);
    process.exit(2);
  }
  options[name] = name === 'out' ? value : Number(value);
}
mkdirSync(options.out, { recursive: true });

const school = (i) => `http://school-${String(i % options.schools).padStart(4, '0')}.example`;
const student = (i) => ({
  id_student: `s${i}`,
  fullName: i % 1000 === 0 ? `O'Brien, "Zoë" ${i} \u00c5ngstr\u00f6m` : `Student ${i}`,
  id_device: i % 50 === 0 ? null : `d${i}`,
  ShowActive: i % 10 === 9 ? '0' : '1',
  school_base_url: school(i),
});
const device = (i) => ({ id: `d${i}`, token: `tok-${((i * 2654435761) >>> 0).toString(16).padStart(8, '0')}-${i}` });

const csvField = (v) => (v === null ? '\\N' : v === '\\N' || /[",\r\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v);
const csvLine = (values) => `${values.map(csvField).join(',')}\n`;

/** Writes the lines `make(i)` for i below `count`, 10,000 at a time, waiting when the file asks. */
async function write(stream, count, make) {
  for (let start = 0; start < count; start += 10_000) {
    let text = '';
    for (let i = start; i < Math.min(count, start + 10_000); i++) text += make(i);
    if (!stream.write(text)) await once(stream, 'drain');
  }
}

async function file(name, body) {
  const stream = createWriteStream(join(options.out, name));
  await body(stream);
  stream.end();
  await once(stream, 'finish');
  console.log(`wrote ${join(options.out, name)}`);
}

await file('dataset.json', async (s) => {
  s.write('{\n"students": [\n');
  await write(s, options.students, (i) => `${i > 0 ? ',\n' : ''}${JSON.stringify(student(i))}`);
  s.write('\n],\n"devices": [\n');
  await write(s, options.devices, (i) => `${i > 0 ? ',\n' : ''}${JSON.stringify(device(i))}`);
  s.write('\n]\n}\n');
});
await file('students.csv', async (s) => {
  s.write('id_student,fullName,id_device,ShowActive,school_base_url\n');
  await write(s, options.students, (i) => csvLine(Object.values(student(i))));
});
await file('devices.csv', async (s) => {
  s.write('id,token\n');
  await write(s, options.devices, (i) => csvLine(Object.values(device(i))));
});
