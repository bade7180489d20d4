/**
 * The `wsdl:types` section, in the order XmlSchemaExporter writes it: per operation the request
 * and response wrappers followed by the complex types first met there, then the global elements
 * the HTTP GET/POST bindings return (exported after all SOAP ones, each once).
 */
import type { OperationSpec, ParamSpec, ResultSpec, StructSpec } from '../contract/types.js';
import { arrayTypeName, httpResultElementName, MS_TYPES_NS, usesChar } from './names.js';
import { el, type XmlElement } from './xml-tree.js';

export function wsdlTypes(operations: readonly OperationSpec[], namespace: string): XmlElement {
  const hasChar = usesChar(operations);
  const items: XmlElement[] = [];
  if (hasChar) items.push(el('s:import', { namespace: MS_TYPES_NS }));

  const definedTypes = new Set<string>();
  for (const op of operations) {
    items.push(el('s:element', { name: op.name }, [sequenceType(op.params.map(paramElement))]));
    const result = resultElement(op.name, op.result);
    items.push(el('s:element', { name: `${op.name}Response` }, [sequenceType(result ? [result] : [])]));
    items.push(...complexTypesOf(op.result, definedTypes));
  }

  // The nillable global elements the HTTP bindings' `Body` parts refer to.
  const globals = new Set<string>();
  for (const op of operations) {
    const name = httpResultElementName(op.result);
    const type = resultType(op.result);
    if (name === null || type === null || globals.has(name)) continue;
    globals.add(name);
    items.push(el('s:element', { name, nillable: 'true', type }));
  }

  const schemas = [el('s:schema', { elementFormDefault: 'qualified', targetNamespace: namespace }, items)];
  if (hasChar) {
    schemas.push(
      el('s:schema', { elementFormDefault: 'qualified', targetNamespace: MS_TYPES_NS }, [
        el('s:simpleType', { name: 'char' }, [el('s:restriction', { base: 's:unsignedShort' })]),
      ]),
    );
  }
  return el('wsdl:types', {}, schemas);
}

/** An empty sequence is written as a bare `<s:complexType />`. */
function sequenceType(elements: readonly XmlElement[]): XmlElement {
  return elements.length === 0 ? el('s:complexType') : el('s:complexType', {}, [el('s:sequence', {}, elements)]);
}

function paramElement(param: ParamSpec): XmlElement {
  // A char is a value type: always present, so minOccurs 1.
  return param.type === 'char'
    ? el('s:element', { minOccurs: '1', maxOccurs: '1', name: param.name, type: 's1:char' })
    : stringElement(param.name);
}

function stringElement(name: string): XmlElement {
  return el('s:element', { minOccurs: '0', maxOccurs: '1', name, type: 's:string' });
}

function resultElement(opName: string, result: ResultSpec): XmlElement | null {
  const type = resultType(result);
  return type === null ? null : el('s:element', { minOccurs: '0', maxOccurs: '1', name: `${opName}Result`, type });
}

function resultType(result: ResultSpec): string | null {
  switch (result.kind) {
    case 'void':
      return null;
    case 'string':
      return 's:string';
    case 'list':
      return `tns:${arrayTypeName(result.item.name)}`;
    case 'struct':
      return `tns:${result.struct.name}`;
  }
}

/** The complex types a result needs that are not defined yet (recorded in `defined`). */
function complexTypesOf(result: ResultSpec, defined: Set<string>): XmlElement[] {
  const out: XmlElement[] = [];
  const struct = result.kind === 'list' ? result.item : result.kind === 'struct' ? result.struct : null;
  if (struct === null) return out;
  if (result.kind === 'list') {
    const arrayName = arrayTypeName(struct.name);
    if (!defined.has(arrayName)) {
      defined.add(arrayName);
      out.push(
        el('s:complexType', { name: arrayName }, [
          el('s:sequence', {}, [
            el('s:element', {
              minOccurs: '0',
              maxOccurs: 'unbounded',
              name: struct.name,
              nillable: 'true',
              type: `tns:${struct.name}`,
            }),
          ]),
        ]),
      );
    }
  }
  if (!defined.has(struct.name)) {
    defined.add(struct.name);
    out.push(structType(struct));
  }
  return out;
}

function structType(struct: StructSpec): XmlElement {
  return el('s:complexType', { name: struct.name }, [el('s:sequence', {}, struct.fields.map(stringElement))]);
}
