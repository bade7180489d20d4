/**
 * The `wsdl:types` section, in the order XmlSchemaExporter writes it: per operation the request
 * and response wrappers followed by the complex types first met there, then the global elements
 * the HTTP GET/POST bindings return (exported after all SOAP ones, each once).
 */
import { scalarOf } from '../contract/scalars.js';
import type { ScalarName } from '../contract/scalars.js';
import { isScalarResult } from '../contract/types.js';
import type { OperationSpec, ParamSpec, ResultSpec, StructSpec } from '../contract/types.js';
import { arrayTypeName, httpResultElementName, MS_TYPES_NS, ownTypesUsed } from './names.js';
import { el, type XmlElement } from './xml-document.js';

export function wsdlTypes(operations: readonly OperationSpec[], namespace: string): XmlElement {
  const ownTypes = ownTypesUsed(operations);
  const items: XmlElement[] = [];
  if (ownTypes.length > 0) items.push(el('s:import', { namespace: MS_TYPES_NS }));

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
    // A value type's root is never nil: XmlSchemaExporter writes `<s:element name="int" type="s:int" />`.
    const valueType = isScalarResult(op.result) && scalarOf(op.result.kind).valueType;
    items.push(el('s:element', valueType ? { name, type } : { name, nillable: 'true', type }));
  }

  const schemas = [el('s:schema', { elementFormDefault: 'qualified', targetNamespace: namespace }, items)];
  if (ownTypes.length > 0) {
    const simpleTypes = ownTypes.map((type) => {
      const { xsd, restricts = '' } = scalarOf(type);
      return el('s:simpleType', { name: xsd.slice(xsd.indexOf(':') + 1) }, [el('s:restriction', { base: restricts })]);
    });
    schemas.push(el('s:schema', { elementFormDefault: 'qualified', targetNamespace: MS_TYPES_NS }, simpleTypes));
  }
  return el('wsdl:types', {}, schemas);
}

/** An empty sequence is written as a bare `<s:complexType />`. */
function sequenceType(elements: readonly XmlElement[]): XmlElement {
  return elements.length === 0 ? el('s:complexType') : el('s:complexType', {}, [el('s:sequence', {}, elements)]);
}

function paramElement(param: ParamSpec): XmlElement {
  return scalarElement(param.name, param.type);
}

/** A value type is always present (minOccurs 1); a string may be left out. */
function scalarElement(name: string, type: ScalarName): XmlElement {
  const scalar = scalarOf(type);
  return el('s:element', { minOccurs: scalar.valueType ? '1' : '0', maxOccurs: '1', name, type: scalar.xsd });
}

function resultElement(opName: string, result: ResultSpec): XmlElement | null {
  if (isScalarResult(result)) return scalarElement(`${opName}Result`, result.kind);
  const type = resultType(result);
  return type === null ? null : el('s:element', { minOccurs: '0', maxOccurs: '1', name: `${opName}Result`, type });
}

function resultType(result: ResultSpec): string | null {
  switch (result.kind) {
    case 'void':
      return null;
    case 'list':
      return `tns:${arrayTypeName(result.item.name)}`;
    case 'struct':
      return `tns:${result.struct.name}`;
    default:
      return scalarOf(result.kind).xsd;
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
  return el('s:complexType', { name: struct.name }, [
    el(
      's:sequence',
      {},
      struct.fields.map((f) => scalarElement(f, 'string')),
    ),
  ]);
}
