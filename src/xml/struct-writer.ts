import type { StructSpec, StructValue } from '../contract/types.js';
import { escapeText } from './escape.js';

/**
 * One struct as XmlSerializer writes it, in the two styles of result-writer.ts. Every tag is
 * built once per struct, so the work per item (a list has thousands) is the field values alone.
 */
export type StructWriter = (value: StructValue | null) => string;

interface FieldTags {
  readonly names: readonly string[];
  readonly open: readonly string[];
  readonly close: readonly string[];
  /** An empty string self-closes. */
  readonly empty: readonly string[];
}

function fieldTags(spec: StructSpec, before: string): FieldTags {
  return {
    names: spec.fields,
    open: spec.fields.map((f) => `${before}<${f}>`),
    close: spec.fields.map((f) => `</${f}>`),
    empty: spec.fields.map((f) => `${before}<${f} />`),
  };
}

/** The fields of a value; null or missing ones are left out. */
function fields(tags: FieldTags, value: StructValue): string {
  const { names, open, close, empty } = tags;
  let out = '';
  for (let i = 0; i < names.length; i++) {
    const v = value[names[i]!];
    if (v === null || v === undefined) continue;
    out += v === '' ? empty[i]! : open[i]! + escapeText(v) + close[i]!;
  }
  return out;
}

/** `<tag>fields</tag>` on one line (SOAP bodies); null is `xsi:nil`, no field self-closes. */
export function compactStructWriter(tag: string, spec: StructSpec): StructWriter {
  const tags = fieldTags(spec, '');
  const nil = `<${tag} xsi:nil="true" />`;
  const bare = `<${tag} />`;
  const open = `<${tag}>`;
  const close = `</${tag}>`;
  return (value) => {
    if (value === null) return nil;
    const inner = fields(tags, value);
    return inner === '' ? bare : open + inner + close;
  };
}

/**
 * A list item of an HTTP document: on its own line indented by two spaces, its fields by four.
 * Each item starts with its line break, so the caller writes items one after the other.
 */
export function indentedItemWriter(spec: StructSpec): StructWriter {
  const tags = fieldTags(spec, '\n    ');
  const nil = `\n  <${spec.name} xsi:nil="true" />`;
  const bare = `\n  <${spec.name} />`;
  const open = `\n  <${spec.name}>`;
  const close = `\n  </${spec.name}>`;
  return (value) => {
    if (value === null) return nil;
    const inner = fields(tags, value);
    return inner === '' ? bare : open + inner + close;
  };
}

/** The fields of an HTTP document's root struct, each on its own line indented by two spaces. */
export function indentedFieldsWriter(spec: StructSpec): (value: StructValue) => string {
  const tags = fieldTags(spec, '\n  ');
  return (value) => fields(tags, value);
}
