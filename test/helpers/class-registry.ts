/**
 * A service file the contract does not have, for tests only: `ClassRegistry.asmx`. Its operations
 * take the shapes the readers and writers handle (a string and a char in, a list of a struct out
 * with a null field, an empty one and a nil item; a struct; a string; void, and writing; an int in
 * and out; a boolean in and out).
 * Given to the app beside the contract's operations, with no other edit, they are routed over the
 * four bindings, described by the WSDL, disco and help pages, and counted by the metrics: adding an
 * operation is one entry.
 */
import assert from 'node:assert/strict';
import { defineOperation } from '../../src/contract/define.js';
import type { StructSpec, StructValue } from '../../src/contract/types.js';
import type { OperationContext } from '../../src/operations/context.js';
import type { Operation } from '../../src/operations/index.js';
import type { BindingCases } from './binding-loop.js';

export const CLASS_REGISTRY = 'ClassRegistry';

export const ClassInfo = { name: 'ClassInfo', fields: ['id', 'title', 'teacher'] } as const satisfies StructSpec;

/** The registry's data, held here: these operations need nothing of the store (a wire-only addition). */
const CLASSES: readonly { readonly school: string; readonly grade: string; readonly info: StructValue | null }[] = [
  { school: 'http://a.example', grade: '7', info: { id: '7A', title: 'Sciences & <Arts>', teacher: "O'Brien" } },
  { school: 'http://a.example', grade: '8', info: { id: '8A', title: 'علي', teacher: 'Zoë 😀' } },
  { school: 'http://a.example', grade: '7', info: { id: '7B', title: '', teacher: null } },
  // A nil item, as a .NET list may hold one.
  { school: 'http://a.example', grade: '7', info: null },
];

/** The classes ArchiveClass was given: a void operation shows it ran only by what it did. */
export const archived: string[] = [];

/** A string and a char in, a list of a struct out. */
export const ListClasses = defineOperation({
  service: CLASS_REGISTRY,
  name: 'ListClasses',
  doc: 'Lists the classes of a school in one grade.',
  params: [
    { name: 'school_base_url', type: 'string', doc: 'the base URL that identifies the school' },
    { name: 'grade', type: 'char', doc: 'the grade, one character' },
  ],
  result: { kind: 'list', item: ClassInfo },
  async run(args) {
    const grade = String.fromCharCode(args.grade);
    return CLASSES.filter((c) => c.school === args.school_base_url && c.grade === grade).map((c) => c.info);
  },
});

const byId = (id: string | null): StructValue | undefined =>
  CLASSES.find((c) => c.info !== null && c.info['id'] === id)?.info ?? undefined;

export const GetClassInfo = defineOperation({
  service: CLASS_REGISTRY,
  name: 'GetClassInfo',
  doc: 'One class, or null.',
  params: [{ name: 'class_id', type: 'string', doc: 'the class' }],
  result: { kind: 'struct', struct: ClassInfo },
  async run(args) {
    return byId(args.class_id) ?? null;
  },
});

export const GetClassTitle = defineOperation({
  service: CLASS_REGISTRY,
  name: 'GetClassTitle',
  doc: "A class's title, or null.",
  params: [{ name: 'class_id', type: 'string', doc: 'the class' }],
  result: { kind: 'string' },
  async run(args) {
    return byId(args.class_id)?.['title'] ?? null;
  },
});

/** A write: beside the legacy service it is never sent twice, from this flag alone. */
export const ArchiveClass = defineOperation({
  service: CLASS_REGISTRY,
  name: 'ArchiveClass',
  doc: 'Archives a class; answers nothing.',
  params: [{ name: 'class_id', type: 'string', doc: 'the class' }],
  result: { kind: 'void' },
  writes: true,
  async run(args) {
    if (args.class_id !== null) archived.push(args.class_id);
  },
});

/**
 * A write that forgets `ctx.dryRun` (on purpose): it stores a code and queues its SMS whatever it
 * is told. Not among `classRegistry`: served only where a test adds it, to prove that beside the
 * legacy service such an operation fails in the dry run instead of writing.
 */
export const EnrolPhone = defineOperation({
  service: CLASS_REGISTRY,
  name: 'EnrolPhone',
  doc: "Enrols a parent's phone for a class's messages; answers nothing.",
  params: [
    { name: 'class_id', type: 'string', doc: 'the class' },
    { name: 'phone', type: 'string', doc: "the parent's phone", personal: 'phone' },
  ],
  result: { kind: 'void' },
  writes: true,
  async run(args, ctx: OperationContext) {
    await ctx.store.acceptAuthCode({
      code: args.class_id ?? '',
      phone: args.phone ?? '',
      at: ctx.now(),
      message: `enrolled in ${args.class_id ?? ''}`,
      maxPerHour: 100,
    });
  },
});

