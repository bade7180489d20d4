/** The data the benchmark loads into every server: the load scenarios' and the growth check's. */

export interface Student {
  readonly id_student: string;
  readonly fullName: string | null;
  readonly id_device: string | null;
  readonly ShowActive: string | null;
  readonly school_base_url: string;
}

export interface Device {
  readonly id: string;
  readonly token: string | null;
}

export interface Dataset {
  readonly students: readonly Student[];
  readonly devices: readonly Device[];
}

export const TOKEN_ID = '1';
export const TOKEN = 'tok-AAA-111';
export const SMALL_SCHOOL = 'http://school-a.example';
export const BIG_SCHOOL = 'http://big.example';
export const growthSchool = (n: number): string => `http://growth-${n}.example`;

/** Students with the text an ASMX answer must escape, non-ASCII, and a field left out (null). */
export function makeStudents(tag: string, school: string, active: number, inactive: number): Student[] {
  const out: Student[] = [];
  for (let i = 1; i <= active + inactive; i++) {
    const n = String(i).padStart(6, '0');
    const fullName =
      i % 7 === 0
        ? `O'Brien & <Sons> ${n}`
        : i % 5 === 0
          ? `Zoë Ångström ${n}`
          : i % 11 === 0
            ? `علي ${n}`
            : `Student ${n}`;
    out.push({
      id_student: `${tag}-${n}`,
      fullName,
      id_device: i % 13 === 0 ? null : `dev-${tag}-${n}`,
      ShowActive: i <= active ? '1' : '0',
      school_base_url: school,
    });
  }
  return out;
}

const SMALL: readonly Student[] = [
  {
    id_student: '1',
    fullName: "O'Brien & <Sons>",
    id_device: 'dev-001',
    ShowActive: '1',
    school_base_url: SMALL_SCHOOL,
  },
  { id_student: '2', fullName: 'Zoë Ångström', id_device: 'dev-002', ShowActive: '1', school_base_url: SMALL_SCHOOL },
  { id_student: '3', fullName: 'علي', id_device: 'dev-003', ShowActive: '0', school_base_url: SMALL_SCHOOL },
];

/** The dataset of the load scenarios: one token, a small school, a school of 1,000 active students. */
export function mainDataset(): Dataset {
  const devices: Device[] = [{ id: TOKEN_ID, token: TOKEN }];
  for (let i = 2; i <= 1000; i++) devices.push({ id: String(i), token: `tok-${i.toString(36).padStart(4, '0')}` });
  return { students: [...SMALL, ...makeStudents('big', BIG_SCHOOL, 1000, 100)], devices };
}

export const GROWTH_SIZES = [10_000, 100_000] as const;

export function growthDataset(sizes: readonly number[]): Dataset {
  return { students: sizes.flatMap((n) => makeStudents(`g${n}`, growthSchool(n), n, 0)), devices: [] };
}

export function activeStudents(dataset: Dataset, school: string): Student[] {
  return dataset.students.filter((s) => s.school_base_url === school && s.ShowActive === '1');
}
