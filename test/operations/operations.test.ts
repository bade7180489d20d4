/** Every operation of the contract over every binding, served as `npm start` serves them. */
import { operations } from '../../src/operations/index.js';
import { operationsOverEveryBinding } from '../helpers/binding-loop.js';
import { CONTRACT_CASES, CONTRACT_DATASET } from '../helpers/contract-cases.js';

operationsOverEveryBinding('the contract', {
  operations,
  cases: CONTRACT_CASES,
  dataset: CONTRACT_DATASET,
  serve: 'contract',
});