/** An int out, from an int in: what the table of simple types (src/contract/scalars.ts) gives every binding. */
export const CountClasses = defineOperation({
  service: CLASS_REGISTRY,
  name: 'CountClasses',
  doc: 'Counts the classes of a school from a grade up.',
  params: [
    { name: 'school_base_url', type: 'string', doc: 'the base URL that identifies the school' },
    { name: 'from_grade', type: 'int', doc: 'the lowest grade counted' },
  ],
  result: { kind: 'int' },
  async run(args) {
    return CLASSES.filter((c) => c.school === args.school_base_url && Number(c.grade) >= args.from_grade).length;
  },
});

/** A boolean out, from a boolean in. */
export const HasClass = defineOperation({
  service: CLASS_REGISTRY,
  name: 'HasClass',
  doc: 'Whether a class exists (and has a teacher, when asked).',
  params: [
    { name: 'class_id', type: 'string', doc: 'the class' },
    { name: 'with_teacher', type: 'boolean', doc: 'count only a class with a teacher' },
  ],
  result: { kind: 'boolean' },
  async run(args) {
    const info = byId(args.class_id);
    return info !== undefined && (!args.with_teacher || typeof info['teacher'] === 'string');
  },
});

/**
 * ClassRegistry's operations, in the order its WSDL and help page list them: the struct before the
 * list of it, so the WSDL shows a type written once where first met.
 */
export const classRegistry: readonly Operation[] = [
  GetClassInfo,
  ListClasses,
  GetClassTitle,
  ArchiveClass,
  CountClasses,
  HasClass,
];

/** What every binding must read back from ClassRegistry (the binding loop's cases). */
export const CLASS_REGISTRY_CASES: BindingCases = {
  ListClasses: [
    {
      title: 'lists the classes of a grade, a null field left out, an empty one kept, a nil item kept',
      args: { school_base_url: 'http://a.example', grade: '7' },
      expected: [{ id: '7A', title: 'Sciences & <Arts>', teacher: "O'Brien" }, { id: '7B', title: '' }, null],
    },
    {
      title: 'reads the char as its character',
      args: { school_base_url: 'http://a.example', grade: '8' },
      expected: [{ id: '8A', title: 'علي', teacher: 'Zoë 😀' }],
    },
    { title: 'answers the empty list', args: { school_base_url: 'http://nowhere.example', grade: '7' }, expected: [] },
  ],
  GetClassInfo: [
    { title: 'answers the struct', args: { class_id: '8A' }, expected: { id: '8A', title: 'علي', teacher: 'Zoë 😀' } },
    { title: 'answers null for an unknown class', args: { class_id: 'nope' }, expected: null },
  ],
  GetClassTitle: [
    { title: 'answers the string', args: { class_id: '7A' }, expected: 'Sciences & <Arts>' },
    { title: 'answers null for an unknown class', args: { class_id: 'nope' }, expected: null },
  ],
  ArchiveClass: [
    {
      title: 'runs once with its argument and answers void',
      args: (binding) => ({ class_id: `7A-${binding}` }),
      expected: undefined,
      check: ({ binding }) =>
        assert.deepEqual(
          archived.filter((id) => id === `7A-${binding}`),
          [`7A-${binding}`],
        ),
    },
  ],
  CountClasses: [
    { title: 'answers an int', args: { school_base_url: 'http://a.example', from_grade: '8' }, expected: 1 },
    { title: 'reads a signed int', args: { school_base_url: 'http://a.example', from_grade: '-1' }, expected: 4 },
    { title: 'answers 0', args: { school_base_url: 'http://nowhere.example', from_grade: '0' }, expected: 0 },
  ],
  HasClass: [
    { title: 'answers true', args: { class_id: '7A', with_teacher: 'true' }, expected: true },
    {
      title: 'answers false for a class without a teacher',
      args: { class_id: '7B', with_teacher: 'true' },
      expected: false,
    },
    { title: 'reads false', args: { class_id: '7B', with_teacher: 'false' }, expected: true },
    { title: 'answers false for an unknown class', args: { class_id: 'nope', with_teacher: 'false' }, expected: false },
  ],
};
