/**
 * ASMX's words: every .NET message this service reproduces, in one frozen table, as .NET keeps them
 * in its resource tables. Each key is the resource's name in the assembly that holds it
 * (System.Web.Services, System.Web, System.Xml, mscorlib), so a text can be checked against .NET's;
 * the two entries at the end are ours, standing where .NET would have a message we cannot
 * reproduce. The bindings keep the shapes (docs/architecture.md, "One request").
 *
 * An entry .NET throws as an ArgumentException carries its `\r\nParameter name: x` line, as the
 * exception's Message does.
 */
export const AsmxText = Object.freeze({
  // System.Web.Services
  WebRequestUnableToProcess: () => 'Server was unable to process request.',
  WebRequestUnableToRead: () => 'Server was unable to read request.',
  WebMissingEnvelopeElement: () => 'Root element is not a SOAP Envelope.',
  WebMissingBodyElement: () => 'The SOAP Envelope has no Body element.',
  WebHttpHeader: (header: string, value: string) =>
    `Server did not recognize the value of HTTP Header ${header}: ${value}.`,
  UnableToHandleRequestActionRequired0: () =>
    'Unable to handle request without a valid action parameter. Please supply a valid soap action.',
  UnableToHandleRequestActionNotRecognized1: (action: string) =>
    `Unable to handle request. The action '${action}' was not recognized.`,
  WebCannotUnderstandHeader: (header: string) => `SOAP header ${header} was not understood.`,
  WebInvalidEnvelopeNamespace: (found: string, expected: string) =>
    `Possible SOAP version mismatch: Envelope namespace ${found} was unexpected. Expecting ${expected}.`,
  WebRequestContent: (found: string, expected: string) =>
    `Server found request content type to be '${found}', but expected '${expected}'.`,
  WebConfigExtensionError: () => 'There was an exception running the extensions specified in the config file.',
  WebMissingParameter: (name: string) => `Missing parameter: ${name}.`,
  WebInvalidRequestFormatDetails: (contentType: string) => `Request format is invalid: ${contentType}.`,
  WebInvalidMethodName: (name: string) => `${name} Web Service method name is not valid.`,
  WebInvalidMethodNameCase: (name: string, found: string) =>
    `Invalid method name '${name}',  method names are case sensitive.   The method name '${found}' with the same name but different casing was found.\r\nParameter name: methodName`,
  WebChangeTypeFailed: (value: string, type: string) => `Cannot convert ${value} to ${type}.\r\nParameter name: type`,
  WebUnrecognizedRequestFormat: () => 'Request format is unrecognized.',
  /** `pathInfo` is the path after `.asmx`, its `/` included. */
  WebUnrecognizedRequestFormatUrl: (pathInfo: string) =>
    `Request format is unrecognized for URL unexpectedly ending in '${pathInfo}'.`,

  // System.Web
  Max_request_length_exceeded: () => 'Maximum request length exceeded.',

  // System.Xml
  Xml_MissingRoot: () => 'Root element is missing.',
  Xml_InvalidRootData: () => 'Data at the root level is invalid.',
  Xml_DtdIsProhibitedEx: () =>
    'For security reasons DTD is prohibited in this XML document. To enable DTD processing set the DtdProcessing property on XmlReaderSettings to Parse and pass the settings to XmlReader.Create method.',
  Xml_InvalidCharInThisEncoding: () => 'Invalid character in the given encoding.',
  Xml_UnknownEncoding: (encoding: string) => `System does not support '${encoding}' encoding.`,
  /** Its second sentence: .NET's first names the node type ("Unexpected node type Element."). */
  Xml_UnexpectedNodeInSimpleContent: () =>
    'ReadElementString method can only be called on elements with simple or empty content.',
  /** An XmlException's message with the position it carries. */
  Xml_MessageWithErrorPosition: (message: string, line: number, position: number) =>
    `${message} Line ${line}, position ${position}.`,
  XmlSerializeErrorDetails: (line: number, position: number) =>
    `There is an error in XML document (${line}, ${position}).`,
  XmlConvert_BadFormat: (value: string, type: string) => `The string '${value}' is not a valid ${type} value.`,

  // mscorlib
  Format_InvalidString: () => 'Input string was not in a correct format.',
  Format_NeedSingleChar: () => 'String must be exactly one character long.',
  Format_BadBoolean: () => 'String was not recognized as a valid Boolean.',
  Format_BadDateTime: () => 'String was not recognized as a valid DateTime.',
  Overflow_UInt16: () => 'Value was either too large or too small for a UInt16.',
  Overflow_Int32: () => 'Value was either too large or too small for an Int32.',
  Overflow_Int64: () => 'Value was either too large or too small for an Int64.',
  Overflow_Decimal: () => 'Value was either too large or too small for a Decimal.',
  Overflow_Double: () => 'Value was either too large or too small for a Double.',

  // Ours, no .NET resource: what we say where .NET's text is not ours to give.
  /** A failure that is not the operation's (no cause is shown to the caller). */
  InternalError: () => 'An internal error occurred.',
  /** A reader error in the XML parser's own words, where .NET's XmlException would have its own. */
  XmlNotWellFormed: (reason: string) => `The XML is not well-formed: ${reason}`,
});

/**
 * An exception chain as ASMX shows it to a remote caller: the messages, outermost first, joined
 * with ` ---> ` (ServerProtocol.GenerateFaultString with custom errors on).
 */
export function chain(...messages: readonly string[]): string {
  return messages.join(' ---> ');
}
