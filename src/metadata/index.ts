/** The service's metadata documents, all derived from the operation contract. */
export { renderDisco } from './disco.js';
export { renderOperationHelp, renderServiceHelp, type HelpPageOptions } from './help-page.js';
export { soapAction } from './names.js';
export { renderWsdl } from './wsdl.js';
